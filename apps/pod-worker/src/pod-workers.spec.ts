import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { FakeClock } from '@app/clock/testing';
import { MessageTypes, type KillPodOptions, type Pod, type PodSyncStatusRecord, type SyncPodType, type UpdatePodOptionsMessage } from '@app/contracts';
import { silentLogger } from '@app/observability';
import { MemoryPodCache, type CacheResult } from '@app/pod-cache';
import { PodSyncer, PodWorkers, coalesce, nextSyncAfter, type SyncPodResult } from './pod-workers.js';
import { WorkQueue, WorkerStore } from './ports.js';
import { PlegInspections } from './pleg-inspections.js';
import { FakePodInspector } from './testing.js';

const T0 = 1_000_000;

function pod(uid: string, image = 'busybox:1'): Pod {
  return { metadata: { uid, name: `pod-${uid}`, namespace: 'default' }, spec: { containers: [{ name: 'c', image }], terminationGracePeriodSeconds: 30 } };
}
const upd = (updateType: SyncPodType, p: Pod, killPodOptions?: KillPodOptions): UpdatePodOptionsMessage => ({
  type: MessageTypes.updatePodOptions,
  updateType,
  startTime: new Date(T0).toISOString(),
  pod: p,
  ...(killPodOptions ? { killPodOptions } : {}),
});

/** A syncer whose calls the test can hold open, and which records what it was asked. */
class ScriptedSyncer extends PodSyncer {
  calls: string[] = [];
  grace: number[] = [];
  /** The steps whose signal aborted while they were held (as an image pull or a hook is cancelled). */
  cancelled: string[] = [];
  hold?: Promise<void>;
  /** Lets a held step run to its end whatever its signal says (KubeletSync's runtime work, as upstream's WithoutCancel). */
  ignoresCancel = false;
  fail = false;
  failWith?: string;
  terminal = false;
  /** Called as each step starts (a test's runtime manager marking what it changes). */
  during?: (what: string, uid: string) => void;
  private async step(what: string, signal?: AbortSignal, uid = ''): Promise<void> {
    this.calls.push(what);
    this.during?.(what, uid);
    if (this.hold) {
      const hold = this.hold;
      await new Promise<void>((resolve, reject) => {
        if (!this.ignoresCancel) signal?.addEventListener('abort', () => {
          this.cancelled.push(what);
          reject(signal.reason instanceof Error ? signal.reason : new Error('aborted'));
        }, { once: true });
        void hold.then(resolve);
      });
    }
    if (this.fail) throw new Error('runtime says no');
    if (this.failWith) throw new Error(this.failWith);
  }
  requeueAfterMs?: number;
  async syncPod(t: SyncPodType, p: Pod, _c: CacheResult, signal?: AbortSignal): Promise<SyncPodResult> {
    await this.step(`sync:${t}:${p.spec.containers[0]?.image ?? ''}`, signal, p.metadata.uid);
    return { terminal: this.terminal, ...(this.requeueAfterMs !== undefined ? { requeueAfterMs: this.requeueAfterMs } : {}) };
  }
  async syncTerminatingPod(p: Pod, _c: CacheResult, grace: number, _k: KillPodOptions | undefined, _r: boolean, signal?: AbortSignal): Promise<void> {
    this.grace.push(grace);
    await this.step(`terminating:${p.spec.containers[0]?.image ?? ''}`, signal, p.metadata.uid);
  }
  async syncTerminatedPod(p: Pod): Promise<void> {
    await this.step('terminated', undefined, p.metadata.uid);
  }
}

class MemoryWorkerStore extends WorkerStore {
  records = new Map<string, PodSyncStatusRecord>();
  load(uid: string) {
    return Promise.resolve(this.records.get(uid));
  }
  save(uid: string, r: PodSyncStatusRecord) {
    this.records.set(uid, { ...r });
    return Promise.resolve();
  }
  delete(uid: string) {
    this.records.delete(uid);
    return Promise.resolve();
  }
}

