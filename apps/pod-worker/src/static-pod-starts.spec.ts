import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { FakeClock } from '@app/clock/testing';
import { MessageTypes, type KillPodOptions, type Pod, type PodRecord, type PodSyncStatusRecord, type SyncPodType } from '@app/contracts';
import { silentLogger } from '@app/observability';
import { MemoryPodCache, type CacheResult } from '@app/pod-cache';
import { PodSyncer, PodWorkers, type SyncPodResult } from './pod-workers.js';
import { WorkQueue } from './ports.js';
import { STATIC_POD_LISTING_TIMEOUT_MS, StaticPodStarts, allowStaticPodStart, podFullName, type StaticPodGeneration } from './static-pod-starts.js';
import { MemoryDesiredPods, MemoryWorkerStore } from './testing.js';

const T0 = 1_000_000;

function staticPod(uid: string, name = 'etcd-node', source = 'file'): Pod {
  return { metadata: { uid, name, namespace: 'kube-system', annotations: { 'kubernetes.io/config.source': source } }, spec: { containers: [{ name: 'c', image: 'busybox:1' }], terminationGracePeriodSeconds: 30 } };
}
const desired = (uid: string, addedAt: number, extra: Partial<PodRecord> = {}): PodRecord => ({ pod: staticPod(uid), source: 'file', addedAt, admitted: true, ...extra });

describe('allowStaticPodStart', () => {
  const cases: { name: string; others: StaticPodGeneration[]; want: boolean | string }[] = [
    { name: 'alone: it starts', others: [], want: true },
    { name: 'an older generation started and not finished (running): it waits', others: [{ uid: 'old', record: { syncedAt: T0 } }], want: 'old' },
    { name: 'an older generation still terminating: it waits', others: [{ uid: 'old', record: { syncedAt: T0, terminatingAt: T0 + 1 } }], want: 'old' },
    { name: 'an older generation terminated, not finished (its sandboxes still go): it waits', others: [{ uid: 'old', record: { syncedAt: T0, terminatingAt: T0 + 1, terminatedAt: T0 + 2 } }], want: 'old' },
    { name: 'an older generation finished: it starts', others: [{ uid: 'old', record: { syncedAt: T0, terminatingAt: T0 + 1, terminatedAt: T0 + 2, finished: true } }], want: true },
    { name: 'a generation killed before it started: it starts', others: [{ uid: 'mid', desired: desired('mid', T0 + 1), record: { terminatingAt: T0 + 2 } }], want: true },
    { name: 'a generation added before it, waiting to start: it waits its turn', others: [{ uid: 'mid', desired: desired('mid', T0) }], want: 'mid' },
    { name: 'a generation added after it, waiting to start: it goes first', others: [{ uid: 'later', desired: desired('later', T0 + 20) }], want: true },
    { name: 'a waiting generation no longer desired: it starts', others: [{ uid: 'mid', desired: desired('mid', T0, { terminationRequested: true }) }], want: true },
    { name: 'a waiting generation refused at admission: it starts', others: [{ uid: 'mid', desired: desired('mid', T0, { admitted: false }) }], want: true },
    { name: 'added at the same moment: the lower UID goes first', others: [{ uid: 'a-first', desired: desired('a-first', T0 + 10) }], want: 'a-first' },
  ];
  for (const tc of cases) {
    it(tc.name, () => {
      const self: StaticPodGeneration = { uid: 'new', desired: desired('new', T0 + 10) };
      const verdict = allowStaticPodStart('new', [self, ...tc.others]);
      assert.deepEqual(verdict, tc.want === true ? { allowed: true } : { allowed: false, blockedBy: tc.want });
    });
  }

  const gone: { name: string; self: StaticPodGeneration }[] = [
    { name: 'no longer in the podManager (its kill lost or on its way): it never starts', self: { uid: 'new' } },
    { name: 'asked to terminate: it never starts', self: { uid: 'new', desired: desired('new', T0, { terminationRequested: true }) } },
    { name: 'refused at admission: it never starts', self: { uid: 'new', desired: desired('new', T0, { admitted: false }) } },
  ];
  for (const tc of gone) it(tc.name, () => assert.deepEqual(allowStaticPodStart('new', [tc.self]), { allowed: false, notDesired: true }));
});

