import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { FakeClock } from '@app/clock/testing';
import { silentLogger } from '@app/observability';
import { SyncLoopMonitor, syncLoopHealthThreshold } from './sync-loop-monitor.js';
import { MemorySyncLoopMonitorStore } from './testing.js';

describe('syncLoopHealthThreshold', () => {
  for (const tc of [
    { name: 'the default resync (1m): the 5m floor', resyncMs: 60_000, want: 300_000 },
    { name: 'a long resync (10m): twice it', resyncMs: 600_000, want: 1_200_000 },
  ]) {
    it(tc.name, () => assert.equal(syncLoopHealthThreshold(tc.resyncMs), tc.want));
  }
});

describe('SyncLoopMonitor', () => {
  const make = (thresholdMs = 300_000) => {
    const clock = new FakeClock(1_000_000);
    const store = new MemorySyncLoopMonitorStore();
    const monitor = new SyncLoopMonitor({ store, clock, logger: silentLogger(), healthThresholdMs: thresholdMs, writer: 'sync-loop@n#0' });
    return { clock, store, monitor };
  };

  it('the first entry is written at once, with the threshold and the writer', async () => {
    const { store, monitor } = make();
    await monitor.entered();
    assert.deepEqual(store.records, [{ latestLoopEntryTime: 1_000_000, healthThresholdMs: 300_000, writer: 'sync-loop@n#0' }]);
  });

  it('entries are written at most every 10 s (a quarter of a short threshold), each time the latest kept', async () => {
    for (const tc of [
      { thresholdMs: 300_000, period: 10_000 },
      { thresholdMs: 4000, period: 1000 },
    ]) {
      const { clock, store, monitor } = make(tc.thresholdMs);
      for (let i = 0; i < 25; i++) {
        await monitor.entered();
        await clock.step(tc.period / 5);
      }
      // 25 entries a fifth of the period apart: written at 0, 1, 2, 3 and 4 periods.
      assert.deepEqual(store.records.map((r) => r.latestLoopEntryTime - 1_000_000), [0, 1, 2, 3, 4].map((k) => k * tc.period));
      assert.equal(monitor.latestLoopEntryTime, 1_000_000 + (24 * tc.period) / 5);
    }
  });

  it('a failed write is tried again at the next entry, not a period later', async () => {
    const { clock, store, monitor } = make();
    store.fail = true;
    await monitor.entered();
    store.fail = false;
    await clock.step(1000);
    await monitor.entered();
    assert.deepEqual(store.records.map((r) => r.latestLoopEntryTime), [1_001_000]);
  });

  it('a new term writes at its first entry', async () => {
    const { clock, store, monitor } = make();
    await monitor.entered();
    await clock.step(1000);
    monitor.startTerm();
    await monitor.entered();
    assert.equal(store.records.length, 2);
  });
});
