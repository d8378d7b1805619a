import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { FakeClock } from '@app/clock/testing';
import { MessageTypes, shardOf, type KillPodOptions, type Pod, type PodRecord, type PodSyncStatusRecord, type SyncPodType, type UpdatePodOptionsMessage } from '@app/contracts';
import { silentLogger } from '@app/observability';
import { MemoryPodCache, type CacheResult } from '@app/pod-cache';
import { CrashLoopBackOff } from './kuberuntime/backoff.js';
import { PodSyncer, PodWorkers, type PodWorkerView, type SyncPodResult } from './pod-workers.js';
import { WorkQueue } from './ports.js';
import { FINISHED_RECORD_KEEP_MS, PodWorkerHousekeeping, ShardWork, decideShardWork, type ShardPod } from './shard-work.js';
import { ShardFences } from './shards.js';
import { FakeWorkSubscriptions, MemoryDesiredPods, MemoryWorkerStore } from './testing.js';

const SHARDS = 4;
const SETTLE = 2000;
const LEASE = 6000;
const T0 = Date.UTC(2026, 0, 1);

/** Records each UpdatePod; `views` are the workers it pretends to have; `release` can be held open. */
class RecordingWorkers {
  readonly updates: { update: UpdatePodOptionsMessage; resumeFrom: number | undefined }[] = [];
  readonly views = new Map<string, PodWorkerView>();
  readonly forgotten: string[] = [];
  released: string[] = [];
  hold?: Promise<void>;
  /** When set, UpdatePod fails with it (its record could not be saved). */
  failUpdates?: Error;
  updatePod(update: UpdatePodOptionsMessage, resumeFrom?: number): Promise<void> {
    this.updates.push({ update, resumeFrom });
    return this.failUpdates ? Promise.reject(this.failUpdates) : Promise.resolve();
  }
  async release(owns: (uid: string) => boolean): Promise<void> {
    for (const uid of this.views.keys()) if (owns(uid)) this.released.push(uid);
    await this.hold;
  }
  forget(uid: string): void {
    this.forgotten.push(uid);
  }
  worker(uid: string): PodWorkerView | undefined {
    return this.views.get(uid);
  }
  /** "uid:updateType" of each update, then forgets them. */
  take(): string[] {
    const out = this.updates.map((u) => `${u.update.pod.metadata.uid ?? ''}:${u.update.updateType}`);
    this.updates.length = 0;
    return out;
  }
}

const pod = (uid: string, image = 'busybox', grace = 30): Pod => ({ metadata: { uid, name: `p-${uid}`, namespace: 'default' }, spec: { containers: [{ name: 'c', image }], terminationGracePeriodSeconds: grace } });
const record = (uid: string, o: Partial<PodRecord> = {}): PodRecord => ({ pod: pod(uid), source: 'file', addedAt: 0, admitted: true, terminationRequested: false, ...o });

/** A UID in `shard`, the n-th one found. */
function uidIn(shard: number, n = 0): string {
  for (let i = 0, found = 0; ; i++) if (shardOf(`uid-${i}`, SHARDS) === shard && found++ === n) return `uid-${i}`;
}

function setup(withFences = false) {
  const workers = new RecordingWorkers();
  const desired = new MemoryDesiredPods();
  const store = new MemoryWorkerStore();
  const cache = new MemoryPodCache();
  const subs = new FakeWorkSubscriptions();
  const clock = new FakeClock(T0);
  const fences = new ShardFences({ clock, leaseMs: LEASE, shardCount: SHARDS });
  const work = new ShardWork({ workers, desired, records: store, cache, subscriptions: subs, clock, logger: silentLogger(), options: { shardCount: SHARDS, settleMs: SETTLE }, ...(withFences ? { fences } : {}) });
  return { workers, desired, store, cache, subs, clock, work, fences };
}

