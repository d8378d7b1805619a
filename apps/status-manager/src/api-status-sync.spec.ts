import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { ApiError } from '@app/apiserver';
import { FakeClock } from '@app/clock/testing';
import type { Pod, PodCondition, PodStatus } from '@app/contracts';
import { NotLeaderError } from '@app/leader-election';
import { silentLogger } from '@app/observability';
import { ApiStatusSync } from './api-status-sync.js';
import type { StatusEntry } from './pod-status-versions.js';
import { FakeApiPods, FakeDesiredPods, FakePodStatusApi, FakePodWorkerRecords, FakeStatuses } from './testing.js';

const T0 = '2026-01-01T00:00:00Z';
const c = (type: string, status: 'True' | 'False', extra: Partial<PodCondition> = {}): PodCondition => ({ type, status, lastTransitionTime: T0, ...extra });

/** What a pod worker generates for a running, ready pod (normalized, as the status store keeps it). */
function running(ready = true): PodStatus {
  return {
    phase: 'Running',
    hostIP: '10.0.0.1',
    hostIPs: [{ ip: '10.0.0.1' }],
    podIP: '10.88.0.5',
    podIPs: [{ ip: '10.88.0.5' }],
    startTime: T0,
    qosClass: 'BestEffort',
    conditions: [c('PodReadyToStartContainers', 'True'), c('Initialized', 'True'), c('Ready', ready ? 'True' : 'False'), c('ContainersReady', ready ? 'True' : 'False'), c('PodScheduled', 'True')],
    containerStatuses: [{ name: 'app', image: 'busybox', imageID: 'sha256:1', containerID: 'containerd://c1', ready, restartCount: 0, started: true, state: { running: { startedAt: T0 } } }],
  };
}

function apiPod(uid = 'u1', extra: { status?: PodStatus; deletionTimestamp?: string; name?: string; annotations?: Record<string, string> } = {}): Pod {
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: {
      name: extra.name ?? 'web',
      namespace: 'default',
      uid,
      ...(extra.annotations ? { annotations: extra.annotations } : {}),
      ...(extra.deletionTimestamp ? { deletionTimestamp: extra.deletionTimestamp, deletionGracePeriodSeconds: 30 } : {}),
    },
    spec: { nodeName: 'node-a', containers: [{ name: 'app', image: 'busybox' }] },
    status: extra.status ?? { phase: 'Pending', conditions: [c('PodScheduled', 'True')] },
  };
}

const entry = (version: number, status: PodStatus, extra: Partial<StatusEntry> = {}): StatusEntry => ({ version, podName: 'web', podNamespace: 'default', status, ...extra });

function setup() {
  const clock = new FakeClock(Date.parse(T0));
  const apiPods = new FakeApiPods();
  const api = new FakePodStatusApi(apiPods);
  const desired = new FakeDesiredPods();
  const workers = new FakePodWorkerRecords();
  const statuses = new FakeStatuses();
  const sync = new ApiStatusSync(statuses, apiPods, api, desired, workers, clock, silentLogger());
  /** Lets the sync run what is due now. */
  const settle = async (ms = 0) => {
    await clock.step(ms);
    await sync.idle();
  };
  return { clock, apiPods, api, desired, workers, statuses, sync, settle };
}

const condition = (p: Pod | undefined, type: string) => p?.status?.conditions?.find((x) => x.type === type)?.status;