class RecordingQueue extends WorkQueue {
  enqueued: { uid: string; afterMs: number; error?: string }[] = [];
  enqueue(uid: string, afterMs: number, error?: string): void {
    this.enqueued.push({ uid, afterMs, ...(error ? { error } : {}) });
  }
}

/** `randoms`: what random() returns, in turn (then 0). */
function setup(store = new MemoryWorkerStore(), randoms: number[] = []) {
  const clock = new FakeClock(T0);
  const cache = new MemoryPodCache();
  const syncer = new ScriptedSyncer();
  const queue = new RecordingQueue();
  const inspector = new FakePodInspector();
  const inspections = new PlegInspections(inspector);
  const workers = new PodWorkers({ syncer, store, queue, cache, clock, logger: silentLogger(), gracePeriodOf: (p, o) => o ?? p.spec.terminationGracePeriodSeconds ?? 30, options: { resyncIntervalMs: 60_000, backOffMs: 10_000, random: () => randoms.shift() ?? 0 }, inspections });
  /** Advances time and the cache clock, so waiting workers may act. */
  const relist = async () => {
    await clock.step(1000);
    cache.updateTime(clock.now());
    await clock.step(0);
  };
  return { clock, cache, syncer, queue, workers, store, relist, inspector, inspections };
}

function deferred() {
  let release: () => void = () => undefined;
  const promise = new Promise<void>((r) => (release = r));
  return { promise, release };
}