describe('ShardWork: following a shard', () => {
  it('acquiring a shard resyncs its admitted pods from the podManager: SyncPodSync, or SyncPodKill when termination was asked', async () => {
    const { work, desired, workers, clock } = setup();
    const [a, b, c, d] = [uidIn(1, 0), uidIn(1, 1), uidIn(1, 2), uidIn(2, 0)];
    desired.pods.set(a, record(a));
    desired.pods.set(b, record(b, { terminationRequested: true }));
    desired.pods.set(c, record(c, { admitted: false }));
    desired.pods.set(d, record(d));
    await work.acquire(1);
    assert.deepEqual(workers.updates.map((u) => `${u.update.pod.metadata.uid ?? ''}:${u.update.updateType}`), [`${a}:SyncPodSync`, `${b}:SyncPodKill`]);
    assert.ok(workers.updates.every((u) => u.resumeFrom === clock.now()), 'the workers resume from the takeover');
  });

  it('follows the shard\'s work subject until the shard is lost', async () => {
    const { work, subs, workers } = setup();
    await work.acquire(2);
    await work.acquire(3);
    assert.deepEqual(subs.followed, [2, 3]);
    const update: UpdatePodOptionsMessage = { type: MessageTypes.updatePodOptions, updateType: 'SyncPodCreate', startTime: new Date(0).toISOString(), pod: pod(uidIn(2)) };
    assert.ok(subs.deliver(2, update));
    assert.equal(workers.updates.length, 1);
    work.lose(2);
    assert.deepEqual(subs.followed, [3]);
    assert.equal(subs.deliver(2, update), false);
  });

  it('takes (and so answers) work only while the shard\'s lease holds: a replica stalled past it takes nothing, and the sync loop sends it again', async () => {
    const { work, subs, workers, fences, clock } = setup(true);
    fences.hold(2, { revision: 7, expiresAt: T0 + LEASE });
    await work.acquire(2);
    const update: UpdatePodOptionsMessage = { type: MessageTypes.updatePodOptions, updateType: 'SyncPodCreate', startTime: new Date(0).toISOString(), pod: pod(uidIn(2)) };
    assert.ok(subs.deliver(2, update));
    await clock.step(LEASE); // stalled: no round renewed the lease
    assert.ok(subs.deliver(2, update));
    assert.ok(subs.deliver(2, '{not json'));
    assert.deepEqual(await subs.answers(), [true, false, false], 'taken, then refused; a malformed message is not taken either');
    assert.equal(workers.updates.length, 1);
  });

  it('work is taken (and so answered) only once UpdatePod stored it: a save that failed leaves it unanswered, so the sync loop sends it again', async () => {
    const { work, subs, workers } = setup();
    await work.acquire(2);
    const update: UpdatePodOptionsMessage = { type: MessageTypes.updatePodOptions, updateType: 'SyncPodCreate', startTime: new Date(0).toISOString(), pod: pod(uidIn(2)) };
    workers.failUpdates = new Error('not the owner of pod-worker shard 2: refused to write the workers record');
    assert.ok(subs.deliver(2, update));
    workers.failUpdates = undefined;
    assert.ok(subs.deliver(2, update)); // sent again
    assert.deepEqual(await subs.answers(), [false, true]);
  });

  it('lose lets go of the shard\'s workers at once; handBack resolves only once their steps in flight are done', async () => {
    const { work, subs, workers } = setup();
    const [a, b] = [uidIn(2), uidIn(3)];
    workers.views.set(a, { record: { syncedAt: 1 }, pod: pod(a), working: true, lastSyncEnd: 0 });
    workers.views.set(b, { record: { syncedAt: 1 }, pod: pod(b), working: true, lastSyncEnd: 0 });
    await work.acquire(2);
    await work.acquire(3);
    let release: () => void = () => undefined;
    workers.hold = new Promise<void>((r) => (release = r));
    let handedBack = false;
    const done = work.handBack(3).then(() => (handedBack = true));
    await new Promise((r) => setImmediate(r));
    assert.deepEqual(subs.followed, [2], 'no more updates for the shard\'s pods');
    assert.deepEqual(workers.released, [b]);
    assert.equal(handedBack, false, 'not before the step in flight ends');
    release();
    await done;
    assert.equal(handedBack, true);
    workers.hold = new Promise<void>(() => undefined);
    work.lose(2); // does not wait
    assert.deepEqual(subs.followed, []);
    assert.deepEqual(workers.released, [b, a]);
  });

  const malformed = [
    { name: 'not JSON', body: '{nope' },
    { name: 'not an UpdatePodOptions', body: { type: 'kubelet.v1.something_else' } },
    // docs/adr/0034-version-skew-policy.md: a type version this build does not read is refused, never half-read.
    { name: 'an UpdatePodOptions of a version this build does not read', body: { type: 'kubelet.v2.update_pod_options', updateType: 'SyncPodSync', startTime: new Date(0).toISOString(), pod: pod('uid-v2') } },
  ];
  for (const tc of malformed) {
    it(`a work message that is ${tc.name} is dropped and the shard keeps working`, async () => {
      const { work, subs, workers } = setup();
      await work.acquire(0);
      assert.ok(subs.deliver(0, tc.body));
      assert.equal(workers.updates.length, 0);
      assert.ok(subs.deliver(0, { type: MessageTypes.updatePodOptions, updateType: 'SyncPodSync', startTime: new Date(0).toISOString(), pod: pod(uidIn(0)) }));
      assert.equal(workers.updates.length, 1);
    });
  }
});

