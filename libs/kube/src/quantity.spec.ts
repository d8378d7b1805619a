import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { QuantityError, cpuMillis, memoryBytes, parseQuantity, parseQuantityNanos } from './quantity.js';

describe('parseQuantity', () => {
  const cases: { name: string; input: string; want: number }[] = [
    { name: 'plain integer', input: '2', want: 2 },
    { name: 'zero', input: '0', want: 0 },
    { name: 'decimal', input: '1.5', want: 1.5 },
    { name: 'leading dot', input: '.5', want: 0.5 },
    { name: 'trailing dot', input: '5.', want: 5 },
    { name: 'leading zeros', input: '007', want: 7 },
    { name: 'explicit plus sign', input: '+3', want: 3 },
    { name: 'negative', input: '-2.5', want: -2.5 },
    { name: 'milli', input: '100m', want: 0.1 },
    { name: 'micro', input: '250u', want: 0.00025 },
    { name: 'nano', input: '5n', want: 5e-9 },
    { name: 'kilo (decimal)', input: '2k', want: 2000 },
    { name: 'mega (decimal)', input: '3M', want: 3_000_000 },
    { name: 'giga (decimal)', input: '1G', want: 1_000_000_000 },
    { name: 'tera', input: '1T', want: 1e12 },
    { name: 'peta', input: '1P', want: 1e15 },
    { name: 'exa: a bare E is the SI suffix', input: '1E', want: 1e18 },
    { name: 'kibi', input: '1Ki', want: 1024 },
    { name: 'mebi', input: '64Mi', want: 67_108_864 },
    { name: 'gibi with a fraction', input: '1.5Gi', want: 1_610_612_736 },
    { name: 'tebi', input: '1Ti', want: 2 ** 40 },
    { name: 'pebi', input: '1Pi', want: 2 ** 50 },
    { name: 'exbi', input: '1Ei', want: 2 ** 60 },
    { name: 'binary values cap at 2^63-1', input: '9Ei', want: 2 ** 63 - 1 },
    { name: 'lower-case exponent', input: '1e3', want: 1000 },
    { name: 'upper-case exponent', input: '1E3', want: 1000 },
    { name: 'large exponent', input: '129e6', want: 129_000_000 },
    { name: 'negative exponent', input: '5e-3', want: 0.005 },
    { name: 'signed positive exponent', input: '2e+2', want: 200 },
    { name: 'finer than a nano rounds up to 1n', input: '0.1n', want: 1e-9 },
    { name: 'far finer than a nano still rounds up to 1n', input: '1e-30', want: 1e-9 },
  ];
  for (const tc of cases) {
    it(tc.name, () => assert.equal(parseQuantity(tc.input), tc.want));
  }
});

describe('parseQuantity rejects what is not a quantity', () => {
  const cases: { name: string; input: string; message: string }[] = [
    { name: 'unknown suffix', input: '12MB', message: '"12MB" is not a valid quantity' },
    { name: 'empty', input: '', message: '"" is not a valid quantity (no digits)' },
    { name: 'lower-case k binary', input: '1ki', message: '"1ki" is not a valid quantity' },
    { name: 'upper-case K decimal', input: '1K', message: '"1K" is not a valid quantity' },
    { name: 'exponent without digits', input: '1e', message: '"1e" is not a valid quantity' },
    { name: 'whitespace', input: ' 1', message: '" 1" is not a valid quantity' },
    { name: 'two dots', input: '1.2.3', message: '"1.2.3" is not a valid quantity' },
    { name: 'words', input: 'lots', message: '"lots" is not a valid quantity' },
    { name: 'a sign alone', input: '-', message: '"-" is not a valid quantity (no digits)' },
    { name: 'a dot alone', input: '.', message: '"." is not a valid quantity (no digits)' },
    { name: 'suffix without a number', input: 'Mi', message: '"Mi" is not a valid quantity (no digits)' },
    { name: 'too large for a number', input: '1e400', message: '"1e400" is not a valid quantity (out of range)' },
  ];
  for (const tc of cases) {
    it(tc.name, () => {
      assert.throws(() => parseQuantity(tc.input), (err: unknown) => {
        assert.ok(err instanceof QuantityError);
        assert.equal(err.name, 'QuantityError');
        assert.equal(err.message, tc.message);
        assert.equal(err.quantity, tc.input);
        return true;
      });
    });
  }

  it('takes a bare number, as a YAML `cpu: 1` arrives', () => {
    assert.equal(parseQuantity(2 as unknown as string), 2);
  });
});

describe('parseQuantityNanos', () => {
  const cases: { name: string; input: string; want: bigint }[] = [
    { name: 'is exact where a float is not', input: '0.3', want: 300_000_000n },
    { name: 'holds values past 2^53 exactly', input: '7Ei', want: 7n * 2n ** 60n * 1_000_000_000n },
    { name: 'rounds a negative away from zero', input: '-0.1n', want: -1n },
    { name: 'zero with a suffix', input: '0Mi', want: 0n },
    { name: 'caps binary values at 2^63-1 exactly', input: '9Ei', want: (2n ** 63n - 1n) * 1_000_000_000n },
    { name: 'does not cap decimal values', input: '10E', want: 10n ** 28n },
  ];
  for (const tc of cases) {
    it(tc.name, () => assert.equal(parseQuantityNanos(tc.input), tc.want));
  }
});

describe('cpuMillis (Quantity.MilliValue)', () => {
  const cases: { name: string; input: string; want: number }[] = [
    { name: 'millicores', input: '100m', want: 100 },
    { name: 'whole cores', input: '2', want: 2000 },
    { name: 'fractional cores', input: '1.5', want: 1500 },
    { name: 'half a core', input: '0.5', want: 500 },
    { name: 'sub-millicore rounds up', input: '0.1m', want: 1 },
    { name: 'nanocores round up', input: '1n', want: 1 },
    { name: 'fraction of a millicore rounds up', input: '1.0001', want: 1001 },
    { name: 'exponent', input: '1e3', want: 1_000_000 },
    { name: 'zero', input: '0', want: 0 },
  ];
  for (const tc of cases) {
    it(tc.name, () => assert.equal(cpuMillis(tc.input), tc.want));
  }

  it('throws on bad input', () => assert.throws(() => cpuMillis('1 core'), QuantityError));
});

describe('memoryBytes (Quantity.Value)', () => {
  const cases: { name: string; input: string; want: number }[] = [
    { name: 'mebibytes', input: '64Mi', want: 67_108_864 },
    { name: 'gigabytes', input: '1G', want: 1_000_000_000 },
    { name: 'gibibytes', input: '2Gi', want: 2_147_483_648 },
    { name: 'plain bytes', input: '4096', want: 4096 },
    { name: 'exponent', input: '129e6', want: 129_000_000 },
    { name: 'half a byte rounds up', input: '0.5', want: 1 },
    { name: 'millibytes round up', input: '1500m', want: 2 },
    { name: 'fractional kibibytes', input: '0.5Ki', want: 512 },
  ];
  for (const tc of cases) {
    it(tc.name, () => assert.equal(memoryBytes(tc.input), tc.want));
  }

  it('throws on bad input', () => assert.throws(() => memoryBytes('12MB'), /"12MB" is not a valid quantity/));
});