describe('ApiStatusSync: a pod\'s status to the apiserver (status_manager.go syncBatch / syncPod)', () => {
  it('patches a new status at once, with the UID as precondition, keeping the conditions the kubelet does not own', async () => {
    const { api, statuses, sync, settle } = setup();
    api.put(apiPod('u1', { status: { phase: 'Pending', conditions: [c('PodScheduled', 'True'), c('example.com/gate', 'True')] } }));
    statuses.set('u1', entry(1, running()));
    sync.start();
    await settle();
    assert.deepEqual(api.verbs(), ['get default/web', 'patch default/web']);
    assert.deepEqual(api.calls[1]?.patch?.['metadata'], { uid: 'u1' });
    const pod = api.pod('default', 'web');
    assert.equal(pod?.status?.phase, 'Running');
    assert.equal(pod?.status?.podIP, '10.88.0.5');
    assert.equal(condition(pod, 'Ready'), 'True');
    assert.equal(condition(pod, 'example.com/gate'), 'True', 'a condition the kubelet does not own is kept');
    assert.equal(pod?.status?.containerStatuses?.[0]?.containerID, 'containerd://c1');

    statuses.set('u1', entry(2, running(false)));
    sync.notify();
    await settle();
    assert.equal(condition(api.pod('default', 'web'), 'Ready'), 'False');
    assert.equal(api.calls.filter((x) => x.verb === 'patch').length, 2);

    // Nothing changed: the resync finds the API as the kubelet would write it, and asks nothing.
    const before = api.calls.length;
    await settle(30_000);
    assert.equal(api.calls.length, before);
    sync.stop();
  });

  it('a status the API already has is not patched again', async () => {
    const { api, statuses, sync, settle } = setup();
    api.put(apiPod('u1', { status: running() }));
    statuses.set('u1', entry(1, running()));
    sync.start();
    await settle();
    assert.deepEqual(api.verbs(), ['get default/web']);
    sync.stop();
  });

  it('the 10 s resync puts back a status someone else changed (needsReconcile)', async () => {
    const { api, statuses, sync, settle } = setup();
    api.put(apiPod('u1'));
    statuses.set('u1', entry(1, running()));
    sync.start();
    await settle();
    api.put({ ...(api.pod('default', 'web') as Pod), status: { ...running(), conditions: [c('Ready', 'False')] } });
    await settle(9_000);
    assert.equal(condition(api.pod('default', 'web'), 'Ready'), 'False', 'a change in the API alone is not a new version');
    await settle(1_000);
    assert.equal(condition(api.pod('default', 'web'), 'Ready'), 'True');
    sync.stop();
  });

  it('a newer status that comes while a sync waits is the one sent, and an older one never after it', async () => {
    const { api, clock, statuses, sync, settle } = setup();
    api.put(apiPod('u1'));
    let release!: () => void;
    api.holdGet = new Promise<void>((r) => (release = r));
    statuses.set('u1', entry(1, running(false)));
    sync.start();
    await clock.step(1); // the sync waits for its GET
    statuses.set('u1', entry(2, running(true)));
    sync.notify();
    api.holdGet = undefined;
    release();
    await settle(1);
    const patches = api.calls.filter((x) => x.verb === 'patch');
    assert.equal(patches.length, 1);
    assert.equal(condition(api.pod('default', 'web'), 'Ready'), 'True');
    await settle(20_000);
    assert.equal(api.calls.filter((x) => x.verb === 'patch').length, 1);
    sync.stop();
  });

  it('a terminal phase in the API is never left', async () => {
    const { api, statuses, sync, settle } = setup();
    api.put(apiPod('u1', { status: { phase: 'Failed', reason: 'NodeAffinity', message: 'Pod was rejected: node(s) didn\'t match' } }));
    statuses.set('u1', entry(1, running()));
    sync.start();
    await settle();
    const pod = api.pod('default', 'web');
    assert.equal(pod?.status?.phase, 'Failed');
    assert.equal(pod?.status?.reason, 'NodeAffinity');
    assert.equal(condition(pod, 'Ready'), 'False');
    sync.stop();
  });

  it('a pod becomes terminal in the API only once its worker says its containers are gone', async () => {
    const { api, statuses, workers, sync, settle } = setup();
    api.put(apiPod('u1', { status: running() }));
    workers.records.set('u1', { syncedAt: 1, terminatingAt: 2 });
    statuses.set('u1', entry(1, { ...running(false), phase: 'Failed' }));
    sync.start();
    await settle();
    assert.equal(api.pod('default', 'web')?.status?.phase, 'Running');
    workers.records.set('u1', { syncedAt: 1, terminatingAt: 2, terminatedAt: 3 });
    await settle(10_000);
    assert.equal(api.pod('default', 'web')?.status?.phase, 'Failed');
    sync.stop();
  });

  it('a pod deleted and recreated under its name (another UID) is not written', async () => {
    const { api, apiPods, statuses, sync, settle } = setup();
    api.put(apiPod('u2'));
    statuses.set('u1', entry(1, running()));
    sync.start();
    await settle(20_000);
    assert.deepEqual(api.verbs(), [], 'the reflector shows another UID: nothing asked');
    // The reflector still shows the old pod, the apiserver has the new one already.
    apiPods.set([apiPod('u1')]);
    await settle();
    assert.deepEqual(api.verbs(), ['get default/web']);
    assert.equal(api.pod('default', 'web')?.status?.phase, 'Pending');
    sync.stop();
  });

  it('a pod not in the apiserver (yet) is synced as soon as the reflector shows it', async () => {
    const { api, statuses, sync, settle } = setup();
    statuses.set('u1', entry(1, running()));
    sync.start();
    await settle(1_000);
    assert.deepEqual(api.verbs(), []);
    api.put(apiPod('u1'));
    await settle();
    assert.deepEqual(api.verbs(), ['get default/web', 'patch default/web']);
    sync.stop();
  });

  it('a failed sync is tried again after 500 ms, then 1 s (back-off), then works', async () => {
    const { api, statuses, sync, settle } = setup();
    api.put(apiPod('u1'));
    api.failures.push(new ApiError(0, 'ConnectionFailed', 'connection refused'), new ApiError(500, 'InternalError', 'etcd timeout'));
    statuses.set('u1', entry(1, running()));
    sync.start();
    await settle();
    assert.equal(api.calls.length, 1);
    await settle(499);
    assert.equal(api.calls.length, 1);
    await settle(1);
    assert.equal(api.calls.length, 2);
    await settle(999);
    assert.equal(api.calls.length, 2);
    await settle(1);
    assert.deepEqual(api.verbs().slice(2), ['get default/web', 'patch default/web']);
    assert.equal(api.pod('default', 'web')?.status?.phase, 'Running');
    sync.stop();
  });

  it('writes nothing once stopped (deposed), nor when the fence refuses', async () => {
    const { api, apiPods, statuses, sync, settle } = setup();
    api.put(apiPod('u1'));
    statuses.set('u1', entry(1, running()));
    api.failures.push(new NotLeaderError('patch a pod status in the apiserver'));
    sync.start();
    await settle(5_000);
    assert.deepEqual(api.verbs(), ['get default/web'], 'no retry after a NotLeaderError before the resync');
    sync.stop();
    assert.equal(apiPods.subscribers, 0);
    statuses.set('u1', entry(2, running(false)));
    sync.notify();
    await settle(60_000);
    assert.deepEqual(api.verbs(), ['get default/web']);
  });
});