describe('ShardWork: the periodic pass reads the mirrors (docs/adr/0019-kv-mirrors.md)', () => {
  it('lists neither bucket; with nothing to repair it reads no key either', async () => {
    const { work, desired, store, workers, clock } = setup();
    const a = uidIn(1);
    desired.pods.set(a, record(a));
    await work.acquire(1);
    assert.equal(desired.listings + store.listings, 2, 'the takeover lists both buckets');
    workers.views.set(a, { record: { syncedAt: 1 }, pod: pod(a), working: false, lastSyncEnd: T0 });
    workers.take();
    await clock.step(SETTLE);
    await work.housekeeping();
    assert.deepEqual(workers.take(), []);
    assert.equal(desired.listings + store.listings, 2, 'no listing');
    assert.equal(desired.gets + store.loads, 0, 'no get');
  });

  it('does not kill a pod the sync loop has just added while the pods mirror has not brought it yet', async () => {
    const { work, desired, store, workers, clock } = setup();
    await work.acquire(1);
    await clock.step(SETTLE);
    const a = uidIn(1);
    // The sync loop wrote the pod, then dispatched SyncPodCreate; the worker here has it (and its record), the pods mirror not yet.
    desired.lagging = new Map();
    desired.pods.set(a, record(a, { addedAt: clock.now() }));
    workers.views.set(a, { record: { syncedAt: clock.now() }, pod: pod(a), working: false, lastSyncEnd: clock.now() });
    store.records.set(a, { syncedAt: clock.now() });
    await work.housekeeping();
    assert.deepEqual(workers.take(), []);
    assert.equal(desired.gets, 1, 'read again before acting');
  });

  it('repairs a lost kill once the bucket confirms the pod is gone', async () => {
    const { work, store, workers, clock } = setup();
    await work.acquire(1);
    await clock.step(SETTLE);
    const a = uidIn(1);
    workers.views.set(a, { record: { syncedAt: 1 }, pod: pod(a), working: false, lastSyncEnd: 0 });
    store.records.set(a, { syncedAt: 1 });
    await work.housekeeping();
    assert.deepEqual(workers.take(), [`${a}:SyncPodKill`]);
  });

  it('does not purge a finished record the mirror shows for a pod added again meanwhile', async () => {
    const { work, desired, store, clock } = setup();
    const a = uidIn(1);
    store.records.set(a, { syncedAt: 1, terminatedAt: T0, finished: true });
    await work.acquire(1);
    await clock.step(FINISHED_RECORD_KEEP_MS);
    desired.lagging = new Map();
    desired.pods.set(a, record(a, { addedAt: clock.now() }));
    await work.housekeeping();
    assert.deepEqual(store.deletes, []);
    desired.pods.delete(a);
    await work.housekeeping();
    assert.deepEqual(store.deletes, [a], 'purged once no longer desired');
  });
});