describe('PodWorkers: the lifecycle', () => {
  it('a sync, then a resync is enqueued after the resync interval', async () => {
    const { workers, syncer, queue, relist } = setup();
    await workers.updatePod(upd('SyncPodCreate', pod('a')));
    await relist();
    assert.deepEqual(syncer.calls, ['sync:SyncPodCreate:busybox:1']);
    assert.deepEqual(queue.enqueued, [{ uid: 'a', afterMs: 60_000 }]);
    assert.equal(workers.state('a')?.syncedAt !== undefined, true);
  });

  it('a sync that waits for a back-off to end is requeued for then, not after the whole resync interval', async () => {
    const { workers, syncer, queue, relist } = setup();
    syncer.requeueAfterMs = 3_500;
    await workers.updatePod(upd('SyncPodCreate', pod('a')));
    await relist();
    assert.deepEqual(queue.enqueued, [{ uid: 'a', afterMs: 3_500 }]);
  });

  it('a failed sync is retried after the back-off', async () => {
    const { workers, syncer, queue, relist } = setup();
    syncer.fail = true;
    await workers.updatePod(upd('SyncPodCreate', pod('a')));
    await relist();
    assert.deepEqual(queue.enqueued, [{ uid: 'a', afterMs: 10_000, error: 'runtime says no' }]);
  });

  // completeWork (pod_workers.go): wait.Jitter with upstream's factors, random() = 0.5 adds a quarter.
  const nextSyncCases: { name: string; error?: string; requeueAfterMs?: number; want: number }[] = [
    { name: 'after success: the resync interval, jittered by up to 50%', want: 75_000 },
    { name: 'after success with a back-off ending sooner: when the back-off ends', requeueAfterMs: 3_500, want: 3_500 },
    { name: 'after an error: the back-off, jittered by up to 50%', error: 'runtime says no', want: 12_500 },
    { name: 'after NetworkNotReady: about a second (backOffOnTransientErrorPeriod), jittered', error: 'network is not ready: container runtime network not ready', want: 1_250 },
  ];
  for (const tc of nextSyncCases) {
    it(`next sync ${tc.name}`, () => {
      assert.equal(nextSyncAfter({ resyncIntervalMs: 60_000, backOffMs: 10_000, random: () => 0.5 }, tc.error, tc.requeueAfterMs), tc.want);
    });
  }

  it('pods that fail together are not retried together: the back-off is jittered', async () => {
    const { workers, syncer, queue, relist } = setup(new MemoryWorkerStore(), [0, 0.9]);
    syncer.fail = true;
    await workers.updatePod(upd('SyncPodCreate', pod('a')));
    await workers.updatePod(upd('SyncPodCreate', pod('b')));
    await relist();
    assert.deepEqual(queue.enqueued.map((e) => e.afterMs).sort((x, y) => x - y), [10_000, 14_500]);
  });

  it('a pod waiting for the network is retried after about a second, not the whole back-off', async () => {
    const { workers, syncer, queue, relist } = setup();
    syncer.failWith = 'network is not ready: container runtime network not ready: NetworkReady=false reason:NetworkPluginNotReady message:cni config uninitialized';
    await workers.updatePod(upd('SyncPodCreate', pod('a')));
    await relist();
    assert.deepEqual(queue.enqueued.map((e) => e.afterMs), [1_000]);
  });

  it('SyncPod -> TerminatingPod -> TerminatedPod -> finished, each waiting for a newer cache', async () => {
    const { workers, syncer, relist, store } = setup();
    await workers.updatePod(upd('SyncPodCreate', pod('a')));
    await relist();
    await workers.updatePod(upd('SyncPodKill', pod('a'), { gracePeriodOverride: 5 }));
    assert.equal(store.records.get('a')?.gracePeriod, 5);
    await relist();
    assert.deepEqual(syncer.calls.slice(1), ['terminating:busybox:1']);
    assert.deepEqual(syncer.grace, [5]);
    await relist();
    assert.deepEqual(syncer.calls.slice(1), ['terminating:busybox:1', 'terminated']);
    assert.equal(store.records.get('a')?.finished, true);
  });

  it('an update that comes while TerminatedPod runs (a PLEG event of its dying containers) does not run TerminatedPod again', async () => {
    const { workers, syncer, relist, store } = setup();
    await workers.updatePod(upd('SyncPodCreate', pod('a')));
    await relist();
    await workers.updatePod(upd('SyncPodKill', pod('a')));
    await relist();
    const held = deferred();
    syncer.hold = held.promise;
    await relist();
    assert.equal(syncer.calls.at(-1), 'terminated');
    await workers.updatePod(upd('SyncPodSync', pod('a')));
    syncer.hold = undefined;
    held.release();
    await relist();
    await relist();
    // A second pass would write the final status again from a runtime whose containers are gone (all "unknown", 137).
    assert.deepEqual(syncer.calls.slice(1), ['terminating:busybox:1', 'terminated']);
    assert.equal(store.records.get('a')?.finished, true);
  });

  it('a pod that reaches a terminal phase terminates by itself', async () => {
    const { workers, syncer, relist } = setup();
    syncer.terminal = true;
    await workers.updatePod(upd('SyncPodCreate', pod('a')));
    await relist();
    await relist();
    await relist();
    assert.deepEqual(syncer.calls, ['sync:SyncPodCreate:busybox:1', 'terminating:busybox:1', 'terminated']);
  });

  it('a failed termination is retried by the worker itself after the back-off', async () => {
    const { workers, syncer, queue, relist, clock, cache } = setup();
    await workers.updatePod(upd('SyncPodCreate', pod('a')));
    await relist();
    syncer.fail = true;
    await workers.updatePod(upd('SyncPodKill', pod('a')));
    await relist();
    assert.equal(syncer.calls.filter((c) => c.startsWith('terminating')).length, 1);
    assert.equal(queue.enqueued.filter((e) => e.error).length, 0, 'nothing enqueued with the sync loop for a terminating pod');
    syncer.fail = false;
    await clock.step(10_000);
    cache.updateTime(clock.now());
    await clock.step(0);
    await relist();
    assert.deepEqual(syncer.calls.slice(1), ['terminating:busybox:1', 'terminating:busybox:1', 'terminated']);
  });

  it('once terminating, it is never started again', async () => {
    const { workers, syncer, relist } = setup();
    await workers.updatePod(upd('SyncPodCreate', pod('a')));
    await relist();
    syncer.fail = true; // termination keeps failing: something still runs
    await workers.updatePod(upd('SyncPodKill', pod('a')));
    await relist();
    await workers.updatePod(upd('SyncPodUpdate', pod('a', 'busybox:2')));
    await relist();
    assert.ok(syncer.calls.slice(1).every((c) => c.startsWith('terminating')), syncer.calls.join(', '));
    assert.equal(syncer.calls.at(-1), 'terminating:busybox:2', 'the newest spec is used for the kill');
  });

  it('the worker waits for a cache entry newer than its last sync', async () => {
    const { workers, syncer, clock, cache, relist } = setup();
    await workers.updatePod(upd('SyncPodCreate', pod('a')));
    await relist();
    await workers.updatePod(upd('SyncPodSync', pod('a')));
    await clock.step(5000);
    assert.equal(syncer.calls.length, 1, 'no sync on a stale cache');
    cache.updateTime(clock.now());
    await clock.step(0);
    assert.equal(syncer.calls.length, 2);
  });
});

