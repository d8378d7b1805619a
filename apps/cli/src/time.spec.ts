import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { formatAge } from './time.js';
import { D, H, MIN, S } from './testing.js';

describe('formatAge (duration.HumanDuration)', () => {
  const cases: [number, string][] = [
    [-2 * S, '<invalid>'],
    [-1500, '0s'],
    [0, '0s'],
    [999, '0s'],
    [5 * S, '5s'],
    [119 * S, '119s'],
    [120 * S, '2m'],
    [200 * S, '3m20s'],
    [9 * MIN + 59 * S, '9m59s'],
    [10 * MIN + 30 * S, '10m'],
    [179 * MIN, '179m'],
    [3 * H, '3h'],
    [5 * H + 30 * MIN, '5h30m'],
    [7 * H + 59 * MIN, '7h59m'],
    [8 * H + 30 * MIN, '8h'],
    [47 * H, '47h'],
    [48 * H, '2d'],
    [51 * H, '2d3h'],
    [7 * D + 23 * H, '7d23h'],
    [8 * D, '8d'],
    [45 * D, '45d'],
    [729 * D, '729d'],
    [730 * D, '2y'],
    [760 * D, '2y30d'],
    [9 * 365 * D, '9y'],
  ];
  for (const [ms, want] of cases) {
    it(`${ms}ms is ${want}`, () => assert.equal(formatAge(ms), want));
  }
});