describe('decideShardWork: every pod of a shard re-derived from the state', () => {
  const NOW = 100_000;
  const idle = (uid: string, rec: PodSyncStatusRecord, o: Partial<PodWorkerView> = {}): PodWorkerView => ({ record: rec, pod: pod(uid), working: false, lastSyncEnd: NOW - 10_000, ...o });
  const cases: { name: string; pod: Omit<ShardPod, 'uid'>; takeover?: boolean; want: string[] }[] = [
    // Taking a shard over: the workers' records say what each pod was doing.
    { name: 'takeover: a desired pod is resynced', takeover: true, pod: { desired: record('u') }, want: ['SyncPodSync'] },
    { name: 'takeover: a desired pod whose termination was asked is killed', takeover: true, pod: { desired: record('u', { terminationRequested: true, pod: { ...pod('u'), metadata: { ...pod('u').metadata, deletionGracePeriodSeconds: 5 } } }) }, want: ['SyncPodKill grace=5'] },
    { name: 'takeover: a desired pod that was terminating goes on terminating', takeover: true, pod: { desired: record('u'), record: { syncedAt: 1, terminatingAt: 2, gracePeriod: 7 } }, want: ['SyncPodKill'] },
    { name: 'takeover: a pod removed while its shard had no owner is killed with its own pod (grace, hooks)', takeover: true, pod: { record: { syncedAt: 1, pod: pod('u', 'busybox', 9) } }, want: ['SyncPodKill pod=busybox'] },
    { name: 'takeover: a removed pod that was terminating when its owner died is finished', takeover: true, pod: { record: { syncedAt: 1, terminatingAt: 2, gracePeriod: 7, pod: pod('u') } }, want: ['SyncPodKill pod=busybox'] },
    { name: 'takeover: a removed pod that was between TerminatingPod and TerminatedPod is finished', takeover: true, pod: { record: { terminatingAt: 2, terminatedAt: 3, pod: pod('u') } }, want: ['SyncPodKill pod=busybox'] },
    { name: 'takeover: a runtime pod killed on its own (no pod in its record) is killed as a running pod, with its record\'s grace', takeover: true, pod: { record: { terminatingAt: 2, gracePeriod: 1 }, cache: { name: 'x', namespace: 'ns', timestamp: 1 } }, want: ['SyncPodKill runningPodOnly grace=1 name=ns/x'] },
    { name: 'takeover: a rejected pod is left alone', takeover: true, pod: { desired: record('u', { admitted: false }) }, want: [] },
    { name: 'takeover: a finished desired pod is left alone (housekeeping restarts one added again)', takeover: true, pod: { desired: record('u'), record: { terminatedAt: 3, finished: true } }, want: [] },
    // Every housekeeping period, with this replica's workers in memory.
    { name: 'a kill lost while the owner lived: the worker still syncs a pod no longer desired', pod: { record: { syncedAt: 1 }, worker: idle('u', { syncedAt: 1, pod: pod('u') }) }, want: ['SyncPodKill pod=busybox'] },
    { name: 'a kill lost: termination asked, the worker still syncs', pod: { desired: record('u', { terminationRequested: true }), worker: idle('u', { syncedAt: 1 }) }, want: ['SyncPodKill'] },
    { name: 'a worker with a step in flight is left to finish it', pod: { record: { syncedAt: 1 }, worker: idle('u', { syncedAt: 1 }, { working: true }) }, want: [] },
    { name: 'a terminating worker drives itself', pod: { record: { terminatingAt: 1 }, worker: idle('u', { terminatingAt: 1 }) }, want: [] },
    { name: 'a create lost: a pod added a while ago with no worker here is synced', pod: { desired: record('u', { addedAt: NOW - SETTLE }) }, want: ['SyncPodSync'] },
    { name: 'a pod just added is left to the create on its way', pod: { desired: record('u', { addedAt: NOW - SETTLE + 1 }) }, want: [] },
    { name: 'an update lost: the worker has an older spec', pod: { desired: record('u', { pod: pod('u', 'busybox:2') }), worker: idle('u', { syncedAt: 1 }) }, want: ['SyncPodUpdate'] },
    { name: 'a PLEG event lost: the runtime changed after the last sync, a period ago', pod: { desired: record('u'), worker: idle('u', { syncedAt: 1 }), cache: { name: 'p-u', namespace: 'default', timestamp: NOW - SETTLE } }, want: ['SyncPodSync'] },
    { name: 'a runtime change just seen is left to the PLEG event on its way', pod: { desired: record('u'), worker: idle('u', { syncedAt: 1 }), cache: { name: 'p-u', namespace: 'default', timestamp: NOW - 1 } }, want: [] },
    { name: 'a runtime change older than the last sync needs nothing', pod: { desired: record('u'), worker: idle('u', { syncedAt: 1 }, { lastSyncEnd: NOW - 5000 }), cache: { name: 'p-u', namespace: 'default', timestamp: NOW - 6000 } }, want: [] },
    { name: 'an idle worker in step with everything is left alone', pod: { desired: record('u'), worker: idle('u', { syncedAt: 1 }) }, want: [] },
    // SyncKnownPods: the records of pods that finished and are gone are purged; desired ones are kept.
    { name: 'a finished worker of a pod no longer desired is purged', pod: { record: { terminatedAt: 3, finished: true } }, want: ['purge'] },
    { name: 'a finished worker of a pod gone for less than 10 s is kept (a quick re-add is still a restart)', pod: { record: { terminatedAt: NOW - 9_999, finished: true } }, want: [] },
    { name: 'a finished worker of a desired pod is kept (it must not start again)', pod: { desired: record('u'), record: { terminatedAt: 3, finished: true } }, want: [] },
    { name: 'a runtime pod with no record and no desired pod is left to the sync loop\'s housekeeping', pod: { cache: { name: 'x', namespace: 'ns', timestamp: 1 } }, want: [] },
  ];
  for (const tc of cases) {
    it(tc.name, () => {
      const actions = decideShardWork([{ uid: 'u', ...tc.pod }], { now: NOW, takeover: tc.takeover ?? false, settleMs: SETTLE });
      const described = actions.map((a) => {
        if (a.kind === 'purge') return 'purge';
        const extra = [
          a.runningPodOnly ? 'runningPodOnly' : '',
          a.gracePeriodOverride !== undefined ? `grace=${a.gracePeriodOverride}` : '',
          a.runningPodOnly ? `name=${a.pod.metadata.namespace ?? ''}/${a.pod.metadata.name ?? ''}` : '',
          tc.pod.desired ? '' : a.runningPodOnly ? '' : `pod=${a.pod.spec.containers[0]?.image ?? ''}`,
        ].filter(Boolean);
        return [a.updateType, ...extra].join(' ');
      });
      assert.deepEqual(described, tc.want);
    });
  }
});

