import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { FakeClock } from '@app/clock/testing';
import { MessageTypes, type Pod, type PodOperation, type PodUpdateMessage } from '@app/contracts';
import { RecordingEventRecorder } from '@app/contracts/testing';
import { nodeInfoFrom } from '@app/kube';
import { silentLogger } from '@app/observability';
import { FakeNodeState, FakeRuntimeView, MemoryPodStore, RecordingOutbox } from './testing.js';
import { SyncLoop, pastActiveDeadline } from './sync-loop.js';
import { RuntimeCache } from './runtime-cache.js';

const T0 = Date.UTC(2026, 10, 1, 12, 0, 0);

function pod(uid: string, opts: { image?: string; cpu?: string; created?: string; deadline?: number; gates?: boolean; grace?: number; deleting?: boolean } = {}): Pod {
  return {
    metadata: {
      name: `pod-${uid}`,
      namespace: 'default',
      uid,
      ...(opts.created ? { creationTimestamp: opts.created } : {}),
      annotations: { 'kubernetes.io/config.source': 'file' },
      ...(opts.deleting ? { deletionTimestamp: '2026-11-01T12:00:00Z', deletionGracePeriodSeconds: opts.grace ?? 30 } : {}),
    },
    spec: {
      containers: [{ name: 'c', image: opts.image ?? 'busybox:1', ...(opts.cpu ? { resources: { requests: { cpu: opts.cpu } } } : {}) }],
      ...(opts.deadline ? { activeDeadlineSeconds: opts.deadline } : {}),
      ...(opts.gates ? { readinessGates: [{ conditionType: 'example.com/ready' }] } : {}),
    },
  };
}

const update = (op: PodOperation, ...pods: Pod[]): PodUpdateMessage => ({ type: MessageTypes.podUpdate, op, source: 'file', pods });

function setup(store = new MemoryPodStore(), nodeLabels?: { read(): Promise<Record<string, string> | undefined> }) {
  const clock = new FakeClock(T0);
  const nodeState = new FakeNodeState();
  const runtime = new FakeRuntimeView();
  const out = new RecordingOutbox();
  const events = new RecordingEventRecorder();
  const node = nodeInfoFrom({ name: 'node-a', cpu: '2', memory: '4Gi', maxPods: 3 });
  const loop = new SyncLoop({ store, nodeState, runtime, out, events, clock, logger: silentLogger(), ...(nodeLabels ? { nodeLabels } : {}) }, node);
  return { loop, store, clock, nodeState, runtime, out, events };
}

