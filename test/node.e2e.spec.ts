/**
 * The node in a real cluster (a real kube-apiserver and etcd, the stack on
 * the real containerd, the status manager with the node's own credentials
 * under Node authorization and NodeRestriction): what `kubectl get node`
 * and `kubectl get lease -n kube-node-lease` would show.
 *  - the Node is registered and Ready, with its labels, capacity, the
 *    allocatable admission uses, nodeInfo and addresses; its Lease is
 *    renewed;
 *  - a static pod has its mirror pod in the API, made again when someone
 *    deletes it, and deleted when the manifest goes;
 *  - the PLEG stopped: the Node turns NotReady with upstream's reason and
 *    message, and Ready again once the PLEG relists;
 *  - the apiserver down for a while: the Lease is renewed again once it is
 *    back, and the Node's status follows a change made meanwhile.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { release } from 'node:os';
import { isNotFound, PatchType, type ApiServer } from '@app/apiserver';
import type { Lease, Node, NodeCondition, Pod } from '@app/contracts';
import { goArch, parseQuantity } from '@app/kube';
import { startControlPlane, type ControlPlane } from './support/control-plane.js';
import { NodeStack } from './support/node-stack.js';

const NODE = 'node-e2e';
const IMAGE = 'localhost/kubelet-split/busybox:1.35';
const Mi = 2 ** 20;

/** The node's resources, the same for the sync loop's admission and the status manager's Node. */
const RESOURCES = { NODE_CPU: '2', NODE_MEMORY: '4Gi', NODE_MAX_PODS: '50', KUBE_RESERVED: 'cpu=500m,memory=512Mi' };

