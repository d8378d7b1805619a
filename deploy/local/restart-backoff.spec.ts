import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { nextRestartDelay } from './restart-backoff.js';

describe('nextRestartDelay', () => {
  const cases: { name: string; runs: number[]; want: number[] }[] = [
    { name: 'doubles from 1 s while the process dies at once', runs: [100, 100, 100, 100], want: [1000, 2000, 4000, 8000] },
    { name: 'stops at 30 s', runs: [0, 0, 0, 0, 0, 0, 0, 0], want: [1000, 2000, 4000, 8000, 16_000, 30_000, 30_000, 30_000] },
    { name: 'back to 1 s after a run of 60 s (2 * the maximum)', runs: [0, 0, 0, 60_000, 0], want: [1000, 2000, 4000, 1000, 2000] },
    { name: 'a run just under 60 s still counts as crash looping', runs: [0, 0, 59_999], want: [1000, 2000, 4000] },
  ];
  for (const tc of cases) {
    it(tc.name, () => {
      const state = { restarts: 0 };
      assert.deepEqual(
        tc.runs.map((ran) => nextRestartDelay(state, ran)),
        tc.want,
      );
    });
  }
});