describe('SyncLoop: configCh', () => {
  it('ADD dispatches SyncPodCreate; the same ADD again dispatches nothing', async () => {
    const { loop, out } = setup();
    await loop.handlePodUpdate(update('add', pod('a')));
    assert.deepEqual(out.take(), ['a:SyncPodCreate']);
    await loop.handlePodUpdate(update('add', pod('a')));
    assert.deepEqual(out.take(), []);
  });

  it('an ADD of a known pod with another spec is an update', async () => {
    const { loop, out } = setup();
    await loop.handlePodUpdate(update('add', pod('a')));
    out.take();
    await loop.handlePodUpdate(update('add', pod('a', { image: 'busybox:2' })));
    assert.deepEqual(out.take(), ['a:SyncPodUpdate']);
  });

  it('ADDs are handled in creation order', async () => {
    const { loop, out } = setup();
    await loop.handlePodUpdate(update('add', pod('late', { created: '2026-01-02T00:00:00Z' }), pod('early', { created: '2026-01-01T00:00:00Z' })));
    assert.deepEqual(out.take(), ['early:SyncPodCreate', 'late:SyncPodCreate']);
  });

  it('UPDATE dispatches SyncPodUpdate only when the pod changed', async () => {
    const { loop, out } = setup();
    await loop.handlePodUpdate(update('add', pod('a')));
    out.take();
    await loop.handlePodUpdate(update('update', pod('a')));
    assert.deepEqual(out.take(), []);
    await loop.handlePodUpdate(update('update', pod('a', { image: 'x:1' })));
    assert.deepEqual(out.take(), ['a:SyncPodUpdate']);
  });

  it('REMOVE kills the pod and forgets it; a second REMOVE does nothing', async () => {
    const { loop, out, store } = setup();
    await loop.handlePodUpdate(update('add', pod('a')));
    out.take();
    await loop.handlePodUpdate(update('remove', pod('a')));
    assert.deepEqual(out.take(), ['a:SyncPodKill']);
    assert.equal(store.pods.has('a'), false);
    await loop.handlePodUpdate(update('remove', pod('a')));
    assert.deepEqual(out.take(), []);
  });

  it('DELETE is a graceful termination request with the deletion grace period', async () => {
    const { loop, out, store } = setup();
    await loop.handlePodUpdate(update('add', pod('a')));
    out.take();
    await loop.handlePodUpdate(update('delete', pod('a', { deleting: true, grace: 7 })));
    assert.deepEqual(out.dispatched, [{ uid: 'a', updateType: 'SyncPodKill', killPodOptions: { gracePeriodOverride: 7 }, runningPodOnly: false }]);
    assert.equal(store.pods.get('a')?.terminationRequested, true);
  });

  it('RECONCILE syncs only pods with readiness gates', async () => {
    const { loop, out } = setup();
    await loop.handlePodUpdate(update('add', pod('plain'), pod('gated', { gates: true })));
    out.take();
    const withStatus = (p: Pod): Pod => ({ ...p, status: { phase: 'Running' } });
    await loop.handlePodUpdate(update('reconcile', withStatus(pod('plain')), withStatus(pod('gated', { gates: true }))));
    assert.deepEqual(out.take(), ['gated:SyncPodSync']);
  });

  it('a pod that does not fit is rejected: no dispatch, Failed status with the reason, a Warning event', async () => {
    const { loop, out, store, events } = setup();
    await loop.handlePodUpdate(update('add', pod('big', { cpu: '3' })));
    assert.deepEqual(out.take(), []);
    assert.equal(store.pods.get('big')?.admitted, false);
    assert.equal(out.statuses[0]?.verb, 'SetPodStatus');
    const status = out.statuses[0]?.args['status'] as { phase: string; reason: string; message: string };
    assert.equal(status.phase, 'Failed');
    assert.equal(status.reason, 'OutOfcpu');
    assert.match(status.message, /^Pod was rejected: /);
    assert.equal(events.events[0]?.reason, 'OutOfcpu');
    assert.equal(events.events[0]?.type, 'Warning');
    // A rejected pod that is removed is not killed: it never ran.
    await loop.handlePodUpdate(update('remove', pod('big', { cpu: '3' })));
    assert.deepEqual(out.take(), []);
  });

  it("a pod asking for SupplementalGroupsPolicy Strict: admitted where the runtime's Status says it honours it, rejected where it says nothing of it", async () => {
    const strict = (uid: string): Pod => {
      const p = pod(uid);
      p.spec.securityContext = { supplementalGroupsPolicy: 'Strict' } as Pod['spec']['securityContext'];
      return p;
    };
    const said: { features?: { supplementalGroupsPolicy: boolean } } = {};
    const clock = new FakeClock(T0);
    const out = new RecordingOutbox();
    const loop = new SyncLoop(
      { store: new MemoryPodStore(), nodeState: new FakeNodeState(), runtime: new FakeRuntimeView(), out, events: new RecordingEventRecorder(), clock, logger: silentLogger(), runtimeFeatures: () => said.features },
      nodeInfoFrom({ name: 'node-a', cpu: '2', memory: '4Gi', maxPods: 3 }),
    );
    await loop.handlePodUpdate(update('add', strict('old-runtime')));
    assert.deepEqual(out.take(), [], 'containerd 1.6: no features');
    assert.deepEqual(out.statuses[0]?.args['status'], { phase: 'Failed', reason: 'SupplementalGroupsPolicyNotSupported', message: 'Pod was rejected: SupplementalGroupsPolicy=Strict is not supported in this node', qosClass: 'BestEffort' });
    said.features = { supplementalGroupsPolicy: true };
    await loop.handlePodUpdate(update('add', strict('new-runtime')));
    assert.deepEqual(out.take(), ['new-runtime:SyncPodCreate'], 'containerd 2');
  });

  it('max pods counts only active admitted pods', async () => {
    const { loop, out } = setup();
    await loop.handlePodUpdate(update('add', pod('a'), pod('b'), pod('c'), pod('d')));
    assert.deepEqual(out.take(), ['a:SyncPodCreate', 'b:SyncPodCreate', 'c:SyncPodCreate']);
    assert.equal(out.statuses.at(-1)?.uid, 'd');
    assert.equal((out.statuses.at(-1)?.args['status'] as { reason: string }).reason, 'OutOfpods');
  });
});

describe('SyncLoop: restart from KV', () => {
  it('a new sync loop on the same store knows the pods and dispatches nothing for the same ADD', async () => {
    const store = new MemoryPodStore();
    const first = setup(store);
    await first.loop.handlePodUpdate(update('add', pod('a'), pod('b')));
    const second = setup(store);
    await second.loop.restore();
    assert.deepEqual([...second.loop.desiredPods.keys()].sort(), ['a', 'b']);
    await second.loop.handlePodUpdate(update('add', pod('a'), pod('b')));
    assert.deepEqual(second.out.take(), []);
  });

  it('reconcileWithSources repairs an ADD and a REMOVE lost while it was down', async () => {
    const { loop, out } = setup();
    await loop.handlePodUpdate(update('add', pod('stale')));
    out.take();
    out.snapshot = { type: MessageTypes.sourcesSnapshot, sources: [{ source: 'file', ready: true, pods: [pod('fresh')] }] };
    assert.equal(loop.areSourcesReady, false);
    assert.equal(await loop.reconcileWithSources(), true);
    assert.deepEqual(out.take(), ['stale:SyncPodKill', 'fresh:SyncPodCreate']);
    assert.equal(loop.areSourcesReady, true);
    await loop.reconcileWithSources();
    assert.deepEqual(out.take(), []);
  });
});

