/**
 * The test control plane (test/support/control-plane.ts) on the real etcd and
 * kube-apiserver: ready, the admin binds a pod to a node, the node's
 * credentials get what the Node authorizer and NodeRestriction give a
 * kubelet (its pods by field selector, its own Node and Lease, mirror pods
 * owned by its Node, status of its pods, Events) and nothing of another node's, and
 * a restarted apiserver still has every object (they live in etcd).
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { statSync } from 'node:fs';
import type { Lease } from 'kubernetes-types/coordination/v1.js';
import type { Event as CoreEvent, Node, Pod, PodList } from 'kubernetes-types/core/v1.js';
import { ApiError, PatchType, type ApiServer } from '@app/apiserver';
import { startControlPlane, KUBERNETES_VERSION, type ControlPlane } from './support/control-plane.js';

const NODE = 'cp-node-a';
const OTHER = 'cp-node-b';
const NS = 'cp-test';

const pod = (name: string, nodeName: string): Pod => ({
  apiVersion: 'v1',
  kind: 'Pod',
  metadata: { name, namespace: NS },
  spec: {
    nodeName,
    automountServiceAccountToken: false,
    containers: [{ name: 'main', image: 'localhost/kubelet-split/busybox:1.35', command: ['sleep', '3600'] }],
  },
});

/** The HTTP code of a refused request (0 when it was not refused). */
async function refused(p: Promise<unknown>): Promise<{ code: number; message: string }> {
  try {
    await p;
    return { code: 0, message: '' };
  } catch (err) {
    if (!(err instanceof ApiError)) throw err;
    return { code: err.code, message: err.message };
  }
}

