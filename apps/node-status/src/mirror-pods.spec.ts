import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { FakeClock } from '@app/clock/testing';
import type { Pod, PodRecord } from '@app/contracts';
import { silentLogger } from '@app/observability';
import { MirrorPodReconciler, mirrorPodActions, mirrorPodOf } from './mirror-pods.js';
import { FakeKubeApi } from './testing.js';

const staticPod = (name: string, hash: string, over: Partial<PodRecord> = {}): PodRecord => ({
  pod: {
    metadata: { name: `${name}-n1`, namespace: 'default', uid: hash, annotations: { 'kubernetes.io/config.source': 'file', 'kubernetes.io/config.hash': hash, 'kubernetes.io/config.seen': '2026-01-01T00:00:00Z' } },
    spec: { nodeName: 'n1', containers: [{ name: 'c', image: 'busybox' }] },
    status: { phase: 'Running' },
  },
  source: 'file',
  addedAt: 0,
  admitted: true,
  ...over,
});
const apiPod = (name: string, uid: string, annotations: Record<string, string> = {}, over: Partial<Pod['metadata']> = {}): Pod => ({
  metadata: { name, namespace: 'default', uid, annotations, ...over },
  spec: { containers: [] },
});
const mirror = (name: string, hash: string, uid = `m-${hash}`, over: Partial<Pod['metadata']> = {}) => apiPod(name, uid, { 'kubernetes.io/config.mirror': hash }, over);

describe('mirrorPodActions (tryReconcileMirrorPods and deleteOrphanedMirrorPods)', () => {
  const cases: { name: string; desired: PodRecord[]; api: Pod[]; terminating?: string[]; create: string[]; delete: string[] }[] = [
    { name: 'a static pod without a mirror: create', desired: [staticPod('web', 'h1')], api: [], create: ['web-n1'], delete: [] },
    { name: 'its mirror there with its hash: nothing', desired: [staticPod('web', 'h1')], api: [mirror('web-n1', 'h1')], create: [], delete: [] },
    { name: 'a mirror of an older manifest (hash differs): delete and create', desired: [staticPod('web', 'h2')], api: [mirror('web-n1', 'h1')], create: ['web-n1'], delete: ['web-n1 m-h1 mismatch'] },
    { name: 'a mirror being deleted: delete and create', desired: [staticPod('web', 'h1')], api: [mirror('web-n1', 'h1', 'm1', { deletionTimestamp: '2026-01-01T00:00:00Z' })], create: ['web-n1'], delete: ['web-n1 m1 mismatch'] },
    { name: 'a mirror without its static pod: orphan, deleted', desired: [], api: [mirror('web-n1', 'h1')], create: [], delete: ['web-n1 m-h1 orphan'] },
    { name: 'an orphan whose static pod is still terminating: kept', desired: [], api: [mirror('web-n1', 'h1')], terminating: ['default/web-n1'], create: [], delete: [] },
    { name: 'an API pod (not a mirror) is none of this', desired: [], api: [apiPod('api-pod', 'u1', { 'kubernetes.io/config.source': 'api' })], create: [], delete: [] },
    { name: 'an API pod in the desired pods makes no mirror', desired: [{ ...staticPod('x', 'h9'), pod: { ...staticPod('x', 'h9').pod, metadata: { name: 'x', namespace: 'default', uid: 'u9', annotations: { 'kubernetes.io/config.source': 'api' } } }, source: 'api' }], api: [], create: [], delete: [] },
    { name: 'a rejected static pod gets no mirror (SyncPod never runs for it)', desired: [staticPod('web', 'h1', { admitted: false })], api: [], create: [], delete: [] },
    { name: 'a static pod being terminated: its mirror is neither made nor removed', desired: [staticPod('web', 'h1', { terminationRequested: true })], api: [mirror('web-n1', 'h1')], create: [], delete: [] },
  ];
  for (const tc of cases) {
    it(tc.name, () => {
      const got = mirrorPodActions(tc.desired, tc.api, (uid) => (tc.terminating ?? []).includes(uid));
      assert.deepEqual(got.create.map((p) => p.metadata.name), tc.create);
      assert.deepEqual(got.delete.map((d) => `${d.name} ${d.uid} ${d.why}`), tc.delete);
    });
  }

  it('the mirror is the static pod with config.mirror = its hash, the Node as controlling owner, and nothing the API assigns', () => {
    const m = mirrorPodOf({ ...staticPod('web', 'h1').pod, metadata: { ...staticPod('web', 'h1').pod.metadata, resourceVersion: '5', creationTimestamp: 'x' } }, 'n1', 'node-uid');
    assert.equal(m.metadata.annotations?.['kubernetes.io/config.mirror'], 'h1');
    assert.equal(m.metadata.annotations?.['kubernetes.io/config.hash'], 'h1');
    assert.deepEqual(m.metadata.ownerReferences, [{ apiVersion: 'v1', kind: 'Node', name: 'n1', uid: 'node-uid', controller: true }]);
    assert.deepEqual([m.metadata.uid, m.metadata.resourceVersion, m.metadata.creationTimestamp, m.status], [undefined, undefined, undefined, undefined]);
    assert.equal(m.spec.nodeName, 'n1');
  });
});