describe('SyncLoop: a config operation whose KV write fails (NATS away)', () => {
  const cases: { name: string; before: Pod[]; op: PodUpdateMessage; listing: Pod[]; want: string[] }[] = [
    { name: 'an ADD: the next reconciliation adds and dispatches it', before: [], op: update('add', pod('a')), listing: [pod('a')], want: ['a:SyncPodCreate'] },
    { name: 'an UPDATE: the next reconciliation updates it', before: [pod('a')], op: update('update', pod('a', { image: 'busybox:2' })), listing: [pod('a', { image: 'busybox:2' })], want: ['a:SyncPodUpdate'] },
    { name: 'a REMOVE: the next reconciliation removes and kills it', before: [pod('a')], op: update('remove', pod('a')), listing: [], want: ['a:SyncPodKill'] },
  ];
  for (const tc of cases) {
    it(tc.name, async () => {
      const store = new MemoryPodStore();
      const { loop, out } = setup(store);
      for (const p of tc.before) await loop.handlePodUpdate(update('add', p));
      out.take();
      store.failWrites = true;
      await assert.rejects(loop.handlePodUpdate(tc.op));
      store.failWrites = false;
      out.take();
      out.snapshot = { type: MessageTypes.sourcesSnapshot, sources: [{ source: 'file', ready: true, pods: tc.listing }] };
      await loop.reconcileWithSources();
      assert.deepEqual(out.take(), tc.want);
    });
  }
});

describe('SyncLoop: syncCh (getPodsToSync)', () => {
  it('syncs a pod when its work-queue time comes, not before, and the queue survives a restart', async () => {
    const store = new MemoryPodStore();
    const { loop, out, clock } = setup(store);
    await loop.handlePodUpdate(update('add', pod('a')));
    out.take();
    await loop.handleWorkDone({ type: MessageTypes.workDone, podUid: 'a', requeueAfterMs: 10_000 });
    await clock.step(9_999);
    assert.deepEqual(await loop.syncTick(), []);
    const restarted = setup(store);
    await restarted.clock.step(10_000);
    await restarted.loop.restore();
    assert.deepEqual(await restarted.loop.syncTick(), ['a']);
    assert.deepEqual(restarted.out.take(), ['a:SyncPodSync']);
    assert.deepEqual(await restarted.loop.syncTick(), [], 'taken off the queue once synced');
  });

  it('syncs a pod past its activeDeadlineSeconds', async () => {
    const { loop, out, nodeState, clock } = setup();
    await loop.handlePodUpdate(update('add', pod('a', { deadline: 30 })));
    out.take();
    nodeState.statuses.set('a', { phase: 'Running', startTime: new Date(T0).toISOString() });
    await clock.step(29_000);
    assert.deepEqual(await loop.syncTick(), []);
    await clock.step(1_000);
    assert.deepEqual(await loop.syncTick(), ['a']);
    nodeState.statuses.set('a', { phase: 'Failed', reason: 'DeadlineExceeded', startTime: new Date(T0).toISOString() });
    assert.deepEqual(await loop.syncTick(), [], 'a terminal pod is not synced for its deadline');
  });

  it('pastActiveDeadline', () => {
    const p = pod('a', { deadline: 10 });
    assert.equal(pastActiveDeadline(p, undefined, T0), false, 'not started');
    assert.equal(pastActiveDeadline(p, { startTime: new Date(T0).toISOString() }, T0 + 9_999), false);
    assert.equal(pastActiveDeadline(p, { startTime: new Date(T0).toISOString() }, T0 + 10_000), true);
    assert.equal(pastActiveDeadline(pod('b'), { startTime: new Date(T0).toISOString() }, T0 + 1e9), false, 'no deadline');
  });
});

