import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { kubeletHealthzChecks, runHealthz, syncLoopHealthCheck } from './healthz.js';
import { FakeSyncLoopMonitorReader } from './testing.js';

const NOW = 1_000_000_000;
const FIVE_MIN = 5 * 60_000;

describe('syncLoopHealthCheck (kubelet.go SyncLoopHealthCheck)', () => {
  const cases = [
    { name: 'no sync loop ever entered: healthy (the loop has not started)', record: undefined, failing: false },
    { name: 'entered a second ago', record: { latestLoopEntryTime: NOW - 1000, healthThresholdMs: FIVE_MIN }, failing: false },
    { name: 'entered exactly a threshold ago', record: { latestLoopEntryTime: NOW - FIVE_MIN, healthThresholdMs: FIVE_MIN }, failing: false },
    { name: 'entered longer ago than the threshold', record: { latestLoopEntryTime: NOW - FIVE_MIN - 1, healthThresholdMs: FIVE_MIN }, failing: true },
    { name: "a short threshold the loop wrote (SYNC_LOOP_HEALTH_THRESHOLD)", record: { latestLoopEntryTime: NOW - 4000, healthThresholdMs: 3000 }, failing: true },
  ];
  for (const tc of cases) {
    it(tc.name, () => {
      const why = syncLoopHealthCheck(tc.record, NOW);
      assert.equal(why !== undefined, tc.failing, why);
      if (why) assert.match(why, /^sync Loop took longer than expected/);
    });
  }
});

describe('runHealthz: healthz.handleRootHealth with the kubelet server\'s checks', () => {
  const monitor = new FakeSyncLoopMonitorReader();
  const checks = kubeletHealthzChecks(monitor, () => NOW);

  it('all pass: 200 "ok"; verbose lists each', async () => {
    monitor.record = { latestLoopEntryTime: NOW - 1000, healthThresholdMs: FIVE_MIN };
    assert.deepEqual(await runHealthz(checks, false), { status: 200, body: 'ok', failures: [] });
    assert.equal((await runHealthz(checks, true)).body, '[+]ping ok\n[+]log ok\n[+]syncloop ok\nhealthz check passed\n');
  });

  it('a stale sync loop: 500, the syncloop check failed, the reason withheld from the body', async () => {
    monitor.record = { latestLoopEntryTime: NOW - 10 * 60_000, healthThresholdMs: FIVE_MIN };
    const r = await runHealthz(checks, false);
    assert.equal(r.status, 500);
    assert.equal(r.body, '[+]ping ok\n[+]log ok\n[-]syncloop failed: reason withheld\nhealthz check failed\n');
    assert.deepEqual(r.failures.map((f) => f.name), ['syncloop']);
  });

  it('the monitor cannot be read: the syncloop check fails and says why in the failures', async () => {
    monitor.failing = new Error('timeout');
    const r = await runHealthz(checks, false);
    monitor.failing = undefined;
    assert.equal(r.status, 500);
    assert.match(r.failures[0]?.reason ?? '', /cannot be read: timeout/);
  });
});