describe('MirrorPodReconciler', () => {
  function setup() {
    const clock = new FakeClock();
    const api = new FakeKubeApi();
    let desired: PodRecord[] = [];
    let listed = true;
    const reconciler = new MirrorPodReconciler(
      api.mirrorPodApi,
      api.nodeApi,
      { desired: () => Promise.resolve(desired), apiPods: () => (listed ? [...api.pods.values()] : undefined) },
      clock,
      silentLogger(),
      'n1',
    );
    return {
      clock,
      api,
      reconciler,
      setDesired: (d: PodRecord[]) => (desired = d),
      setListed: (l: boolean) => (listed = l),
      addNode: () => api.nodes.set('n1', { metadata: { name: 'n1', uid: 'node-uid' } }),
    };
  }

  it('creates the mirror once the Node is registered; someone deletes it: made again at the next pass; the manifest gone: deleted with its UID', async () => {
    const { clock, api, reconciler, setDesired, addNode } = setup();
    setDesired([staticPod('web', 'h1')]);
    reconciler.start();
    await reconciler.settled();
    assert.equal(api.pods.size, 0, 'no Node yet: no mirror (NodeRestriction needs its owner)');
    addNode();
    await clock.step(2000);
    await reconciler.settled();
    const m = api.pods.get('default/web-n1');
    assert.equal(m?.metadata.annotations?.['kubernetes.io/config.mirror'], 'h1');
    assert.equal(m?.metadata.ownerReferences?.[0]?.uid, 'node-uid');
    api.pods.delete('default/web-n1');
    reconciler.kick();
    await reconciler.settled();
    assert.ok(api.pods.get('default/web-n1'), 'made again');
    const uid = api.pods.get('default/web-n1')?.metadata.uid ?? '';
    setDesired([]);
    reconciler.kick();
    await reconciler.settled();
    assert.equal(api.pods.size, 0);
    assert.ok(api.calls.includes('deleteMirrorPod default/web-n1'));
    assert.notEqual(uid, '');
    reconciler.stop();
  });

  it('an orphan mirror is kept while its static pod (by the UID it had, not its hash) is terminating, and deleted once it has terminated', async () => {
    const clock = new FakeClock();
    const api = new FakeKubeApi();
    api.nodes.set('n1', { metadata: { name: 'n1', uid: 'node-uid' } });
    const web = staticPod('web', 'h1');
    let desired: PodRecord[] = [{ ...web, pod: { ...web.pod, metadata: { ...web.pod.metadata, uid: 'static-uid' } } }];
    let terminated = false;
    const asked: string[] = [];
    const reconciler = new MirrorPodReconciler(
      api.mirrorPodApi,
      api.nodeApi,
      {
        desired: () => Promise.resolve(desired),
        apiPods: () => [...api.pods.values()],
        terminating: (uid) => {
          asked.push(uid);
          return Promise.resolve(!terminated);
        },
      },
      clock,
      silentLogger(),
      'n1',
    );
    reconciler.start();
    await reconciler.settled();
    assert.ok(api.pods.has('default/web-n1'), 'made');
    desired = [];
    reconciler.kick();
    await reconciler.settled();
    assert.ok(api.pods.has('default/web-n1'), 'kept while terminating');
    assert.deepEqual(asked, ['static-uid'], 'the pod worker\'s record is asked for by the static pod\'s UID');
    terminated = true;
    await clock.step(2000);
    await reconciler.settled();
    assert.equal(api.pods.has('default/web-n1'), false);
    reconciler.stop();
  });

  it('before the first list of the API\'s pods nothing is done', async () => {
    const { api, reconciler, setDesired, setListed, addNode } = setup();
    addNode();
    setListed(false);
    setDesired([staticPod('web', 'h1')]);
    reconciler.start();
    await reconciler.settled();
    assert.deepEqual(api.calls, []);
    reconciler.stop();
  });

  it('a changed manifest: the old mirror is deleted and the new one created in one pass', async () => {
    const { api, reconciler, setDesired, addNode } = setup();
    addNode();
    api.pods.set('default/web-n1', mirror('web-n1', 'h1', 'old'));
    setDesired([staticPod('web', 'h2')]);
    reconciler.start();
    await reconciler.settled();
    assert.equal(api.pods.get('default/web-n1')?.metadata.annotations?.['kubernetes.io/config.mirror'], 'h2');
    reconciler.stop();
  });

  it('stop(): no more passes', async () => {
    const { clock, api, reconciler, setDesired, addNode } = setup();
    addNode();
    reconciler.start();
    await reconciler.settled();
    reconciler.stop();
    setDesired([staticPod('web', 'h1')]);
    await clock.step(10_000);
    assert.equal(api.pods.size, 0);
    assert.equal(clock.waiting, 0);
  });
});