describe('the Node and its Lease in a real cluster', { timeout: 300_000 }, () => {
  let cp: ControlPlane;
  let admin: ApiServer;
  let stack: NodeStack;

  const getNode = () => admin.request<Node>(`/api/v1/nodes/${NODE}`);
  const getLease = () => admin.request<Lease>(`/apis/coordination.k8s.io/v1/namespaces/kube-node-lease/leases/${NODE}`);
  const condition = (node: Node, type: string): NodeCondition | undefined => node.status?.conditions?.find((c) => c.type === type);
  const waitForReady = (status: 'True' | 'False', timeoutMs: number) =>
    stack.waitFor(`the Node Ready=${status}`, async () => {
      const node = await getNode();
      return condition(node, 'Ready')?.status === status ? node : undefined;
    }, timeoutMs);

  before(async () => {
    cp = await startControlPlane({ nodes: [NODE] });
    admin = cp.admin;
    stack = new NodeStack({
      node: NODE,
      services: ['cri-gateway', 'pleg', 'sync-loop', 'status-manager', 'pod-worker', 'config-source'],
      kubeconfig: cp.kubeconfig(NODE),
      env: {
        // A short health threshold, so that a stopped PLEG shows within seconds.
        pleg: { RELIST_THRESHOLD: '5s' },
        'sync-loop': RESOURCES,
        'status-manager': RESOURCES,
      },
    });
    await stack.start();
  });

  after(async () => {
    try {
      await stack?.stop();
    } finally {
      await cp?.stop();
    }
  });

  it('registers the Node, Ready, with its labels, capacity, allocatable (capacity less the reservations and hard eviction thresholds), nodeInfo and addresses', async () => {
    const node = await waitForReady('True', 60_000);
    const ready = condition(node, 'Ready');
    assert.deepEqual([ready?.reason, ready?.message], ['KubeletReady', 'kubelet is posting ready status']);
    const labels = node.metadata.labels ?? {};
    assert.deepEqual([labels['kubernetes.io/hostname'], labels['kubernetes.io/os'], labels['kubernetes.io/arch']], [NODE, 'linux', goArch()]);
    assert.deepEqual([labels['beta.kubernetes.io/os'], labels['beta.kubernetes.io/arch']], ['linux', goArch()]);
    const capacity = node.status?.capacity ?? {};
    const allocatable = node.status?.allocatable ?? {};
    assert.deepEqual([capacity['cpu'], capacity['memory'], capacity['pods']], ['2', '4Gi', '50']);
    assert.deepEqual([allocatable['cpu'], allocatable['memory'], allocatable['pods']], ['1500m', `${(4096 * Mi - 512 * Mi - 100 * Mi) / Mi}Mi`, '50']);
    const storage = parseQuantity(capacity['ephemeral-storage'] ?? '0');
    assert.ok(storage > 0, 'ephemeral-storage: the node filesystem\'s size');
    assert.equal(parseQuantity(allocatable['ephemeral-storage'] ?? '0'), storage - Math.trunc(storage * 0.1), 'nodefs.available<10% is kept out');
    const info = node.status?.nodeInfo;
    assert.match(info?.containerRuntimeVersion ?? '', /^containerd:\/\/\S+$/);
    assert.match(info?.kubeletVersion ?? '', /^v1\.34\.4/);
    assert.deepEqual([info?.operatingSystem, info?.architecture, info?.kernelVersion], ['linux', goArch(), release()]);
    assert.equal(info?.bootID, readFileSync('/proc/sys/kernel/random/boot_id', 'utf8').trim());
    assert.deepEqual(node.status?.addresses, [{ type: 'InternalIP', address: '127.0.0.1' }, { type: 'Hostname', address: NODE }]);
    assert.ok((node.status?.daemonEndpoints?.kubeletEndpoint?.Port ?? 0) > 0);
    const pressure: [string, string, string][] = [
      ['MemoryPressure', 'KubeletHasSufficientMemory', 'KubeletHasInsufficientMemory'],
      ['DiskPressure', 'KubeletHasNoDiskPressure', 'KubeletHasDiskPressure'],
      ['PIDPressure', 'KubeletHasSufficientPID', 'KubeletHasInsufficientPID'],
    ];
    for (const [type, ok, bad] of pressure) {
      const c = condition(node, type);
      assert.ok(c, `${type} is reported`);
      assert.equal(c.reason, c.status === 'False' ? ok : bad, `${type} ${c.status} says why with upstream's reason`);
    }
    assert.equal(node.status?.conditions?.at(-1)?.type, 'Ready', 'Ready comes last, as upstream appends it');
  });

  it('admission uses the allocatable the Node shows: a pod asking more CPU than 1500m is rejected with OutOfcpu', async () => {
    stack.writeManifest('toobig', `apiVersion: v1\nkind: Pod\nmetadata:\n  name: toobig\nspec:\n  hostNetwork: true\n  containers:\n    - name: main\n      image: ${IMAGE}\n      command: ["sleep", "3600"]\n      resources:\n        requests:\n          cpu: 1600m\n`);
    const status = await stack.waitForPod('toobig', 'Failed', (s) => s.phase === 'Failed', 30_000);
    assert.equal(status.reason, 'OutOfcpu');
    stack.removeManifest('toobig');
  });

  it('the Lease kube-node-lease/<node>: held by the node for 40 s, owned by the Node, renewed every 10 s', async () => {
    const node = await getNode();
    const first = await stack.waitFor('the node Lease', () => getLease(), 30_000);
    assert.equal(first.spec?.holderIdentity, NODE);
    assert.equal(first.spec?.leaseDurationSeconds, 40);
    assert.deepEqual(first.metadata?.ownerReferences?.map((o) => [o.apiVersion, o.kind, o.name, o.uid]), [['v1', 'Node', NODE, node.metadata.uid]]);
    const renewed = await stack.waitFor('the Lease renewed', async () => {
      const l = await getLease();
      return l.spec?.renewTime !== first.spec?.renewTime ? l : undefined;
    }, 15_000);
    const step = Date.parse(renewed.spec?.renewTime ?? '') - Date.parse(first.spec?.renewTime ?? '');
    assert.ok(step > 0 && step < 15_000, `renewTime advanced by ${step} ms`);
  });

  it('a static pod gets a mirror pod in the API; deleted, it comes back; the manifest removed, it goes', async () => {
    const name = stack.podName('mirrored');
    const getMirror = () => admin.request<Pod>(`/api/v1/namespaces/default/pods/${name}`).catch((err: unknown) => (isNotFound(err) ? undefined : Promise.reject(err as Error)));
    stack.writeManifest('mirrored', `apiVersion: v1\nkind: Pod\nmetadata:\n  name: mirrored\nspec:\n  hostNetwork: true\n  terminationGracePeriodSeconds: 2\n  containers:\n    - name: main\n      image: ${IMAGE}\n      command: ["sleep", "3600"]\n`);
    const mirror = await stack.waitFor('the mirror pod in the API', () => getMirror(), 30_000);
    const annotations = mirror.metadata.annotations ?? {};
    assert.equal(annotations['kubernetes.io/config.mirror'], annotations['kubernetes.io/config.hash'], 'config.mirror is the static pod\'s hash');
    assert.equal(annotations['kubernetes.io/config.source'], 'file');
    const node = await getNode();
    assert.deepEqual(mirror.metadata.ownerReferences?.map((o) => [o.kind, o.name, o.uid, o.controller]), [['Node', NODE, node.metadata.uid, true]]);
    assert.equal(mirror.spec.nodeName, NODE);
    const first = mirror.metadata.uid;
    const running = async () => (await stack.containers('mirrored')).filter((c) => c.state === 'CONTAINER_RUNNING').map((c) => c.id);
    const [container] = await stack.waitFor('the static pod running', async () => ((await running()).length === 1 ? running() : undefined), 60_000);

    await admin.request(`/api/v1/namespaces/default/pods/${name}`, { method: 'DELETE', body: { gracePeriodSeconds: 0 } });
    const again = await stack.waitFor('the mirror pod made again', async () => {
      const m = await getMirror();
      return m && m.metadata.uid !== first && m.metadata.deletionTimestamp === undefined ? m : undefined;
    }, 30_000);
    assert.equal(again.metadata.annotations?.['kubernetes.io/config.mirror'], annotations['kubernetes.io/config.hash']);
    assert.deepEqual(await running(), [container], 'the static pod itself runs on, untouched');

    const removedAt = Date.now();
    stack.removeManifest('mirrored');
    await stack.waitFor('the mirror pod gone from the API', async () => ((await getMirror()) === undefined ? true : undefined), 60_000);
    // deleteOrphanedMirrorPods waits for the static pod's termination (its 2 s grace: sleep ignores SIGTERM).
    process.stdout.write(`# the mirror pod left the API ${Date.now() - removedAt} ms after the manifest was removed\n`);
    assert.deepEqual(await running(), [], 'the static pod was stopped first');
  });

  it('the Node\'s pod CIDR, once set (by the node IPAM controller, here by hand), goes to the runtime: CRI UpdateRuntimeConfig (updatePodCIDR)', async () => {
    const gateway = stack.procs.get('cri-gateway#0')?.port;
    assert.ok(gateway, 'the cri-gateway\'s port');
    const calls = async () => {
      const text = await (await fetch(`http://127.0.0.1:${gateway}/metrics`)).text();
      const count = (name: string) => Number(new RegExp(`^${name}\\{[^}]*operation_type="update_runtime_config"[^}]*\\} (\\d+)`, 'm').exec(text)?.[1] ?? 0);
      return { ok: count('kubelet_runtime_operations_total'), failed: count('kubelet_runtime_operations_errors_total') };
    };
    assert.deepEqual(await calls(), { ok: 0, failed: 0 }, 'no pod CIDR yet: the runtime was not told any');
    await admin.request(`/api/v1/nodes/${NODE}`, { method: 'PATCH', contentType: PatchType.merge, body: { spec: { podCIDR: '10.244.7.0/24', podCIDRs: ['10.244.7.0/24'] } } });
    // The next node status update (every 10 s) gives it to the runtime, once.
    const seen = await stack.waitFor('UpdateRuntimeConfig called', async () => ((await calls()).ok > 0 ? calls() : undefined), 40_000);
    assert.deepEqual(seen, { ok: 1, failed: 0 });
  });

  it('an edited static pod is a new pod: its mirror pod is made again for the new UID', async () => {
    const name = stack.podName('edited');
    const getMirror = () => admin.request<Pod>(`/api/v1/namespaces/default/pods/${name}`).catch((err: unknown) => (isNotFound(err) ? undefined : Promise.reject(err as Error)));
    const manifest = (version: string) => `apiVersion: v1\nkind: Pod\nmetadata:\n  name: edited\n  labels:\n    version: "${version}"\nspec:\n  hostNetwork: true\n  terminationGracePeriodSeconds: 1\n  containers:\n    - name: main\n      image: ${IMAGE}\n      command: ["sleep", "3600"]\n`;
    const staticUid = async () => (await stack.podList()).items.find((p) => p.metadata?.name === name)?.metadata?.uid;
    stack.writeManifest('edited', manifest('1'));
    const first = await stack.waitFor('the mirror pod of the first version', async () => {
      const [m, uid] = await Promise.all([getMirror(), staticUid()]);
      return m && uid && m.metadata.annotations?.['kubernetes.io/config.mirror'] === uid ? { mirror: m, uid } : undefined;
    }, 30_000);
    stack.writeManifest('edited', manifest('2'));
    const second = await stack.waitFor('the mirror pod of the edited version', async () => {
      const [m, uid] = await Promise.all([getMirror(), staticUid()]);
      return m && uid && uid !== first.uid && m.metadata.annotations?.['kubernetes.io/config.mirror'] === uid ? { mirror: m, uid } : undefined;
    }, 60_000);
    assert.equal(second.mirror.metadata.labels?.['version'], '2');
    assert.notEqual(second.mirror.metadata.uid, first.mirror.metadata.uid, 'a new mirror pod, not the old one patched');
    assert.equal(second.mirror.metadata.annotations?.['kubernetes.io/config.hash'], second.uid, 'config.hash is the static pod\'s UID');
    stack.removeManifest('edited');
    await stack.waitFor('the mirror pod gone from the API', async () => ((await getMirror()) === undefined ? true : undefined), 60_000);
  });

  it('the PLEG stopped: NotReady with upstream\'s reason and message; started again: Ready', async () => {
    const pleg = stack.procs.get('pleg#0');
    assert.ok(pleg);
    pleg.process.kill('SIGKILL');
    stack.procs.delete('pleg#0');
    const stoppedAt = Date.now();
    const notReady = await waitForReady('False', 40_000);
    const ready = condition(notReady, 'Ready');
    assert.equal(ready?.reason, 'KubeletNotReady');
    assert.match(ready?.message ?? '', /^PLEG is not healthy: pleg was last seen active \d+s ago; threshold is 5s$/);
    const tookMs = Date.now() - stoppedAt;
    process.stdout.write(`# NotReady ${tookMs} ms after the PLEG was killed (threshold 5 s)\n`);
    await stack.startService('pleg');
    const restartedAt = Date.now();
    const again = await waitForReady('True', 30_000);
    assert.equal(condition(again, 'Ready')?.reason, 'KubeletReady');
    assert.notEqual(condition(again, 'Ready')?.lastTransitionTime, ready?.lastTransitionTime, 'a new transition');
    process.stdout.write(`# Ready again ${Date.now() - restartedAt} ms after the PLEG was started again\n`);
    // recordNodeStatusEvent: the turns as Events on the Node, as `kubectl describe node` lists them.
    const events = await stack.waitFor('the NodeNotReady and NodeReady events', async () => {
      const list = await admin.request<{ items: { reason?: string; message?: string; type?: string; involvedObject: { kind?: string; name?: string } }[] }>('/api/v1/namespaces/default/events', { query: { fieldSelector: `involvedObject.kind=Node,involvedObject.name=${NODE}` } });
      const reasons = list.items.map((e) => e.reason);
      return reasons.includes('NodeNotReady') && reasons.includes('NodeReady') ? list.items : undefined;
    }, 30_000);
    assert.deepEqual(events.filter((e) => e.reason === 'NodeNotReady').map((e) => [e.type, e.message]), [['Normal', `Node ${NODE} status is now: NodeNotReady`]]);
  });

  it('the apiserver restarted: the Lease is renewed again once it is back, and a static pod added meanwhile gets its mirror', async () => {
    const name = stack.podName('during');
    const restarting = cp.restart({ downMs: 5000 });
    await new Promise((r) => setTimeout(r, 1500));
    stack.writeManifest('during', `apiVersion: v1\nkind: Pod\nmetadata:\n  name: during\nspec:\n  hostNetwork: true\n  terminationGracePeriodSeconds: 2\n  containers:\n    - name: main\n      image: ${IMAGE}\n      command: ["sleep", "3600"]\n`);
    await restarting;
    const backAt = Date.now();
    const renewed = await stack.waitFor('the Lease renewed after the restart', async () => {
      const l = await getLease();
      return Date.parse(l.spec?.renewTime ?? '') >= backAt - 1000 ? l : undefined;
    }, 20_000);
    process.stdout.write(`# Lease renewed ${Date.parse(renewed.spec?.renewTime ?? '') - backAt} ms after the apiserver answered again\n`);
    // Ready once it is back (the status is posted every few seconds; a loaded machine may have seen a slow relist meanwhile).
    await stack.waitFor('the Node Ready after the restart', async () => (condition(await getNode(), 'Ready')?.status === 'True' ? true : undefined), 30_000);
    const mirror = await stack.waitFor('the mirror of the pod added while the apiserver was down', () => admin.request<Pod>(`/api/v1/namespaces/default/pods/${name}`).catch(() => undefined), 30_000);
    process.stdout.write(`# its mirror pod ${Date.now() - backAt} ms after the apiserver answered again\n`);
    assert.equal(mirror.metadata.annotations?.['kubernetes.io/config.mirror'], mirror.metadata.annotations?.['kubernetes.io/config.hash']);
    stack.removeManifest('during');
    await stack.waitFor('that mirror gone', () => admin.request<Pod>(`/api/v1/namespaces/default/pods/${name}`).then(() => undefined, (err: unknown) => (isNotFound(err) ? true : undefined)), 60_000);
  });
});