describe('SyncLoop: a lost work-done', () => {
  it('an admitted pod whose work-done never came is queued by housekeeping and synced after the resync interval', async () => {
    const { loop, out, clock, store } = setup();
    await loop.handlePodUpdate(update('add', pod('a'), pod('big', { cpu: '64' })));
    loop.handleSourcesReady();
    assert.deepEqual(out.take(), ['a:SyncPodCreate'], 'big is rejected');
    // The pod worker's work-done for a is lost.
    await loop.housekeeping();
    assert.equal(store.queue.get('a'), T0 + 60_000, 'queued in KV, so a restart keeps it');
    assert.equal(store.queue.has('big'), false, 'a rejected pod is never synced');
    await clock.step(59_999);
    assert.deepEqual(await loop.syncTick(), []);
    await clock.step(1);
    assert.deepEqual(await loop.syncTick(), ['a']);
    assert.deepEqual(out.take(), ['a:SyncPodSync']);
  });

  it('a work-done that does come sets the due time; housekeeping leaves a queued pod alone', async () => {
    const { loop, out, clock } = setup();
    await loop.handlePodUpdate(update('add', pod('a')));
    loop.handleSourcesReady();
    out.take();
    await loop.housekeeping();
    await loop.handleWorkDone({ type: MessageTypes.workDone, podUid: 'a', requeueAfterMs: 5_000 });
    await loop.housekeeping();
    await clock.step(5_000);
    assert.deepEqual(await loop.syncTick(), ['a']);
  });
});

describe('SyncLoop: plegCh and probes', () => {
  it('a sync-worthy PLEG event syncs a known pod; ContainerRemoved and unknown pods do not', async () => {
    const { loop, out } = setup();
    await loop.handlePodUpdate(update('add', pod('a')));
    out.take();
    await loop.handlePlegEvent({ type: MessageTypes.podLifecycleEvent, id: 'a', eventType: 'ContainerStarted', data: 'c1' });
    await loop.handlePlegEvent({ type: MessageTypes.podLifecycleEvent, id: 'a', eventType: 'ContainerRemoved', data: 'c1' });
    await loop.handlePlegEvent({ type: MessageTypes.podLifecycleEvent, id: 'zzz', eventType: 'ContainerStarted', data: 'c9' });
    assert.deepEqual(out.take(), ['a:SyncPodSync']);
  });

  it('ContainerDied removes dead containers of that name beyond the newest one', async () => {
    const { loop, runtime } = setup();
    await loop.handlePodUpdate(update('add', pod('a')));
    runtime.containers.set('a', [
      { id: 'old', name: 'c', state: 'CONTAINER_EXITED', createdAt: 1 },
      { id: 'newest', name: 'c', state: 'CONTAINER_EXITED', createdAt: 3 },
      { id: 'middle', name: 'c', state: 'CONTAINER_EXITED', createdAt: 2 },
      { id: 'running', name: 'c', state: 'CONTAINER_RUNNING', createdAt: 4 },
      { id: 'other', name: 'sidecar', state: 'CONTAINER_EXITED', createdAt: 1 },
    ]);
    await loop.handlePlegEvent({ type: MessageTypes.podLifecycleEvent, id: 'a', eventType: 'ContainerDied', data: 'newest' });
    assert.deepEqual(runtime.removed.sort(), ['middle', 'old']);
  });

  it('ContainerDied of a pod no longer desired leaves the clean-up to its pod worker', async () => {
    const { loop, runtime } = setup();
    runtime.containers.set('gone', [
      { id: 'x1', name: 'c', state: 'CONTAINER_EXITED', createdAt: 1 },
      { id: 'x2', name: 'c', state: 'CONTAINER_EXITED', createdAt: 2 },
    ]);
    await loop.handlePlegEvent({ type: MessageTypes.podLifecycleEvent, id: 'gone', eventType: 'ContainerDied', data: 'x2' });
    assert.deepEqual(runtime.removed, []);
  });

  const probeCases = [
    { name: 'liveness success: nothing', probeType: 'liveness' as const, result: 'Success' as const, want: [] },
    { name: 'liveness failure: sync', probeType: 'liveness' as const, result: 'Failure' as const, want: ['a:SyncPodSync'] },
    { name: 'readiness change: sync', probeType: 'readiness' as const, result: 'Success' as const, want: ['a:SyncPodSync'] },
    { name: 'startup change: sync', probeType: 'startup' as const, result: 'Failure' as const, want: ['a:SyncPodSync'] },
  ];
  for (const tc of probeCases) {
    it(tc.name, async () => {
      const { loop, out } = setup();
      await loop.handlePodUpdate(update('add', pod('a')));
      out.take();
      loop.handleProbeResult({ type: MessageTypes.probeResult, probeType: tc.probeType, podUid: 'a', containerId: 'c1', result: tc.result });
      assert.deepEqual(out.take(), tc.want);
    });
  }
});

