/**
 * The eviction manager on the real stack (real NATS, real containerd, real
 * cgroups, a real kube-apiserver and etcd for the pods and the Node):
 *  - a BestEffort and a Burstable pod run while no threshold is met;
 *  - the sync loop restarted with a memory threshold the node is below
 *    (`memory.available<1000Ti`): the Node says MemoryPressure, the
 *    BestEffort pod is evicted first (Failed / Evicted with upstream's
 *    message, an `Evicted` event, its containers gone) while the Burstable
 *    one (within its memory request) still runs;
 *  - a new BestEffort pod is refused at admission: Failed / Evicted, "The
 *    node had condition: [MemoryPressure]. ".
 * Static pods are critical (upstream's IsCriticalPod) and never evicted,
 * so the pods here come from the apiserver.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { V1Pod } from '@kubernetes/client-node';
import { Kvm } from '@nats-io/kv';
import type { Pod } from 'kubernetes-types/core/v1.js';
import { isNotFound } from '@app/apiserver';
import { nodePressureKey, type Node, type NodePressureRecord } from '@app/contracts';
import { startControlPlane, type ControlPlane } from './support/control-plane.js';
import { NodeStack } from './support/node-stack.js';

const NODE = 'eviction-e2e';
const NS = 'eviction';
const IMAGE = 'localhost/kubelet-split/busybox:1.35';
/** A node capacity larger than the threshold, so that allocatable stays positive and the Burstable pod is admitted. */
const RESOURCES = { NODE_CPU: '4', NODE_MEMORY: '2000Ti' };
/** Met by no machine: no pressure while the pods start. */
const NO_PRESSURE = 'memory.available<1'; // one byte
/** Met by every machine: memory.available is always below 1000Ti. */
const MEMORY_PRESSURE = 'memory.available<1000Ti';

function apiPod(name: string, memoryRequest?: string): Pod {
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name, namespace: NS },
    spec: {
      nodeName: NODE,
      hostNetwork: true,
      automountServiceAccountToken: false,
      terminationGracePeriodSeconds: 30,
      containers: [
        {
          name: 'main',
          image: IMAGE,
          command: ['sh', '-c', 'trap "exit 0" TERM; while true; do sleep 1; done'],
          ...(memoryRequest ? { resources: { requests: { memory: memoryRequest } } } : {}),
        },
      ],
    },
  };
}