/** A syncer that records each step; every step succeeds. */
class RecordingSyncer extends PodSyncer {
  readonly steps: string[] = [];
  readonly grace: number[] = [];
  syncPod(t: SyncPodType, p: Pod, _c: CacheResult): Promise<SyncPodResult> {
    this.steps.push(`sync:${t}:${p.metadata.uid ?? ''}`);
    return Promise.resolve({ terminal: false });
  }
  syncTerminatingPod(p: Pod, _c: CacheResult, grace: number, _k: KillPodOptions | undefined): Promise<void> {
    this.steps.push(`terminating:${p.metadata.uid ?? ''}`);
    this.grace.push(grace);
    return Promise.resolve();
  }
  syncTerminatedPod(p: Pod): Promise<void> {
    this.steps.push(`terminated:${p.metadata.uid ?? ''}`);
    return Promise.resolve();
  }
}

class NoQueue extends WorkQueue {
  enqueue(): void {}
}

/** One pod-worker replica: real PodWorkers on the shared `workers` store, its ShardWork following shards. */
function podWorkerReplica(shared: { desired: MemoryDesiredPods; store: MemoryWorkerStore; cache: MemoryPodCache; clock: FakeClock }) {
  const syncer = new RecordingSyncer();
  const workers = new PodWorkers({ syncer, store: shared.store, queue: new NoQueue(), cache: shared.cache, clock: shared.clock, logger: silentLogger(), gracePeriodOf: (p, o) => o ?? p.spec.terminationGracePeriodSeconds ?? 30, options: { resyncIntervalMs: 60_000, backOffMs: 10_000, random: () => 0 } });
  const subs = new FakeWorkSubscriptions();
  const work = new ShardWork({ workers, desired: shared.desired, records: shared.store, cache: shared.cache, subscriptions: subs, clock: shared.clock, logger: silentLogger(), options: { shardCount: SHARDS, settleMs: SETTLE } });
  return { syncer, workers, subs, work };
}