describe('PodWorkers: a sync that changed the runtime has the pod inspected as it ends (docs/adr/0017)', () => {
  /** The PLEG as the pod worker's request reaches it: the pod's entry, stamped just after the sync's end. */
  const pleg = (cache: MemoryPodCache, inspector: FakePodInspector) => {
    inspector.onInspect = (uid, syncEnd) => cache.set({ uid, name: uid, namespace: 'default', timestamp: syncEnd + 1, sandboxStatuses: [], containerStatuses: [], ips: [] });
  };

  it('the sync that started the pod asks for its inspection at its end; the sync its PLEG event brings runs on that entry, without waiting for a relist', async () => {
    const { workers, syncer, cache, inspector, inspections, relist, clock } = setup();
    pleg(cache, inspector);
    syncer.during = (what, uid) => what.startsWith('sync:SyncPodCreate') && inspections.mark(uid);
    await relist();
    await workers.updatePod(upd('SyncPodCreate', pod('a')));
    await clock.step(0);
    assert.deepEqual(inspector.asked, [{ uid: 'a', syncEnd: workers.worker('a')?.lastSyncEnd }], 'asked once, with the end of the sync that changed the pod');
    await workers.updatePod(upd('SyncPodSync', pod('a'))); // its ContainerStarted, through the sync loop
    await clock.step(0);
    assert.deepEqual(syncer.calls, ['sync:SyncPodCreate:busybox:1', 'sync:SyncPodSync:busybox:1'], 'no relist was needed');
    assert.equal(inspector.asked.length, 1, 'a sync that changed nothing asks for nothing');
  });

  it('a kill right after a sync that changed nothing: the worker asks the PLEG to look now rather than wait for the next relist', async () => {
    const { workers, syncer, cache, inspector, relist, clock } = setup();
    await relist();
    await workers.updatePod(upd('SyncPodCreate', pod('a')));
    await clock.step(0);
    assert.deepEqual(inspector.asked, [], 'the cache was newer than the worker\'s start: nothing to ask');
    pleg(cache, inspector);
    const lastSyncEnd = workers.worker('a')?.lastSyncEnd;
    await workers.updatePod(upd('SyncPodKill', pod('a')));
    await clock.step(0);
    assert.deepEqual(syncer.calls, ['sync:SyncPodCreate:busybox:1', 'terminating:busybox:1', 'terminated'], 'no relist was needed');
    assert.deepEqual(inspector.asked[0], { uid: 'a', syncEnd: lastSyncEnd });
  });

  it('with the PLEG away (a lost request), the worker asks again after 2 s, then 4 s, 8 s ... up to 30 s, until the entry comes (a relist)', async () => {
    const { workers, syncer, inspector, relist, clock } = setup();
    await relist();
    await workers.updatePod(upd('SyncPodCreate', pod('a')));
    await clock.step(0);
    await workers.updatePod(upd('SyncPodSync', pod('a')));
    await clock.step(500);
    await workers.updatePod(upd('SyncPodSync', pod('a')));
    await clock.step(0);
    assert.equal(syncer.calls.length, 1, 'no sync on a stale cache');
    assert.equal(inspector.asked.length, 1, 'asked once for that sync\'s end');
    await clock.step(1_500);
    assert.equal(inspector.asked.length, 2, 'again 2 s after the wait began');
    await clock.step(4_000);
    assert.equal(inspector.asked.length, 3, 'then 4 s later');
    for (let i = 0; i < 20; i++) await clock.step(30_000);
    const times: number = inspector.asked.length;
    assert.ok(times >= 20 && times <= 24, `at most one ask per 30 s once the wait has doubled to it: ${times} asks`);
    assert.ok(inspector.asked.every((a) => a.syncEnd === inspector.asked[0]?.syncEnd), 'each for the same sync end');
    const first = inspector.asked[0]?.syncEnd;
    await relist();
    assert.equal(syncer.calls.length, 2);
    await clock.step(120_000);
    assert.equal(inspector.asked.filter((a) => a.syncEnd === first).length, times, 'no ask for that wait once its entry came (the update that was pending waits anew, for the next sync end)');
  });

  it('termination: the kill and the sandboxes\' removal each have the pod inspected, so terminating -> terminated -> finished needs no relist', async () => {
    const { workers, syncer, cache, inspector, inspections, relist, clock, store } = setup();
    pleg(cache, inspector);
    syncer.during = (_what, uid) => inspections.mark(uid);
    await relist();
    await workers.updatePod(upd('SyncPodCreate', pod('a')));
    await clock.step(0);
    await workers.updatePod(upd('SyncPodKill', pod('a')));
    await clock.step(0);
    assert.deepEqual(syncer.calls.slice(1), ['terminating:busybox:1', 'terminated']);
    assert.equal(store.records.get('a')?.finished, true);
    assert.deepEqual(inspector.asked.map((a) => a.uid), ['a', 'a', 'a'], 'after the start, the kill and the sandboxes\' removal');
  });

  it('a sync that failed after changing the runtime still asks; a request that cannot be sent is left to the relist', async () => {
    const { workers, syncer, cache, inspector, inspections, relist, clock } = setup();
    pleg(cache, inspector);
    syncer.during = (_what, uid) => inspections.mark(uid);
    syncer.fail = true;
    await relist();
    await workers.updatePod(upd('SyncPodCreate', pod('a')));
    await clock.step(0);
    assert.equal(inspector.asked.length, 1);
    inspector.unreachable = true;
    await workers.updatePod(upd('SyncPodSync', pod('a')));
    await relist();
    assert.equal(syncer.calls.length, 2, 'the worker goes on');
  });
});