describe('SyncLoop: housekeeping', () => {
  it('waits for the sources to be ready', async () => {
    const { loop, out, runtime } = setup();
    runtime.runtimePods = [{ uid: 'orphan', name: 'x', namespace: 'default', running: true }];
    await loop.housekeeping();
    assert.deepEqual(out.take(), []);
    assert.equal(out.probers.length, 0);
  });

  it('kills runtime pods nobody wants with a 1s grace, cleans probe workers and orphaned statuses', async () => {
    const { loop, out, runtime, nodeState } = setup();
    await loop.handlePodUpdate(update('add', pod('a')));
    loop.handleSourcesReady();
    out.take();
    runtime.runtimePods = [
      { uid: 'a', name: 'pod-a', namespace: 'default', running: true },
      { uid: 'orphan', name: 'x', namespace: 'default', running: true },
    ];
    nodeState.workers.set('a', { syncedAt: T0 });
    nodeState.statuses.set('gone', { phase: 'Running' });
    await loop.housekeeping();
    assert.deepEqual(out.dispatched, [{ uid: 'orphan', updateType: 'SyncPodKill', killPodOptions: { gracePeriodOverride: 1 }, runningPodOnly: true }]);
    assert.deepEqual(out.probers, [{ verb: 'CleanupPods', podUids: ['a'] }]);
    assert.deepEqual(out.statuses.map((s) => `${s.verb}/${s.uid}`), ['RemoveOrphanedStatuses/gone']);
  });
});

describe('SyncLoop: housekeeping names the content of deleted pods for the container GC', () => {
  it('a pod no source wants, its worker finished, with a stopped sandbox left: named once, again after 30 s', async () => {
    const { loop, runtime, nodeState, clock } = setup();
    loop.handleSourcesReady();
    runtime.runtimePods = [{ uid: 'gone', name: 'gone', namespace: 'default', running: false }];
    nodeState.workers.set('gone', { syncedAt: T0, terminatingAt: T0, terminatedAt: T0, finished: true });
    assert.deepEqual(await loop.housekeeping(), { contentToRemove: ['gone'] });
    await clock.step(2000);
    assert.deepEqual(await loop.housekeeping(), { contentToRemove: [] }, 'not at every pass: the GC\'s own period retries a removal that failed');
    await clock.step(30_000);
    assert.deepEqual(await loop.housekeeping(), { contentToRemove: ['gone'] });
  });

  it('a finished pod that is still desired, or a deleted one whose worker has not finished, is not named', async () => {
    const { loop, runtime, nodeState, out } = setup();
    await loop.handlePodUpdate(update('add', pod('done')));
    loop.handleSourcesReady();
    out.take();
    runtime.runtimePods = [
      { uid: 'done', name: 'pod-done', namespace: 'default', running: false },
      { uid: 'ending', name: 'ending', namespace: 'default', running: false },
    ];
    nodeState.workers.set('done', { syncedAt: T0, terminatingAt: T0, terminatedAt: T0, finished: true });
    nodeState.workers.set('ending', { syncedAt: T0, terminatingAt: T0, terminatedAt: T0 });
    assert.deepEqual(await loop.housekeeping(), { contentToRemove: [] });
  });
});