describe('StaticPodStarts: the generations from the node\'s buckets', () => {
  it('counts only static pods of the same full name, from both buckets', async () => {
    const pods = new MemoryDesiredPods();
    const records = new MemoryWorkerStore();
    pods.pods.set('new', desired('new', T0 + 10));
    // Another name, another namespace, an API pod of the same name: none of them is a generation of it.
    await records.save('other-name', { syncedAt: T0, pod: staticPod('other-name', 'kube-proxy-node') });
    await records.save('other-ns', { syncedAt: T0, pod: { ...staticPod('other-ns'), metadata: { ...staticPod('other-ns').metadata, namespace: 'default' } } });
    await records.save('api', { syncedAt: T0, pod: staticPod('api', 'etcd-node', 'api') });
    await records.save('runtime-only', { syncedAt: T0 });
    const gate = new StaticPodStarts({ desired: pods, records, clock: new FakeClock(T0) });
    assert.deepEqual(await gate.allowStart(staticPod('new')), { allowed: true });
    // The old generation, written by another replica: only its `workers` record is left (it is no longer desired).
    await records.save('old', { syncedAt: T0, terminatingAt: T0 + 5, pod: staticPod('old') });
    assert.deepEqual(await gate.allowStart(staticPod('new')), { allowed: false, blockedBy: 'old' });
    assert.equal(podFullName(staticPod('x')), 'etcd-node_kube-system');
  });

  it('checks that come together share a listing, and one asked while a listing runs gets the next one', async () => {
    const pods = new MemoryDesiredPods();
    const records = new MemoryWorkerStore();
    const gate = new StaticPodStarts({ desired: pods, records, clock: new FakeClock(T0) });
    // A burst: ten checks asked at once, one listing of each bucket.
    await Promise.all(Array.from({ length: 10 }, (_, i) => gate.allowStart(staticPod(`p${i}`, `pod-${i}`))));
    assert.deepEqual([pods.listings, records.listings], [1, 1]);
    // One listing in flight; the old generation is written after it started; a check asked now must see it.
    pods.pods.set('new', desired('new', T0 + 10));
    const first = gate.allowStart(staticPod('new'));
    await Promise.resolve(); // the first listing has started
    await records.save('old', { syncedAt: T0, pod: staticPod('old') });
    const second = gate.allowStart(staticPod('new'));
    assert.deepEqual(await second, { allowed: false, blockedBy: 'old' });
    await first;
    assert.deepEqual([pods.listings, records.listings], [3, 3]);
  });
});

describe('StaticPodStarts: a listing that hangs', () => {
  it('the check rejects after the timeout, and the check queued behind it gets its own listing then', async () => {
    const clock = new FakeClock(T0);
    const pods = new MemoryDesiredPods();
    const records = new MemoryWorkerStore();
    pods.pods.set('new', desired('new', T0));
    pods.holdListings = new Promise<void>(() => undefined); // never resolves
    const gate = new StaticPodStarts({ desired: pods, records, clock });
    const outcome = (p: Promise<unknown>) => {
      const o: { value: unknown } = { value: 'pending' };
      p.then((v) => (o.value = v), (e: unknown) => (o.value = e instanceof Error ? e.message : e));
      return o;
    };
    const first = outcome(gate.allowStart(staticPod('new')));
    await clock.step(0);
    const second = outcome(gate.allowStart(staticPod('new')));
    await clock.step(STATIC_POD_LISTING_TIMEOUT_MS - 1);
    assert.deepEqual([first.value, second.value], ['pending', 'pending']);
    pods.holdListings = undefined; // the bucket answers again
    await clock.step(1);
    assert.match(String(first.value), /listing of the pods and workers buckets took more than 10000 ms/);
    assert.deepEqual(second.value, { allowed: true }, 'not blocked behind the listing that hangs');
    assert.equal(pods.listings, 2);
  });
});

/** A syncer that records its calls. */
class RecordingSyncer extends PodSyncer {
  calls: string[] = [];
  syncPod(t: SyncPodType, p: Pod, _c: CacheResult): Promise<SyncPodResult> {
    this.calls.push(`sync:${t}:${p.metadata.uid ?? ''}`);
    return Promise.resolve({ terminal: false });
  }
  syncTerminatingPod(p: Pod, _c: CacheResult, _g: number, _k: KillPodOptions | undefined): Promise<void> {
    this.calls.push(`terminating:${p.metadata.uid ?? ''}`);
    return Promise.resolve();
  }
  syncTerminatedPod(p: Pod): Promise<void> {
    this.calls.push(`terminated:${p.metadata.uid ?? ''}`);
    return Promise.resolve();
  }
}

class RecordingQueue extends WorkQueue {
  enqueued: { uid: string; afterMs: number }[] = [];
  enqueue(uid: string, afterMs: number): void {
    this.enqueued.push({ uid, afterMs });
  }
}

const upd = (updateType: SyncPodType, p: Pod) => ({ type: MessageTypes.updatePodOptions, updateType, startTime: new Date(T0).toISOString(), pod: p });