describe('ShardWork with real pod workers: nothing a lost message leaves behind stays', () => {
  function node() {
    const shared = { desired: new MemoryDesiredPods(), store: new MemoryWorkerStore(), cache: new MemoryPodCache(), clock: new FakeClock(T0) };
    /** A relist: time passes and the pod cache is newer, so waiting workers act. */
    const relist = async () => {
      await shared.clock.step(1000);
      shared.cache.updateTime(shared.clock.now());
      await shared.clock.step(0);
    };
    return { ...shared, relist };
  }

  it('a pod removed while the replica owning its shard was dead (its kill lost) is killed by the next owner, then its record purged', async () => {
    const n = node();
    const uid = uidIn(1);
    n.desired.pods.set(uid, { ...record(uid), pod: pod(uid, 'busybox', 9) });
    const a = podWorkerReplica(n);
    await a.work.acquire(1);
    await n.relist();
    assert.deepEqual(a.syncer.steps, [`sync:SyncPodSync:${uid}`]);
    // a dies; the manifest is removed: the pod leaves the podManager, and the SyncPodKill sent to shard 1 finds nobody.
    await a.workers.stop();
    n.desired.pods.delete(uid);
    const b = podWorkerReplica(n);
    await b.work.acquire(1);
    await n.relist();
    await n.relist();
    assert.deepEqual(b.syncer.steps, [`terminating:${uid}`, `terminated:${uid}`]);
    assert.deepEqual(b.syncer.grace, [9], 'with the pod\'s own grace period, from its record');
    assert.equal(n.store.records.get(uid)?.finished, true);
    await b.work.housekeeping();
    assert.equal(n.store.records.has(uid), true, 'kept for a while after it terminated');
    await n.clock.step(10_000);
    await b.work.housekeeping();
    assert.equal(n.store.records.has(uid), false, 'the finished record of a pod gone is purged (SyncKnownPods)');
    assert.equal(b.workers.worker(uid), undefined, 'and its worker forgotten');
  });

  it('a pod that was terminating when its owner died is finished by the next owner', async () => {
    const n = node();
    const uid = uidIn(2);
    n.desired.pods.set(uid, record(uid));
    const a = podWorkerReplica(n);
    await a.work.acquire(2);
    await n.relist();
    await a.workers.updatePod({ type: MessageTypes.updatePodOptions, updateType: 'SyncPodKill', startTime: new Date(T0).toISOString(), pod: pod(uid), killPodOptions: { gracePeriodOverride: 4 } });
    n.desired.pods.delete(uid); // removed; a dies before its kill runs
    await a.workers.stop();
    assert.equal(n.store.records.get(uid)?.terminatingAt !== undefined, true);
    const b = podWorkerReplica(n);
    await b.work.acquire(2);
    await n.relist();
    await n.relist();
    assert.deepEqual(b.syncer.steps, [`terminating:${uid}`, `terminated:${uid}`]);
    assert.deepEqual(b.syncer.grace, [4], 'the grace period it was terminating with');
  });

  it('a kill lost while the owner lives is repaired at its next housekeeping', async () => {
    const n = node();
    const uid = uidIn(3);
    n.desired.pods.set(uid, record(uid));
    const a = podWorkerReplica(n);
    await a.work.acquire(3);
    await n.relist();
    n.desired.pods.delete(uid); // the REMOVE's SyncPodKill is lost
    await a.work.housekeeping();
    await n.relist();
    await n.relist();
    assert.deepEqual(a.syncer.steps, [`sync:SyncPodSync:${uid}`, `terminating:${uid}`, `terminated:${uid}`]);
  });

  it('a kill delivered twice terminates once', async () => {
    const n = node();
    const uid = uidIn(0);
    n.desired.pods.set(uid, record(uid));
    const a = podWorkerReplica(n);
    await a.work.acquire(0);
    await n.relist();
    n.desired.pods.delete(uid);
    const kill: UpdatePodOptionsMessage = { type: MessageTypes.updatePodOptions, updateType: 'SyncPodKill', startTime: new Date(T0).toISOString(), pod: pod(uid) };
    assert.ok(a.subs.deliver(0, kill));
    await a.work.housekeeping();
    assert.ok(a.subs.deliver(0, kill));
    for (let i = 0; i < 4; i++) await n.relist();
    assert.deepEqual(a.syncer.steps, [`sync:SyncPodSync:${uid}`, `terminating:${uid}`, `terminated:${uid}`]);
  });
});

describe('PodWorkerHousekeeping', () => {
  it('runs the shards\' reconciliation and the restart back-off\'s GC every period', async () => {
    const clock = new FakeClock(T0);
    const backOff = new CrashLoopBackOff({ initialMs: 1000, maxMs: 4000 });
    backOff.next('p_default_u_c_h', T0);
    let rounds = 0;
    const hk = new PodWorkerHousekeeping({ work: { housekeeping: () => Promise.resolve(++rounds) }, backOff, clock, logger: silentLogger(), periodMs: SETTLE });
    hk.start();
    await clock.step(SETTLE);
    assert.equal(rounds, 1);
    assert.equal(backOff.delay('p_default_u_c_h'), 1000, 'not GCed while recent');
    await clock.step(4 * SETTLE);
    assert.equal(rounds, 5);
    assert.equal(backOff.delay('p_default_u_c_h'), 0, 'an entry untouched for 2 * max is dropped');
    hk.stop();
    await clock.step(10 * SETTLE);
    assert.equal(rounds, 5, 'a stopped housekeeping does nothing');
  });
});