describe('PodWorkers: termination hurried (UpdatePod cancelFn, calculateEffectiveGracePeriod)', () => {
  it('a kill cancels the sync in flight (a long image pull, a hook) and the kill runs next, without waiting for it', async () => {
    const { workers, syncer, relist, queue } = setup();
    syncer.hold = new Promise(() => undefined); // the sync would never end by itself
    await workers.updatePod(upd('SyncPodCreate', pod('a')));
    await relist();
    assert.deepEqual(syncer.calls, ['sync:SyncPodCreate:busybox:1']);
    await workers.updatePod(upd('SyncPodKill', pod('a')));
    assert.deepEqual(syncer.cancelled, ['sync:SyncPodCreate:busybox:1']);
    syncer.hold = undefined;
    await relist();
    await relist();
    assert.deepEqual(syncer.calls, ['sync:SyncPodCreate:busybox:1', 'terminating:busybox:1', 'terminated']);
    assert.deepEqual(queue.enqueued, [], 'a cancelled sync is not retried');
  });

  it('a shorter grace period mid-termination is saved, and the termination starts over with it', async () => {
    const { workers, syncer, relist, store } = setup();
    await workers.updatePod(upd('SyncPodCreate', pod('a')));
    await relist();
    syncer.hold = new Promise(() => undefined); // StopContainer waits out the pod's 30s
    await workers.updatePod(upd('SyncPodKill', pod('a')));
    await relist();
    assert.deepEqual(syncer.grace, [30]);
    await workers.updatePod(upd('SyncPodKill', pod('a'), { gracePeriodOverride: 5 }));
    assert.equal(store.records.get('a')?.gracePeriod, 5, 'saved: a restarted worker goes on with it');
    assert.equal(workers.state('a')?.gracePeriod, 5);
    assert.deepEqual(syncer.cancelled, ['terminating:busybox:1']);
    syncer.hold = undefined;
    await relist();
    await relist();
    assert.deepEqual(syncer.grace, [30, 5], 'the kill started over with 5s');
    assert.deepEqual(syncer.calls.slice(1), ['terminating:busybox:1', 'terminating:busybox:1', 'terminated']);
  });

  it('a shorter grace period while a termination that cannot be cancelled runs (KubeletSync\'s kill): saved, and the pod goes on to terminated without a second termination', async () => {
    const { workers, syncer, relist, store } = setup();
    await workers.updatePod(upd('SyncPodCreate', pod('a')));
    await relist();
    const gate = deferred();
    syncer.hold = gate.promise;
    syncer.ignoresCancel = true;
    await workers.updatePod(upd('SyncPodKill', pod('a')));
    await relist();
    await workers.updatePod(upd('SyncPodKill', pod('a'), { gracePeriodOverride: 5 }));
    assert.equal(store.records.get('a')?.gracePeriod, 5, 'saved: a retried kill uses it');
    syncer.hold = undefined;
    gate.release();
    await relist();
    await relist();
    assert.deepEqual(syncer.grace, [30], 'one termination, with the grace period it started with');
    assert.deepEqual(syncer.calls.slice(1), ['terminating:busybox:1', 'terminated']);
  });

  it('a longer grace period mid-termination changes nothing', async () => {
    const { workers, syncer, relist, store } = setup();
    await workers.updatePod(upd('SyncPodCreate', pod('a')));
    await relist();
    const gate = deferred();
    syncer.hold = gate.promise;
    await workers.updatePod(upd('SyncPodKill', pod('a'), { gracePeriodOverride: 10 }));
    await relist();
    await workers.updatePod(upd('SyncPodKill', pod('a'), { gracePeriodOverride: 20 }));
    assert.equal(store.records.get('a')?.gracePeriod, 10);
    assert.deepEqual(syncer.cancelled, [], 'the termination in flight goes on');
    syncer.hold = undefined;
    gate.release();
    await relist();
    await relist();
    assert.deepEqual(syncer.grace, [10]);
    assert.equal(syncer.calls.at(-1), 'terminated');
  });
});

