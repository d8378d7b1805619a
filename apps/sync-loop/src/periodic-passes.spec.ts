import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { FakeClock } from '@app/clock/testing';
import type { PodRecord } from '@app/contracts';
import { silentLogger } from '@app/observability';
import { PeriodicPasses, type PassPeriods, type PeriodicPassesDeps } from './periodic-passes.js';
import { SyncLoopRunner } from './sync-loop-runner.js';
import type { SyncLoop } from './sync-loop.js';

const PERIODS: PassPeriods = { syncTickMs: 1000, housekeepingMs: 2000, containerGcMs: 60_000, imageGcMs: 300_000, sourcesResyncMs: 30_000, evictionMs: 10_000 };

/** Each pass's runs, by the fake clock's time since the term began. */
function setup(opts: { imageGC?: boolean; contentToRemove?: string[] } = {}) {
  const clock = new FakeClock(0);
  const runner = new SyncLoopRunner({} as SyncLoop, clock, silentLogger());
  const runs = new Map<string, number[]>();
  const ran = (what: string) => void runs.set(what, [...(runs.get(what) ?? []), clock.now()]);
  const orphanMetrics: [number, number][] = [];
  const desired: ReadonlyMap<string, PodRecord> = new Map();
  const deps: PeriodicPassesDeps = {
    runner,
    loop: {
      syncTick: () => Promise.resolve((ran('syncCh'), [])),
      housekeeping: () => Promise.resolve((ran('housekeepingCh'), { contentToRemove: opts.contentToRemove ?? [] })),
      reconcileWithSources: () => Promise.resolve((ran('reconcileWithSources'), true)),
      desiredPods: desired,
      areSourcesReady: true,
    },
    containerGC: { garbageCollect: (pods) => (assert.equal(pods, desired), ran('containerGC'), Promise.resolve({ removeContainers: [], removeSandboxes: [], removeLogDirectories: [] })) },
    imageGC: { enabled: opts.imageGC !== false, startTerm: () => ran('imageGC.startTerm'), garbageCollect: () => Promise.resolve((ran('imageGC'), true)) },
    orphans: { cleanup: () => Promise.resolve((ran('cleanupOrphanedPods'), { removedDirectories: ['a', 'b'], destroyedCgroups: [], refused: [], failedDirectories: ['c'] })) },
    eviction: { observe: () => Promise.resolve(undefined), synchronize: () => Promise.resolve((ran('eviction'), undefined)) },
    containerLogs: { start: () => ran('containerLogs.start') },
    metrics: { orphanedPodDirsCleaned: (cleaned, errors) => void orphanMetrics.push([cleaned, errors]) },
    periods: PERIODS,
  };
  return { clock, runner, runs, orphanMetrics, passes: new PeriodicPasses(deps) };
}

describe('PeriodicPasses: the sync loop\'s periodic passes of a term (Kubelet.Run, syncLoop\'s tickers)', () => {
  it('each pass runs on its period after the previous run; the listings and an image GC also at once; the log manager starts', async () => {
    const { clock, runner, runs, orphanMetrics, passes } = setup();
    runner.activate();
    passes.startTerm();
    await clock.step(60_000);
    assert.deepEqual(runs.get('reconcileWithSources'), [0, 30_000, 60_000], 'at once, then every 30 s');
    assert.deepEqual(runs.get('imageGC.startTerm'), [0]);
    assert.deepEqual(runs.get('imageGC'), [0], 'at once; the next in 5 min');
    assert.deepEqual(runs.get('containerLogs.start'), [0]);
    assert.equal(runs.get('syncCh')?.length, 60, 'every second');
    assert.deepEqual(runs.get('syncCh')?.slice(0, 3), [1000, 2000, 3000]);
    assert.equal(runs.get('housekeepingCh')?.length, 30, 'every 2 s');
    assert.equal(runs.get('cleanupOrphanedPods')?.length, 30, 'on the housekeeping period');
    assert.deepEqual(runs.get('containerGC'), [60_000], 'every minute');
    assert.deepEqual(runs.get('eviction'), undefined, 'no summary observed: no eviction pass');
    assert.deepEqual(orphanMetrics[0], [3, 1], 'the orphan gauges: removed and failed directories, and the failed ones');
    await runner.stop();
  });

  it('a housekeeping pass that finds a deleted pod\'s content left runs the container GC at once', async () => {
    const { clock, runner, runs, passes } = setup({ imageGC: false, contentToRemove: ['gone'] });
    runner.activate();
    passes.startTerm();
    await clock.step(4000);
    assert.deepEqual(runs.get('containerGC'), [2000, 4000], 'after each housekeeping pass that named one, not only every minute');
    await runner.stop();
  });

  it('the gated passes wait while the runtime or the PLEG is unhealthy; the listings do not', async () => {
    const { clock, runner, runs, passes } = setup({ imageGC: false });
    runner.activate();
    let unhealthy: string | undefined = 'PLEG is not healthy';
    runner.tickGate = () => unhealthy;
    passes.startTerm();
    await clock.step(30_000);
    for (const gated of ['syncCh', 'housekeepingCh', 'cleanupOrphanedPods', 'containerGC', 'imageGC']) assert.equal(runs.get(gated), undefined, `${gated} waits`);
    assert.deepEqual(runs.get('reconcileWithSources'), [0, 30_000]);
    unhealthy = undefined;
    await clock.step(6000);
    assert.ok((runs.get('syncCh')?.length ?? 0) >= 1, 'syncCh runs once healthy');
    assert.equal(runs.get('imageGC.startTerm'), undefined, 'image GC off: no image pass at all');
    await runner.stop();
  });

  it('a term that ended runs none of its passes again, and a new term has its own, once each', async () => {
    const { clock, runner, runs, passes } = setup({ imageGC: false });
    runner.activate();
    passes.startTerm();
    await clock.step(3000);
    runner.deactivate();
    const before = runs.get('syncCh')?.length ?? 0;
    await clock.step(10_000);
    assert.equal(runs.get('syncCh')?.length, before, 'no tick after the term ended');
    runner.activate();
    passes.startTerm();
    await clock.step(5000);
    assert.equal((runs.get('syncCh')?.length ?? 0) - before, 5, 'the new term ticks every second, not twice');
    await runner.stop();
  });
});