describe('eviction: under memory pressure the BestEffort pod goes first, and BestEffort pods are refused', { timeout: 600_000 }, () => {
  let cp: ControlPlane;
  let stack: NodeStack;

  const podsPath = `/api/v1/namespaces/${NS}/pods`;
  const served = async (name: string): Promise<V1Pod | undefined> => (await stack.podList()).items.find((p) => p.metadata?.namespace === NS && p.metadata.name === name);
  const waitServed = (name: string, what: string, pred: (p: V1Pod) => boolean, timeoutMs = 90_000) =>
    stack.waitFor(`${name} ${what}`, async () => {
      const p = await served(name);
      return p && pred(p) ? p : undefined;
    }, timeoutMs);
  const running = (p: V1Pod) => p.status?.phase === 'Running' && (p.status.containerStatuses ?? []).every((c) => c.state?.running !== undefined);
  const runningContainers = async (name: string) =>
    (await stack.cri.runtime('ListContainers', { filter: { labelSelector: { 'io.kubernetes.pod.name': name, 'io.kubernetes.pod.namespace': NS }, state: { state: 'CONTAINER_RUNNING' } } })).containers;
  const pressureRecord = async (): Promise<NodePressureRecord | undefined> => {
    const kv = await new Kvm(stack.nc).open('pods');
    const e = await kv.get(nodePressureKey(NODE));
    return e && e.value.length > 0 ? e.json<NodePressureRecord>() : undefined;
  };

  before(async () => {
    cp = await startControlPlane({ nodes: [NODE] });
    await cp.createNamespace(NS);
    stack = new NodeStack({
      node: NODE,
      services: ['cri-gateway', 'pleg', 'sync-loop', 'status-manager', 'pod-worker', 'config-source'],
      kubeconfig: cp.kubeconfig(NODE),
      env: {
        'sync-loop': { ...RESOURCES, EVICTION_HARD: NO_PRESSURE },
        'status-manager': { ...RESOURCES, EVICTION_HARD: NO_PRESSURE },
      },
    });
    await stack.start();
  });

  after(async () => {
    try {
      if (cp && stack?.nc) {
        const left = await cp.admin.request<{ items: Pod[] }>(podsPath).catch(() => ({ items: [] as Pod[] }));
        for (const p of left.items) {
          await cp.admin.request(`${podsPath}/${p.metadata?.name ?? ''}`, { method: 'DELETE', query: { gracePeriodSeconds: 0 } }).catch((err: unknown) => {
            if (!isNotFound(err)) throw err;
          });
        }
      }
      await stack?.stop();
    } finally {
      await cp?.stop();
    }
  });

  it('without pressure both pods run, and the node-pressure record says no condition', async () => {
    await cp.admin.request<Pod>(podsPath, { method: 'POST', body: apiPod('besteffort') });
    await cp.admin.request<Pod>(podsPath, { method: 'POST', body: apiPod('burstable', '64Mi') });
    const be = await waitServed('besteffort', 'Running', running);
    const bu = await waitServed('burstable', 'Running', running);
    assert.deepEqual([be.status?.qosClass, bu.status?.qosClass], ['BestEffort', 'Burstable']);
    const record = await stack.waitFor('the eviction manager\'s first record', pressureRecord, 30_000);
    assert.deepEqual(record.conditions, []);
    assert.ok((record.observations['memory.available']?.available ?? 0) > 0, 'memory.available is observed');
    assert.ok((record.observations['nodefs.available']?.capacity ?? 0) > 0, 'nodefs.available is observed');
  });

  it('under a memory threshold the node is below: MemoryPressure on the Node, the BestEffort pod evicted first with upstream\'s message and event, the Burstable one still running', async () => {
    // The sync loop again, with the threshold every machine is below.
    const old = stack.procs.get('sync-loop#0');
    assert.ok(old);
    (stack.options.env ?? {})['sync-loop'] = { ...RESOURCES, EVICTION_HARD: MEMORY_PRESSURE };
    await old.stop(10_000);
    stack.procs.delete('sync-loop#0');
    await stack.startService('sync-loop', '1');

    const evicted = await waitServed('besteffort', 'Failed / Evicted', (p) => p.status?.phase === 'Failed' && p.status.reason === 'Evicted', 120_000);
    const burstable = await served('burstable');
    assert.equal(burstable?.status?.phase, 'Running', 'the Burstable pod, within its request, is not the first one evicted');
    assert.match(
      evicted.status?.message ?? '',
      /^The node was low on resource: memory\. Threshold quantity: 1000Ti, available: \d+(Ki|Mi|Gi)?\. Container main was using \d+(Ki|Mi)?, request is 0, has larger consumption of memory\. $/,
    );
    const target = evicted.status?.conditions?.find((c) => c.type === 'DisruptionTarget');
    assert.deepEqual([target?.status, target?.reason], ['True', 'TerminationByKubelet']);
    const event = stack.events.find((e) => e.involvedObject.name === 'besteffort' && e.reason === 'Evicted');
    assert.ok(event, 'an Evicted event');
    assert.equal(event.eventType, 'Warning');
    const metrics = await (await fetch(`http://127.0.0.1:${stack.procs.get('sync-loop#1')?.port ?? 0}/metrics`)).text();
    assert.match(metrics, /^kubelet_evictions\{eviction_signal="memory\.available"[^}]*\} [1-9]\d*$/m, 'counted in kubelet_evictions');
    await stack.waitFor('the evicted pod\'s containers stopped', async () => ((await runningContainers('besteffort')).length === 0 ? true : undefined), 30_000);

    const record = await pressureRecord();
    assert.deepEqual([record?.conditions, record?.thresholdsMet], [['MemoryPressure'], [MEMORY_PRESSURE]]);
    const node = await stack.waitFor('the Node\'s MemoryPressure', async () => {
      const n = await cp.admin.request<Node>(`/api/v1/nodes/${NODE}`);
      return n.status?.conditions?.find((c) => c.type === 'MemoryPressure')?.status === 'True' ? n : undefined;
    }, 60_000);
    const memory = node.status?.conditions?.find((c) => c.type === 'MemoryPressure');
    assert.deepEqual([memory?.reason, memory?.message], ['KubeletHasInsufficientMemory', 'kubelet has insufficient memory available']);
    assert.equal(node.status?.conditions?.find((c) => c.type === 'DiskPressure')?.status, 'False');
    // The status manager patches the apiserver after /pods has it.
    const apiStatus = await stack.waitFor('the evicted status in the apiserver', async () => {
      const p = await cp.admin.request<Pod>(`${podsPath}/besteffort`);
      return p.status?.phase === 'Failed' ? p.status : undefined;
    }, 30_000);
    assert.deepEqual([apiStatus.reason, apiStatus.message], ['Evicted', evicted.status?.message]);
  });

  it('a new BestEffort pod is refused at admission: Failed / Evicted, "The node had condition: [MemoryPressure]. ", never run', async () => {
    await cp.admin.request<Pod>(podsPath, { method: 'POST', body: apiPod('late') });
    const refused = await waitServed('late', 'Failed', (p) => p.status?.phase === 'Failed', 60_000);
    assert.deepEqual([refused.status?.reason, refused.status?.message], ['Evicted', 'Pod was rejected: The node had condition: [MemoryPressure]. ']);
    assert.deepEqual(await runningContainers('late'), []);
  });
});