describe('PodWorkers: a pod added again while it terminates (restartRequested)', () => {
  it('the SyncPodCreate is remembered in the record, the termination goes on, and a SyncPodCreate after it finished starts the pod anew', async () => {
    const { workers, syncer, relist, store } = setup();
    await workers.updatePod(upd('SyncPodCreate', pod('a', 'v1')));
    await relist();
    const gate = deferred();
    syncer.hold = gate.promise;
    await workers.updatePod(upd('SyncPodKill', pod('a', 'v1')));
    await relist(); // syncTerminatingPod is under way
    await workers.updatePod(upd('SyncPodCreate', pod('a', 'v2')));
    assert.equal(store.records.get('a')?.restartRequested, true, 'saved, so housekeeping sees it');
    syncer.hold = undefined;
    gate.release();
    await relist();
    await relist();
    assert.deepEqual(syncer.calls, ['sync:SyncPodCreate:v1', 'terminating:v1', 'terminated'], 'the pod is not started while it terminates');
    assert.equal(store.records.get('a')?.finished, true);
    assert.equal(store.records.get('a')?.restartRequested, true, 'kept for housekeeping after the worker finished');
    // Housekeeping's SyncPodCreate (TerminatedAndRecreatedPod).
    await workers.updatePod(upd('SyncPodCreate', pod('a', 'v2')));
    await relist();
    assert.deepEqual(syncer.calls.slice(3), ['sync:SyncPodCreate:v2']);
    assert.deepEqual(store.records.get('a')?.restartRequested, undefined, 'a fresh record');
  });

  it('a SyncPodCreate for a pod a restarted replica finds terminating in KV is remembered too', async () => {
    const store = new MemoryWorkerStore();
    store.records.set('a', { syncedAt: T0 - 5000, terminatingAt: T0 - 1000, gracePeriod: 7 });
    const { workers, syncer, relist } = setup(store);
    await workers.updatePod(upd('SyncPodCreate', pod('a')), T0);
    assert.equal(store.records.get('a')?.restartRequested, true);
    await workers.updatePod(upd('SyncPodSync', pod('a')), T0);
    await relist();
    assert.deepEqual(syncer.calls, ['terminating:busybox:1'], 'it terminates first');
  });
});