describe('ApiStatusSync: static pods write to their mirror pod', () => {
  const staticPod = (hash: string): Pod => ({
    metadata: { name: 'web', namespace: 'default', uid: 's1', annotations: { 'kubernetes.io/config.source': 'file', 'kubernetes.io/config.hash': hash } },
    spec: { containers: [{ name: 'app', image: 'busybox' }] },
  });
  const mirror = (hash: string) => apiPod('m1', { annotations: { 'kubernetes.io/config.mirror': hash } });

  const cases = [
    { name: 'no mirror pod yet: nothing to write', mirror: undefined, patched: false },
    { name: 'a mirror of an older version of the manifest: nothing to write', mirror: mirror('h0'), patched: false },
    { name: 'its mirror pod gets the status', mirror: mirror('h1'), patched: true },
  ];
  for (const tc of cases) {
    it(tc.name, async () => {
      const { api, desired, statuses, sync, settle } = setup();
      desired.add(staticPod('h1'), 'file');
      if (tc.mirror) api.put(tc.mirror);
      statuses.set('s1', entry(1, running()));
      sync.start();
      await settle(20_000);
      assert.equal(api.calls.some((x) => x.verb === 'patch'), tc.patched);
      if (tc.patched) {
        assert.deepEqual(api.calls.find((x) => x.verb === 'patch')?.patch?.['metadata'], { uid: 'm1' });
        assert.equal(api.pod('default', 'web')?.status?.phase, 'Running');
      }
      sync.stop();
    });
  }

  it('reads each pod\'s desired record by its UID, never a listing of the pods bucket (which can last as long as the sync loop writes)', async () => {
    const { api, desired, statuses, sync, settle } = setup();
    desired.add(staticPod('h1'), 'file');
    desired.all = () => Promise.reject(new Error('a listing of the pods bucket'));
    api.put(mirror('h1'));
    statuses.set('s1', entry(1, running()));
    sync.start();
    await settle();
    assert.equal(api.pod('default', 'web')?.status?.phase, 'Running');
    sync.stop();
  });

  it('a mirror pod created later gets the status at once, not at the next resync', async () => {
    const { api, desired, statuses, sync, settle } = setup();
    desired.add(staticPod('h1'), 'file');
    statuses.set('s1', entry(1, running()));
    sync.start();
    await settle(1_000);
    api.put(mirror('h1'));
    await settle(1);
    assert.equal(api.pod('default', 'web')?.status?.phase, 'Running');
    sync.stop();
  });
});