describe('SyncLoop: housekeeping on the mirrors and the runtime cache (docs/adr/0019-kv-mirrors.md)', () => {
  const orphan = { uid: 'x', name: 'x', namespace: 'default', running: true };
  const syncing = { syncedAt: T0 };
  const finished = { syncedAt: T0, terminatedAt: T0 - 5000, finished: true };

  it('reads no key again when it has nothing to kill or restart', async () => {
    const { loop, out, runtime, nodeState } = setup();
    await loop.handlePodUpdate(update('add', pod('a')));
    loop.handleSourcesReady();
    runtime.runtimePods = [{ uid: 'a', name: 'pod-a', namespace: 'default', running: true }];
    nodeState.workers.set('a', syncing);
    await loop.housekeeping();
    assert.deepEqual(nodeState.currentReads, []);
    assert.deepEqual(out.probers, [{ verb: 'CleanupPods', podUids: ['a'] }]);
  });

  const cases: { name: string; lagging: Map<string, typeof syncing | typeof finished>; workers: Map<string, typeof syncing | typeof finished>; desired: boolean; want: string[] }[] = [
    {
      name: 'a runtime pod whose worker record the mirror has not brought yet is not killed (its worker has it)',
      lagging: new Map(),
      workers: new Map([['x', syncing]]),
      desired: false,
      want: [],
    },
    {
      name: 'a runtime pod no one works, in the mirror and in the bucket, is killed',
      lagging: new Map(),
      workers: new Map(),
      desired: false,
      want: ['x:SyncPodKill'],
    },
    {
      name: 'a terminated pod added again is not restarted when its worker already runs it again (the mirror still says finished)',
      lagging: new Map([['x', finished]]),
      workers: new Map([['x', syncing]]),
      desired: true,
      want: [],
    },
    {
      name: 'a terminated pod added again is restarted when the bucket says finished too',
      lagging: new Map([['x', finished]]),
      workers: new Map([['x', finished]]),
      desired: true,
      want: ['x:SyncPodCreate'],
    },
  ];
  for (const tc of cases) {
    it(tc.name, async () => {
      const { loop, out, runtime, nodeState, clock } = setup();
      if (tc.desired) {
        await clock.step(1);
        await loop.handlePodUpdate(update('add', pod('x')));
      }
      loop.handleSourcesReady();
      out.take();
      if (!tc.desired) runtime.runtimePods = [orphan];
      nodeState.workers = tc.workers;
      nodeState.lagging = { workers: tc.lagging };
      await loop.housekeeping();
      assert.deepEqual(out.take(), tc.want);
      assert.deepEqual(nodeState.currentReads, [['x']], 'the pod acted on is read again first');
    });
  }

  it('shares one runtime listing per period (the runtime cache) and lists again before it kills', async () => {
    const clock = new FakeClock(T0);
    const nodeState = new FakeNodeState();
    const runtime = new FakeRuntimeView();
    let listings = 0;
    const pods = runtime.pods.bind(runtime);
    runtime.pods = () => {
      listings++;
      return pods();
    };
    const out = new RecordingOutbox();
    const loop = new SyncLoop(
      { store: new MemoryPodStore(), nodeState, runtime, out, events: new RecordingEventRecorder(), clock, logger: silentLogger(), runtimePods: new RuntimeCache(runtime, clock, 3000) },
      nodeInfoFrom({ name: 'node-a', cpu: '2', memory: '4Gi', maxPods: 3 }),
      { resyncIntervalMs: 60_000 },
    );
    loop.handleSourcesReady();
    runtime.runtimePods = [orphan];
    await loop.housekeeping();
    assert.deepEqual(out.take(), ['x:SyncPodKill']);
    assert.equal(listings, 1, 'a listing made in this pass serves its kill');
    // The pod is gone; the cache still says it runs: the pass lists again before a kill, and kills nothing.
    runtime.runtimePods = [];
    await clock.step(2000);
    await loop.housekeeping();
    assert.deepEqual(out.take(), []);
    assert.equal(listings, 2);
    // Nothing to kill: the next pass within the period lists nothing.
    await clock.step(500);
    await loop.housekeeping();
    assert.equal(listings, 2);
    await clock.step(3000);
    await loop.housekeeping();
    assert.equal(listings, 3, 'a new listing once the period is over');
  });
});

describe('SyncLoop: taking over as leader', () => {
  it('restore replaces what an earlier term knew with what is in KV now', async () => {
    const store = new MemoryPodStore();
    const { loop } = setup(store);
    await loop.handlePodUpdate(update('add', pod('a'), pod('b')));
    // Another leader removed b and added c meanwhile.
    const other = setup(store);
    await other.loop.restore();
    await other.loop.handlePodUpdate(update('remove', pod('b')));
    await other.loop.handlePodUpdate(update('add', pod('c')));
    await loop.restore();
    assert.deepEqual([...loop.desiredPods.keys()].sort(), ['a', 'c']);
  });
});

