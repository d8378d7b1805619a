import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { parseColonSeparatedMapStringString, parseMapStringString } from './flags.js';

describe('parseMapStringString (--node-labels)', () => {
  const cases: { name: string; in: string | undefined; want: Record<string, string> }[] = [
    { name: 'unset', in: undefined, want: {} },
    { name: 'empty', in: '', want: {} },
    { name: 'pairs, trimmed', in: 'zone=a, disk = ssd ', want: { zone: 'a', disk: 'ssd' } },
    { name: 'the value keeps later separators', in: 'expr=a=b', want: { expr: 'a=b' } },
    { name: 'an empty value', in: 'flag=', want: { flag: '' } },
    { name: 'blank pairs are skipped', in: 'a=1,, ,b=2,', want: { a: '1', b: '2' } },
    { name: 'the last of a repeated key wins', in: 'a=1,a=2', want: { a: '2' } },
  ];
  for (const tc of cases) it(tc.name, () => assert.deepEqual(parseMapStringString(tc.in, 'NODE_LABELS'), tc.want));

  const bad: { name: string; in: string }[] = [
    { name: 'no separator', in: 'zone' },
    { name: 'no key', in: '=a' },
    { name: 'a blank key', in: ' =a' },
  ];
  for (const tc of bad) {
    it(`throws on ${tc.name}, naming the setting`, () => {
      assert.throws(() => parseMapStringString(`ok=1,${tc.in}`, 'NODE_LABELS'), new RegExp(`^Error: NODE_LABELS: "${tc.in.trim()}" is not a key=value pair$`));
    });
  }
});

describe('parseColonSeparatedMapStringString (--manifest-url-header)', () => {
  const cases: { name: string; in: string | undefined; want: Record<string, string> }[] = [
    { name: 'unset', in: undefined, want: {} },
    { name: 'pairs, trimmed; the value keeps later colons', in: 'A:1, B: two:three', want: { A: '1', B: 'two:three' } },
    { name: 'blank pairs are skipped', in: 'A:1,,B:2', want: { A: '1', B: '2' } },
  ];
  for (const tc of cases) it(tc.name, () => assert.deepEqual(parseColonSeparatedMapStringString(tc.in, 'MANIFEST_URL_HEADER'), tc.want));

  it('throws on a pair without a colon, naming the setting', () => {
    assert.throws(() => parseColonSeparatedMapStringString('nocolon', 'MANIFEST_URL_HEADER'), /^Error: MANIFEST_URL_HEADER: "nocolon" is not a Name:value pair$/);
  });
});