describe('ApiStatusSync: finishing a deletion (canBeDeleted, then DELETE with grace 0 and the UID)', () => {
  const deleting = (status: PodStatus) => apiPod('u1', { deletionTimestamp: '2026-01-01T00:00:30Z', status });
  const finished: PodStatus = { ...running(false), phase: 'Failed' };
  const cases = [
    { name: 'terminated, its final status patched: deleted', pod: deleting(running()), podIsFinished: true, worker: { terminatedAt: 3 }, deleted: true },
    { name: 'its worker purged its record after it finished: deleted', pod: deleting(running()), podIsFinished: true, worker: undefined, deleted: true },
    { name: 'not the status of TerminatePod: kept', pod: deleting(running()), podIsFinished: false, worker: { terminatedAt: 3 }, deleted: false },
    { name: 'no deletionTimestamp: kept', pod: apiPod('u1', { status: running() }), podIsFinished: true, worker: { terminatedAt: 3 }, deleted: false },
  ];
  for (const tc of cases) {
    it(tc.name, async () => {
      const { api, statuses, workers, sync, settle } = setup();
      api.put(tc.pod);
      if (tc.worker) workers.records.set('u1', { syncedAt: 1, terminatingAt: 2, ...tc.worker });
      statuses.set('u1', entry(3, finished, tc.podIsFinished ? { podIsFinished: true } : {}));
      sync.start();
      await settle(20_000);
      assert.equal(api.pod('default', 'web') === undefined, tc.deleted);
      if (tc.deleted) {
        assert.deepEqual(api.verbs().slice(0, 3), ['get default/web', 'patch default/web', 'delete default/web'], 'the final status is patched before the delete');
        assert.equal(api.calls[2]?.uid, 'u1');
      }
      sync.stop();
    });
  }

  it('a finished status that comes before its worker\'s record says terminated: deleted within a second after it does', async () => {
    const { api, statuses, workers, sync, settle } = setup();
    api.put(deleting(running()));
    workers.records.set('u1', { syncedAt: 1, terminatingAt: 2 });
    statuses.set('u1', entry(3, finished, { podIsFinished: true }));
    sync.start();
    await settle(500);
    assert.ok(api.pod('default', 'web'));
    workers.records.set('u1', { syncedAt: 1, terminatingAt: 2, terminatedAt: 3 });
    await settle(2_000);
    assert.equal(api.pod('default', 'web'), undefined);
    sync.stop();
  });

  it('a mirror pod is never deleted by the status sync', async () => {
    const { api, desired, statuses, workers, sync, settle } = setup();
    desired.add({ metadata: { name: 'web', namespace: 'default', uid: 's1', annotations: { 'kubernetes.io/config.source': 'file', 'kubernetes.io/config.hash': 'h1' } }, spec: { containers: [] } }, 'file');
    api.put(apiPod('m1', { deletionTimestamp: '2026-01-01T00:00:30Z', annotations: { 'kubernetes.io/config.mirror': 'h1' }, status: { phase: 'Failed' } }));
    workers.records.set('s1', { terminatedAt: 3 });
    statuses.set('s1', entry(3, finished, { podIsFinished: true }));
    sync.start();
    await settle(20_000);
    assert.ok(api.pod('default', 'web'));
    assert.ok(!api.calls.some((x) => x.verb === 'delete'));
    sync.stop();
  });
});