describe('SyncLoop: pods from the apiserver (source "api")', () => {
  /** A pod as the apiserver source sends it. */
  function apiPod(name: string, uid: string, opts: { grace?: number; deletionGrace?: number; nodeSelector?: Record<string, string>; cpu?: string; phase?: 'Pending' | 'Running' | 'Failed'; mirror?: boolean } = {}): Pod {
    return {
      metadata: {
        name,
        namespace: 'default',
        uid,
        creationTimestamp: '2026-11-01T11:00:00Z',
        annotations: { 'kubernetes.io/config.source': 'api', 'kubernetes.io/config.seen': '2026-11-01T11:00:01Z', ...(opts.mirror ? { 'kubernetes.io/config.mirror': 'abc' } : {}) },
        ...(opts.deletionGrace !== undefined ? { deletionTimestamp: '2026-11-01T12:00:05Z', deletionGracePeriodSeconds: opts.deletionGrace } : {}),
      },
      spec: {
        nodeName: 'node-a',
        terminationGracePeriodSeconds: opts.grace ?? 30,
        containers: [{ name: 'c', image: 'busybox:1', ...(opts.cpu ? { resources: { requests: { cpu: opts.cpu }, limits: { cpu: opts.cpu, memory: '64Mi' } } } : {}) }],
        ...(opts.nodeSelector ? { nodeSelector: opts.nodeSelector } : {}),
      },
      status: { phase: opts.phase ?? 'Pending' },
    };
  }
  const api = (op: PodOperation, ...pods: Pod[]): PodUpdateMessage => ({ type: MessageTypes.podUpdate, op, source: 'api', pods });

  it('a mirror pod is never run: its ADD, UPDATE, DELETE and RECONCILE store and dispatch nothing (IsMirrorPod)', async () => {
    const { loop, out, store } = setup();
    const mirror = apiPod('static-node-a', 'm', { mirror: true });
    for (const op of ['add', 'update', 'delete', 'reconcile'] as const) await loop.handlePodUpdate(api(op, mirror));
    out.snapshot = { type: MessageTypes.sourcesSnapshot, sources: [{ source: 'api', ready: true, pods: [mirror] }] };
    await loop.reconcileWithSources();
    assert.deepEqual(out.take(), []);
    assert.equal(store.pods.size, 0);
    assert.equal(loop.desiredPods.size, 0);
  });

  it('DELETE kills with the pod deletionGracePeriodSeconds; a second DELETE with a shorter one shortens it', async () => {
    const { loop, out } = setup();
    await loop.handlePodUpdate(api('add', apiPod('web', 'w')));
    out.take();
    await loop.handlePodUpdate(api('delete', apiPod('web', 'w', { deletionGrace: 7 })));
    await loop.handlePodUpdate(api('delete', apiPod('web', 'w', { deletionGrace: 2 })));
    assert.deepEqual(
      out.dispatched.map((d) => `${d.updateType}:${String(d.killPodOptions?.gracePeriodOverride)}`),
      ['SyncPodKill:7', 'SyncPodKill:2'],
    );
  });

  const removeCases = [
    { name: 'REMOVE of a pod never seen terminating kills it with the spec grace (no override)', before: [apiPod('web', 'w', { grace: 11 })], wantGrace: undefined, wantPodGrace: undefined },
    { name: 'REMOVE after a DELETE kills it with the deletion grace the pod carries', before: [apiPod('web', 'w', { grace: 11 }), apiPod('web', 'w', { grace: 11, deletionGrace: 4 })], wantGrace: undefined, wantPodGrace: 4 },
  ];
  for (const tc of removeCases) {
    it(tc.name, async () => {
      const { loop, out } = setup();
      await loop.handlePodUpdate(api('add', ...tc.before.slice(0, 1)));
      for (const p of tc.before.slice(1)) await loop.handlePodUpdate(api('delete', p));
      out.take();
      const killed: Pod[] = [];
      const dispatch = out.dispatch.bind(out);
      out.dispatch = (pod, type, start, opts, runningOnly) => {
        killed.push(pod);
        dispatch(pod, type, start, opts, runningOnly);
      };
      await loop.handlePodUpdate(api('remove', apiPod('web', 'w', { grace: 11 })));
      assert.deepEqual(out.dispatched.map((d) => d.updateType), ['SyncPodKill']);
      assert.equal(out.dispatched[0]?.killPodOptions?.gracePeriodOverride, tc.wantGrace);
      assert.equal(killed[0]?.metadata.deletionGracePeriodSeconds, tc.wantPodGrace);
      assert.equal(killed[0]?.spec.terminationGracePeriodSeconds, 11);
      assert.equal(loop.desiredPods.size, 0);
    });
  }

  it('deleted and created again with the same name (a new UID): the old one is killed, the new one created once', async () => {
    const { loop, out } = setup();
    await loop.handlePodUpdate(api('add', apiPod('web', 'w1')));
    out.take();
    await loop.handlePodUpdate(api('remove', apiPod('web', 'w1')));
    await loop.handlePodUpdate(api('add', apiPod('web', 'w2')));
    await loop.handlePodUpdate(api('add', apiPod('web', 'w2')));
    assert.deepEqual(out.take(), ['w1:SyncPodKill', 'w2:SyncPodCreate']);
    assert.deepEqual([...loop.desiredPods.keys()], ['w2']);
  });

  it('RECONCILE (the status the API holds changed) keeps the status and restarts nothing', async () => {
    const { loop, out, store } = setup();
    await loop.handlePodUpdate(api('add', apiPod('web', 'w')));
    out.take();
    await loop.handlePodUpdate(api('reconcile', apiPod('web', 'w', { phase: 'Running' })));
    assert.deepEqual(out.take(), []);
    assert.equal(store.pods.get('w')?.pod.status?.phase, 'Running');
  });

  it('an API pod whose nodeSelector the node does not match is rejected: Failed with upstream reason and message, its QoS class, a Warning event; the others run', async () => {
    const { loop, out, store, events } = setup();
    await loop.handlePodUpdate(api('add', apiPod('picky', 'p', { nodeSelector: { disktype: 'ssd' } }), apiPod('fine', 'f')));
    assert.deepEqual(out.take(), ['f:SyncPodCreate']);
    assert.equal(store.pods.get('p')?.admitted, false);
    assert.deepEqual(out.statuses, [
      {
        verb: 'SetPodStatus',
        uid: 'p',
        args: { status: { qosClass: 'BestEffort', phase: 'Failed', reason: 'NodeAffinity', message: "Pod was rejected: Predicate NodeAffinity failed: node(s) didn't match Pod's node affinity/selector" } },
      },
    ]);
    assert.deepEqual(events.events.map((e) => `${e.type}/${e.reason}/${e.message}`), ["Warning/NodeAffinity/Predicate NodeAffinity failed: node(s) didn't match Pod's node affinity/selector"]);
  });

  it("the API Node's labels (node-status's record) are what a nodeSelector is matched against: a label set on the Node admits the pod; none yet or a failed read: the configured ones", async () => {
    const node: { labels?: Record<string, string>; fail?: boolean } = {};
    const view = { read: () => (node.fail ? Promise.reject(new Error('kv down')) : Promise.resolve(node.labels)) };
    const { loop, out } = setup(new MemoryPodStore(), view);
    await loop.handlePodUpdate(api('add', apiPod('before', 'b1', { nodeSelector: { color: 'blue' } })));
    assert.deepEqual(out.take(), [], 'no record yet: the configured labels, no color');
    node.labels = { 'kubernetes.io/hostname': 'node-a', color: 'blue' };
    await loop.handlePodUpdate(api('add', apiPod('after', 'b2', { nodeSelector: { color: 'blue' } })));
    assert.deepEqual(out.take(), ['b2:SyncPodCreate']);
    node.fail = true;
    await loop.handlePodUpdate(api('add', apiPod('unread', 'b3', { nodeSelector: { color: 'blue' } })));
    assert.deepEqual(out.take(), []);
  });

  it('an API pod asking for more cpu than allocatable is rejected OutOfcpu with its QoS class', async () => {
    const { loop, out } = setup();
    await loop.handlePodUpdate(api('add', apiPod('big', 'b', { cpu: '3' })));
    assert.deepEqual(out.take(), []);
    const status = out.statuses[0]?.args['status'] as { qosClass: string; reason: string; message: string };
    assert.equal(status.reason, 'OutOfcpu');
    assert.equal(status.qosClass, 'Guaranteed');
    assert.equal(status.message, 'Pod was rejected: Node didn\'t have enough resource: cpu, requested: 3000, used: 0, capacity: 2000');
  });

  it('a pod already in a terminal phase is not admitted again (no second rejection), as upstream skips admission for it', async () => {
    const { loop, out, events } = setup();
    await loop.handlePodUpdate(api('add', apiPod('done', 'd', { cpu: '3', phase: 'Failed' })));
    assert.equal(out.statuses.length, 0);
    assert.equal(events.events.length, 0);
    assert.deepEqual(out.take(), ['d:SyncPodCreate']);
  });
});