describe('PodWorkers: UpdatePod coalescing', () => {
  // Two updates (v2, then v3) arrive while the sync of v1 runs.
  const whileSyncing: { name: string; v2: 'SyncPodUpdate' | 'SyncPodKill'; want: string[] }[] = [
    { name: 'while a sync runs, only the newest update waits', v2: 'SyncPodUpdate', want: ['sync:SyncPodCreate:v1', 'sync:SyncPodUpdate:v3'] },
    { name: 'a waiting kill is never overwritten by a sync', v2: 'SyncPodKill', want: ['sync:SyncPodCreate:v1', 'terminating:v3', 'terminated'] },
  ];
  for (const tc of whileSyncing) {
    it(tc.name, async () => {
      const { workers, syncer, relist } = setup();
      const gate = deferred();
      syncer.hold = gate.promise;
      await workers.updatePod(upd('SyncPodCreate', pod('a', 'v1')));
      await relist();
      await workers.updatePod(upd(tc.v2, pod('a', 'v2')));
      await workers.updatePod(upd('SyncPodUpdate', pod('a', 'v3')));
      syncer.hold = undefined;
      gate.release();
      await relist();
      await relist();
      assert.deepEqual(syncer.calls, tc.want);
    });
  }

  const cases: { name: string; pending?: SyncPodType; next: SyncPodType; want: SyncPodType }[] = [
    { name: 'nothing waiting: the update waits', next: 'SyncPodSync', want: 'SyncPodSync' },
    { name: 'sync then update: the update', pending: 'SyncPodSync', next: 'SyncPodUpdate', want: 'SyncPodUpdate' },
    { name: 'sync then kill: the kill', pending: 'SyncPodSync', next: 'SyncPodKill', want: 'SyncPodKill' },
    { name: 'kill then sync: still the kill', pending: 'SyncPodKill', next: 'SyncPodSync', want: 'SyncPodKill' },
    { name: 'kill then create: still the kill', pending: 'SyncPodKill', next: 'SyncPodCreate', want: 'SyncPodKill' },
  ];
  for (const tc of cases) {
    it(`coalesce: ${tc.name}`, () => {
      assert.equal(coalesce(tc.pending ? upd(tc.pending, pod('a')) : undefined, upd(tc.next, pod('a'))).updateType, tc.want);
    });
  }
});