describe('the test control plane: real etcd and kube-apiserver', { timeout: 240_000 }, () => {
  let cp: ControlPlane;
  let node: ApiServer;
  let nodeUid = '';

  before(async () => {
    cp = await startControlPlane({ nodes: [NODE, OTHER] });
    node = await cp.client(NODE, 'kubelet-split/control-plane-test');
  });
  after(async () => {
    const dir = cp?.dir;
    await cp?.stop();
    if (dir) assert.throws(() => statSync(dir), /ENOENT/, 'stop() removes the directory');
  });

  it('is ready and is the kube-apiserver we built', async () => {
    const version = await cp.admin.request<{ gitVersion: string }>('/version');
    assert.equal(version.gitVersion, KUBERNETES_VERSION);
    assert.ok(cp.readyAfterMs > 0);
    assert.ok(cp.url.startsWith('https://127.0.0.1:'));
    assert.equal(statSync(cp.kubeconfig(NODE)).mode & 0o777, 0o600, 'the kubeconfig holds a token: owner only');
    process.stdout.write(`# kube-apiserver ready after ${Math.round(cp.readyAfterMs)} ms\n`);
  });

  it('the admin creates a namespace with its default ServiceAccount and a pod bound to a node', async () => {
    await cp.createNamespace(NS);
    await cp.createNamespace(NS); // twice is fine
    const sa = await cp.admin.request<{ metadata: { name: string } }>(`/api/v1/namespaces/${NS}/serviceaccounts/default`);
    assert.equal(sa.metadata.name, 'default');
    const created = await cp.admin.request<Pod>(`/api/v1/namespaces/${NS}/pods`, { method: 'POST', body: pod('web', NODE) });
    assert.equal(created.spec?.nodeName, NODE);
    assert.equal(created.spec?.serviceAccountName, 'default', 'the ServiceAccount admission plugin ran');
    await cp.admin.request(`/api/v1/namespaces/${NS}/pods`, { method: 'POST', body: pod('elsewhere', OTHER) });
  });

  it("a node lists and watches only its own pods (fieldSelector spec.nodeName), reads them, and writes their status", async () => {
    const mine = await node.request<PodList>('/api/v1/pods', { query: { fieldSelector: `spec.nodeName=${NODE}` } });
    assert.deepEqual(mine.items.map((p) => p.metadata?.name), ['web']);
    assert.equal((await refused(node.request('/api/v1/pods'))).code, 403, 'listing every pod is refused');
    assert.equal((await refused(node.request('/api/v1/pods', { query: { fieldSelector: `spec.nodeName=${OTHER}` } }))).code, 403, "another node's pods are refused");

    // A watch from the list's resourceVersion sees the next change.
    const ac = new AbortController();
    const seen: string[] = [];
    const watching = node.watch<Pod>('/api/v1/pods', { fieldSelector: `spec.nodeName=${NODE}`, resourceVersion: mine.metadata?.resourceVersion ?? '0' }, (e) => {
      seen.push(`${e.type} ${e.object.metadata?.name ?? ''}`);
      if (e.type === 'MODIFIED') ac.abort();
    }, ac.signal);
    await cp.admin.request(`/api/v1/namespaces/${NS}/pods/web`, { method: 'PATCH', contentType: PatchType.merge, body: { metadata: { labels: { touched: 'yes' } } } });
    await watching;
    assert.deepEqual(seen, ['MODIFIED web']);

    // GET of one pod goes through the authorizer's graph, which follows the apiserver's informers.
    await eventually(() => node.request<Pod>(`/api/v1/namespaces/${NS}/pods/web`));
    assert.equal((await refused(node.request(`/api/v1/namespaces/${NS}/pods/elsewhere`))).code, 403);

    const status = await node.request<Pod>(`/api/v1/namespaces/${NS}/pods/web/status`, {
      method: 'PATCH',
      contentType: PatchType.strategicMerge,
      body: { status: { phase: 'Pending', conditions: [{ type: 'PodScheduled', status: 'True' }] } },
    });
    assert.equal(status.status?.phase, 'Pending');
    const other = await refused(node.request(`/api/v1/namespaces/${NS}/pods/elsewhere/status`, { method: 'PATCH', contentType: PatchType.strategicMerge, body: { status: { phase: 'Pending' } } }));
    assert.equal(other.code, 403, "NodeRestriction: not another node's pod");
  });

  it('a node creates, reads and updates its own Node, and not another', async () => {
    assert.equal((await refused(node.request(`/api/v1/nodes/${NODE}`))).code, 404, 'its own Node may be read before it exists');
    const created = await node.request<Node>('/api/v1/nodes', {
      method: 'POST',
      body: { apiVersion: 'v1', kind: 'Node', metadata: { name: NODE, labels: { 'kubernetes.io/hostname': NODE, 'kubernetes.io/os': 'linux' } } } satisfies Node,
    });
    nodeUid = created.metadata?.uid ?? '';
    assert.ok(nodeUid);
    const patched = await node.request<Node>(`/api/v1/nodes/${NODE}/status`, {
      method: 'PATCH',
      contentType: PatchType.strategicMerge,
      body: { status: { conditions: [{ type: 'Ready', status: 'True', reason: 'KubeletReady', message: 'kubelet is posting ready status' }] } },
    });
    assert.equal(patched.status?.conditions?.find((c) => c.type === 'Ready')?.status, 'True');
    const byName = await node.request<{ items: Node[] }>('/api/v1/nodes', { query: { fieldSelector: `metadata.name=${NODE}` } });
    assert.deepEqual(byName.items.map((n) => n.metadata?.name), [NODE], 'list/watch of its own Node by metadata.name');

    await cp.admin.request('/api/v1/nodes', { method: 'POST', body: { apiVersion: 'v1', kind: 'Node', metadata: { name: OTHER } } satisfies Node });
    const readOther = await refused(node.request(`/api/v1/nodes/${OTHER}`));
    assert.equal(readOther.code, 403, readOther.message);
    assert.match(readOther.message, /only its own Node object/);
    assert.equal((await refused(node.request('/api/v1/nodes'))).code, 403, 'listing every Node is refused');
    const writeOther = await refused(node.request(`/api/v1/nodes/${OTHER}/status`, { method: 'PATCH', contentType: PatchType.strategicMerge, body: { status: { phase: 'Running' } } }));
    assert.equal(writeOther.code, 403, writeOther.message);
    assert.match(writeOther.message, /is not allowed to modify node/);
  });

  it('a node creates and renews its own Lease in kube-node-lease, and not another', async () => {
    const leases = '/apis/coordination.k8s.io/v1/namespaces/kube-node-lease/leases';
    const lease = (name: string): Lease => ({
      apiVersion: 'coordination.k8s.io/v1',
      kind: 'Lease',
      metadata: { name, namespace: 'kube-node-lease', ownerReferences: [{ apiVersion: 'v1', kind: 'Node', name: NODE, uid: nodeUid }] },
      spec: { holderIdentity: name, leaseDurationSeconds: 40, renewTime: new Date().toISOString().replace('Z', '000Z') },
    });
    const created = await node.request<Lease>(leases, { method: 'POST', body: lease(NODE) });
    const renewed = await node.request<Lease>(`${leases}/${NODE}`, { method: 'PUT', body: { ...created, spec: { ...created.spec, renewTime: new Date(Date.now() + 1000).toISOString().replace('Z', '000Z') } } });
    assert.notEqual(renewed.spec?.renewTime, created.spec?.renewTime);
    await cp.admin.request(leases, { method: 'POST', body: { ...lease(OTHER), metadata: { name: OTHER, namespace: 'kube-node-lease' } } });
    assert.equal((await refused(node.request(`${leases}/${OTHER}`))).code, 403);
    assert.equal((await refused(node.request(`${leases}/${OTHER}`, { method: 'DELETE' }))).code, 403);
  });

  it('a node creates a mirror pod only with the mirror annotation and its Node as controller owner, and deletes it', async () => {
    const mirror = (owner: boolean): Pod => ({
      ...pod(`static-${NODE}`, NODE),
      metadata: {
        name: `static-${NODE}`,
        namespace: NS,
        annotations: { 'kubernetes.io/config.mirror': 'hash', 'kubernetes.io/config.source': 'file' },
        ...(owner ? { ownerReferences: [{ apiVersion: 'v1', kind: 'Node', name: NODE, uid: nodeUid, controller: true }] } : {}),
      },
    });
    const plain = await refused(node.request(`/api/v1/namespaces/${NS}/pods`, { method: 'POST', body: pod('not-mirror', NODE) }));
    assert.equal(plain.code, 403, plain.message);
    const unowned = await refused(node.request(`/api/v1/namespaces/${NS}/pods`, { method: 'POST', body: mirror(false) }));
    assert.equal(unowned.code, 403, unowned.message);
    assert.match(unowned.message, /owner reference set to itself/);
    const created = await node.request<Pod>(`/api/v1/namespaces/${NS}/pods`, { method: 'POST', body: mirror(true) });
    assert.equal(created.spec?.serviceAccountName, undefined, 'no ServiceAccount for a mirror pod');
    await node.request(`/api/v1/namespaces/${NS}/pods/static-${NODE}`, { method: 'DELETE', body: { gracePeriodSeconds: 0, preconditions: { uid: created.metadata?.uid } } });
    const gone = await refused(cp.admin.request(`/api/v1/namespaces/${NS}/pods/static-${NODE}`));
    assert.equal(gone.code, 404);
  });

  it("a node posts and updates Events about its pods", async () => {
    const now = new Date().toISOString().replace(/\.\d+Z$/, 'Z');
    const event: CoreEvent = {
      apiVersion: 'v1',
      kind: 'Event',
      metadata: { name: 'web.1', namespace: NS },
      involvedObject: { kind: 'Pod', namespace: NS, name: 'web', apiVersion: 'v1' },
      reason: 'Started',
      message: 'Started container main',
      type: 'Normal',
      source: { component: 'kubelet', host: NODE },
      firstTimestamp: now,
      lastTimestamp: now,
      count: 1,
    };
    await node.request(`/api/v1/namespaces/${NS}/events`, { method: 'POST', body: event });
    const patched = await node.request<CoreEvent>(`/api/v1/namespaces/${NS}/events/web.1`, { method: 'PATCH', contentType: PatchType.strategicMerge, body: { count: 2 } });
    assert.equal(patched.count, 2);
  });

  it('a restarted apiserver (same port, same etcd) still has every object, and the same clients work again', async () => {
    const before = cp.apiserverPid;
    await cp.restart();
    assert.notEqual(cp.apiserverPid, before);
    const pods = await eventually(() => node.request<PodList>('/api/v1/pods', { query: { fieldSelector: `spec.nodeName=${NODE}` } }));
    assert.deepEqual(pods.items.map((p) => p.metadata?.name), ['web']);
    assert.equal((await node.request<Node>(`/api/v1/nodes/${NODE}`)).metadata?.uid, nodeUid);
    await cp.restart({ kill: true, downMs: 200 });
    const again = await eventually(() => cp.admin.request<Pod>(`/api/v1/namespaces/${NS}/pods/web`));
    assert.equal(again.metadata?.labels?.['touched'], 'yes');
    process.stdout.write(`# kube-apiserver ready again after ${Math.round(cp.readyAfterMs)} ms\n`);
  });
});

/** Retries `fn` for up to 10 s (the Node authorizer's graph and a fresh connection take a moment). */
async function eventually<T>(fn: () => Promise<T>, timeoutMs = 10_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    try {
      return await fn();
    } catch (err) {
      if (Date.now() > deadline) throw err;
      await new Promise((r) => setTimeout(r, 200));
    }
  }
}