/** Two replicas' pod workers over one `workers` bucket and one podManager, as two pod-worker processes see them. */
function twoReplicas() {
  const clock = new FakeClock(T0);
  const cache = new MemoryPodCache();
  const store = new MemoryWorkerStore();
  const pods = new MemoryDesiredPods();
  const replica = () => {
    const syncer = new RecordingSyncer();
    const queue = new RecordingQueue();
    const workers = new PodWorkers({
      syncer,
      store,
      queue,
      cache,
      clock,
      logger: silentLogger(),
      gracePeriodOf: (p, o) => o ?? p.spec.terminationGracePeriodSeconds ?? 30,
      options: { resyncIntervalMs: 60_000, backOffMs: 10_000, random: () => 0 },
      staticPods: new StaticPodStarts({ desired: pods, records: store, clock }),
    });
    return { syncer, queue, workers };
  };
  const relist = async () => {
    await clock.step(1000);
    cache.updateTime(clock.now());
    await clock.step(0);
  };
  return { clock, store, pods, relist, one: replica(), two: replica() };
}

describe('PodWorkers: a static pod\'s generations, one at a time', () => {
  it('on two replicas: the new generation waits, enqueued for the back-off, until the old one finished', async () => {
    const { pods, store, relist, one, two } = twoReplicas();
    pods.pods.set('old', desired('old', T0));
    await one.workers.updatePod(upd('SyncPodCreate', staticPod('old')));
    await relist();
    assert.deepEqual(one.syncer.calls, ['sync:SyncPodCreate:old']);

    // The manifest is edited: the sync loop removes the old generation and adds the new one.
    pods.pods.delete('old');
    pods.pods.set('new', desired('new', T0 + 2000));
    await two.workers.updatePod(upd('SyncPodCreate', staticPod('new')));
    await relist();
    assert.deepEqual(two.syncer.calls, [], 'not started while the old generation runs');
    assert.deepEqual(two.queue.enqueued, [{ uid: 'new', afterMs: 10_000 }], 'retried after the back-off');
    assert.equal(store.records.get('new')?.syncedAt, undefined, 'its record does not say started');

    await one.workers.updatePod(upd('SyncPodKill', staticPod('old')));
    await relist();
    await relist();
    assert.deepEqual(one.syncer.calls, ['sync:SyncPodCreate:old', 'terminating:old', 'terminated:old']);
    assert.equal(store.records.get('old')?.finished, true);

    // The back-off ends: the sync loop's next SyncPodSync.
    await two.workers.updatePod(upd('SyncPodSync', staticPod('new')));
    await relist();
    assert.deepEqual(two.syncer.calls, ['sync:SyncPodSync:new']);
  });

  it('a listing that hangs: the worker waits no longer than the timeout, then is retried after the back-off', async () => {
    const { clock, pods, relist, one } = twoReplicas();
    pods.pods.set('new', desired('new', T0));
    pods.holdListings = new Promise<void>(() => undefined); // never resolves
    await one.workers.updatePod(upd('SyncPodCreate', staticPod('new')));
    await clock.step(STATIC_POD_LISTING_TIMEOUT_MS);
    assert.deepEqual(one.syncer.calls, [], 'not started: it could not be told whether it may');
    assert.deepEqual(one.queue.enqueued, [{ uid: 'new', afterMs: 10_000 }], 'retried after the back-off');
    pods.holdListings = undefined;
    await one.workers.updatePod(upd('SyncPodSync', staticPod('new')));
    await relist();
    assert.deepEqual(one.syncer.calls, ['sync:SyncPodSync:new']);
  });

  it('a listing that hangs: a kill that came while the worker waited for it is done after the timeout, without a start', async () => {
    const { clock, pods, relist, one } = twoReplicas();
    pods.pods.set('new', desired('new', T0));
    pods.holdListings = new Promise<void>(() => undefined); // never resolves
    await one.workers.updatePod(upd('SyncPodCreate', staticPod('new')));
    await one.workers.updatePod(upd('SyncPodKill', staticPod('new')));
    await clock.step(STATIC_POD_LISTING_TIMEOUT_MS - 1);
    assert.deepEqual([one.syncer.calls, one.queue.enqueued], [[], []], 'the check still waits for the listing');
    await clock.step(1);
    await relist();
    await relist();
    assert.deepEqual(one.syncer.calls, ['terminating:new', 'terminated:new'], 'the kill went first, without a start');
  });

  it('a generation no longer desired whose terminating record cannot be saved: nothing is done, it is retried after the back-off', async () => {
    const { store, relist, one } = twoReplicas();
    store.failSaves = new Error('not the owner of pod-worker shard 0: refused to write the workers record');
    await one.workers.updatePod(upd('SyncPodCreate', staticPod('gone')));
    await relist();
    assert.deepEqual(one.syncer.calls, [], 'not terminated while its record does not say so');
    assert.deepEqual(one.queue.enqueued, [{ uid: 'gone', afterMs: 10_000 }], 'retried after the back-off');
    assert.equal(one.workers.state('gone')?.terminatingAt, undefined, 'the worker says what the record says');
    store.failSaves = undefined;
    await one.workers.updatePod(upd('SyncPodSync', staticPod('gone')));
    await relist();
    await relist();
    assert.deepEqual(one.syncer.calls, ['terminating:gone', 'terminated:gone']);
    assert.equal(store.records.get('gone')?.finished, true);
  });

  it('on one replica: the old generation finishing starts the waiting one at once', async () => {
    const { pods, relist, one } = twoReplicas();
    pods.pods.set('old', desired('old', T0));
    await one.workers.updatePod(upd('SyncPodCreate', staticPod('old')));
    await relist();
    pods.pods.delete('old');
    pods.pods.set('new', desired('new', T0 + 2000));
    await one.workers.updatePod(upd('SyncPodKill', staticPod('old')));
    await one.workers.updatePod(upd('SyncPodCreate', staticPod('new')));
    for (let i = 0; i < 4; i++) await relist();
    assert.deepEqual(one.syncer.calls, ['sync:SyncPodCreate:old', 'terminating:old', 'terminated:old', 'sync:SyncPodCreate:new']);
  });

  it('a waiting generation that is killed terminates without starting', async () => {
    const { pods, relist, one, two } = twoReplicas();
    pods.pods.set('old', desired('old', T0));
    await one.workers.updatePod(upd('SyncPodCreate', staticPod('old')));
    await relist();
    pods.pods.set('new', desired('new', T0 + 2000));
    await two.workers.updatePod(upd('SyncPodCreate', staticPod('new')));
    await relist();
    pods.pods.delete('new');
    await two.workers.updatePod(upd('SyncPodKill', staticPod('new')));
    await relist();
    await relist();
    assert.deepEqual(two.syncer.calls, ['terminating:new', 'terminated:new']);
  });

  it('a waiting generation whose kill was lost, woken when the old one finishes: it terminates without starting', async () => {
    const { pods, relist, one } = twoReplicas();
    pods.pods.set('old', desired('old', T0));
    await one.workers.updatePod(upd('SyncPodCreate', staticPod('old')));
    await relist();
    pods.pods.set('mid', desired('mid', T0 + 1000));
    await one.workers.updatePod(upd('SyncPodCreate', staticPod('mid')));
    await relist();
    // Edited again: mid is removed (its SyncPodKill is lost), the old one is killed.
    pods.pods.delete('mid');
    pods.pods.delete('old');
    await one.workers.updatePod(upd('SyncPodKill', staticPod('old')));
    for (let i = 0; i < 4; i++) await relist();
    assert.deepEqual(one.syncer.calls, ['sync:SyncPodCreate:old', 'terminating:old', 'terminated:old', 'terminating:mid', 'terminated:mid']);
  });

  it('a pod that is not static is never held back', async () => {
    const { store, relist, two } = twoReplicas();
    const apiPod = (uid: string) => staticPod(uid, 'etcd-node', 'api');
    await store.save('old', { syncedAt: T0, pod: apiPod('old') });
    await two.workers.updatePod(upd('SyncPodCreate', apiPod('new')));
    await relist();
    assert.deepEqual(two.syncer.calls, ['sync:SyncPodCreate:new']);
  });

  it('buckets that cannot be read hold the start back, and it is retried', async () => {
    const { store, two } = twoReplicas();
    const failing = new PodWorkers({
      syncer: two.syncer,
      store,
      queue: two.queue,
      cache: new MemoryPodCache(),
      clock: new FakeClock(T0),
      logger: silentLogger(),
      gracePeriodOf: () => 30,
      options: { resyncIntervalMs: 60_000, backOffMs: 10_000, random: () => 0 },
      staticPods: { allowStart: () => Promise.reject(new Error('no responders')) },
    });
    await failing.updatePod(upd('SyncPodCreate', staticPod('new')));
    await failing.stop(); // the step in flight ends
    assert.deepEqual(two.syncer.calls, []);
    assert.deepEqual(two.queue.enqueued, [{ uid: 'new', afterMs: 10_000 }]);
    const rec: PodSyncStatusRecord | undefined = store.records.get('new');
    assert.equal(rec?.syncedAt, undefined);
  });
});