describe('SyncLoop: the eviction manager\'s hooks', () => {
  it('an admit handler is asked first (AddPodAdmitHandler): its refusal is the pod\'s Failed status, with its reason and message, and a Warning event', async () => {
    const { loop, out, events, store } = setup();
    loop.addPodAdmitHandler({ admit: (p) => (p.spec.containers[0]?.resources ? { admit: true } : { admit: false, reason: 'Evicted', message: 'The node had condition: [MemoryPressure]. ' }) });
    await loop.handlePodUpdate(update('add', pod('besteffort'), pod('burstable', { cpu: '100m' })));
    assert.deepEqual(out.take(), ['burstable:SyncPodCreate']);
    assert.equal(store.pods.get('besteffort')?.admitted, false);
    assert.deepEqual(out.statuses, [
      { verb: 'SetPodStatus', uid: 'besteffort', args: { status: { qosClass: 'BestEffort', phase: 'Failed', reason: 'Evicted', message: 'Pod was rejected: The node had condition: [MemoryPressure]. ' } } },
    ]);
    assert.deepEqual(events.events.map((e) => `${e.uid}/${e.type}/${e.reason}/${e.message}`), ['besteffort/Warning/Evicted/The node had condition: [MemoryPressure]. ']);
  });

  it('activePodsForEviction: admitted pods not terminating, not terminal in the status manager, not taken by their worker for termination', async () => {
    const { loop, nodeState } = setup();
    await loop.handlePodUpdate(update('add', pod('running'), pod('failed'), pod('terminating')));
    await loop.handlePodUpdate(update('add', pod('big', { cpu: '3' })));
    nodeState.statuses.set('failed', { phase: 'Failed', reason: 'Evicted' });
    nodeState.workers.set('terminating', { syncedAt: T0, terminatingAt: T0 });
    assert.deepEqual((await loop.activePodsForEviction()).map((p) => p.metadata.uid), ['running']);
  });

  it('killPod dispatches SyncPodKill with the eviction\'s options', async () => {
    const { loop, out } = setup();
    await loop.handlePodUpdate(update('add', pod('a')));
    out.take();
    const podStatus = { phase: 'Failed' as const, reason: 'Evicted', message: 'The node was low on resource: memory. ' };
    loop.killPod(pod('a'), { gracePeriodOverride: 1, podStatus });
    assert.deepEqual(out.dispatched, [{ uid: 'a', updateType: 'SyncPodKill', killPodOptions: { gracePeriodOverride: 1, podStatus }, runningPodOnly: false }]);
  });
});