describe('PodWorkers: restart from KV', () => {
  it('a restarted worker resumes a termination instead of starting the pod', async () => {
    const store = new MemoryWorkerStore();
    store.records.set('a', { syncedAt: T0 - 5000, terminatingAt: T0 - 1000, gracePeriod: 7 });
    const { workers, syncer, relist } = setup(store);
    await workers.updatePod(upd('SyncPodSync', pod('a')), T0);
    await relist();
    assert.deepEqual(syncer.calls, ['terminating:busybox:1']);
    assert.deepEqual(syncer.grace, [7]);
  });

  it('a new process never acts on a runtime view older than its own start, whatever the update', async () => {
    const { workers, syncer, clock, cache } = setup();
    cache.updateTime(T0 - 1); // the cache is from before this process started
    await workers.updatePod(upd('SyncPodSync', pod('a')));
    await clock.step(0);
    assert.deepEqual(syncer.calls, []);
    cache.updateTime(T0 + 1);
    await clock.step(0);
    assert.deepEqual(syncer.calls, ['sync:SyncPodSync:busybox:1']);
  });

  it('a finished pod added again starts a fresh worker; anything else is ignored', async () => {
    const store = new MemoryWorkerStore();
    store.records.set('a', { syncedAt: 1, terminatingAt: 2, terminatedAt: 3, finished: true });
    const { workers, syncer, relist } = setup(store);
    await workers.updatePod(upd('SyncPodSync', pod('a')));
    await relist();
    assert.deepEqual(syncer.calls, []);
    await workers.updatePod(upd('SyncPodCreate', pod('a')));
    await relist();
    assert.deepEqual(syncer.calls, ['sync:SyncPodCreate:busybox:1']);
    assert.equal(store.records.get('a')?.terminatingAt, undefined);
  });
});

describe('PodWorkers: one worker per pod across deliveries and hand-overs', () => {
  it('two updates of a new pod arriving together make one worker: its syncs run one at a time', async () => {
    const { workers, syncer, relist } = setup();
    const gate = deferred();
    syncer.hold = gate.promise;
    await Promise.all([workers.updatePod(upd('SyncPodCreate', pod('a'))), workers.updatePod(upd('SyncPodUpdate', pod('a', 'busybox:2')))]);
    await relist();
    assert.deepEqual(syncer.calls, ['sync:SyncPodCreate:busybox:2'], 'one sync in flight, with the newest pod');
    syncer.hold = undefined;
    gate.release();
    await relist();
    assert.deepEqual(syncer.calls, ['sync:SyncPodCreate:busybox:2', 'sync:SyncPodUpdate:busybox:2'], 'then the update that waited, after it');
  });

  it('handed over: the step in flight ends, nothing waiting runs, the records tell the next owner where it was', async () => {
    const { workers, syncer, relist, store } = setup();
    await workers.updatePod(upd('SyncPodCreate', pod('a')));
    await relist();
    // The step in flight is the kill (a kill would cancel a sync in flight: that one ends at once).
    const gate = deferred();
    syncer.hold = gate.promise;
    await workers.updatePod(upd('SyncPodKill', pod('a')));
    await relist();
    await workers.updatePod(upd('SyncPodKill', pod('a'))); // waits behind it; the same grace period cancels nothing
    let released = false;
    const done = workers.release((uid) => uid === 'a').then(() => (released = true));
    await relist();
    assert.equal(released, false, 'not before the step in flight ends');
    syncer.hold = undefined;
    gate.release();
    await done;
    await relist();
    assert.deepEqual(syncer.calls, ['sync:SyncPodCreate:busybox:1', 'terminating:busybox:1'], 'the step waiting (TerminatedPod) was left to the next owner');
    assert.equal(store.records.get('a')?.terminatedAt !== undefined, true, 'which finds it in the record');
    assert.equal(store.records.get('a')?.finished, undefined);
    assert.equal(workers.worker('a'), undefined);
  });

  it('taken back at once: the new worker waits for the old step in flight, never beside it', async () => {
    const { workers, syncer, relist } = setup();
    const gate = deferred();
    syncer.hold = gate.promise;
    await workers.updatePod(upd('SyncPodCreate', pod('a')));
    await relist();
    void workers.release((uid) => uid === 'a');
    const again = workers.updatePod(upd('SyncPodSync', pod('a')));
    await relist();
    assert.deepEqual(syncer.calls, ['sync:SyncPodCreate:busybox:1'], 'only the old step runs');
    syncer.hold = undefined;
    gate.release();
    await again;
    await relist();
    assert.deepEqual(syncer.calls, ['sync:SyncPodCreate:busybox:1', 'sync:SyncPodSync:busybox:1']);
  });
});
