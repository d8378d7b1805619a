import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { Node, NodeCondition } from '@app/contracts';
import { initialNode, nodeStatusHasChanged, reconcileExistingNode, setNodeStatus, type NodeStatusInputs } from './node-status.js';

const T0 = Date.UTC(2026, 0, 1, 0, 0, 0);
const t = (ms: number) => new Date(ms).toISOString().replace('.000Z', 'Z');
const Gi = 2 ** 30;

function inputs(over: Partial<NodeStatusInputs> = {}): NodeStatusInputs {
  return {
    hostname: 'n1',
    nodeIP: '10.0.0.5',
    capacity: { cpu: 4000, memory: 8 * Gi, pods: 110, 'ephemeral-storage': 100 * Gi },
    allocatable: { cpu: 4000, memory: 8 * Gi - 100 * 2 ** 20, pods: 110, 'ephemeral-storage': 90 * Gi },
    nodeInfo: { machineID: 'm', systemUUID: 'u', bootID: 'b', kernelVersion: 'k', osImage: 'o', containerRuntimeVersion: 'containerd://1.6.20', kubeletVersion: 'v1.34.4-kubelet-split', operatingSystem: 'linux', architecture: 'amd64' },
    kubeletPort: 10250,
    memoryPressure: false,
    diskPressure: false,
    pidPressure: false,
    ...over,
  };
}

const cond = (node: Node, type: string): NodeCondition | undefined => node.status?.conditions?.find((c) => c.type === type);

describe('initialNode and the setters (kubelet_node_status.go, nodestatus/setters.go)', () => {
  it('builds the Node upstream registers: labels, addresses, capacity, allocatable, nodeInfo, daemonEndpoints, the four conditions in order', () => {
    const node = initialNode('n1', { 'kubernetes.io/hostname': 'n1', 'kubernetes.io/os': 'linux' }, inputs(), T0);
    assert.deepEqual(node.metadata.labels, { 'kubernetes.io/hostname': 'n1', 'kubernetes.io/os': 'linux' });
    assert.equal(node.metadata.annotations?.['volumes.kubernetes.io/controller-managed-attach-detach'], 'true');
    assert.deepEqual(node.status?.addresses, [{ type: 'InternalIP', address: '10.0.0.5' }, { type: 'Hostname', address: 'n1' }]);
    assert.deepEqual(node.status?.capacity, { cpu: '4', memory: '8Gi', pods: '110', 'ephemeral-storage': '100Gi' });
    assert.deepEqual(node.status?.allocatable, { cpu: '4', memory: '8092Mi', pods: '110', 'ephemeral-storage': '90Gi' });
    assert.equal(node.status?.nodeInfo?.containerRuntimeVersion, 'containerd://1.6.20');
    assert.equal(node.status?.nodeInfo?.kubeletVersion, 'v1.34.4-kubelet-split');
    assert.deepEqual(node.status?.daemonEndpoints, { kubeletEndpoint: { Port: 10250 } });
    assert.deepEqual(node.status?.conditions?.map((c) => [c.type, c.status, c.reason, c.message]), [
      ['MemoryPressure', 'False', 'KubeletHasSufficientMemory', 'kubelet has sufficient memory available'],
      ['DiskPressure', 'False', 'KubeletHasNoDiskPressure', 'kubelet has no disk pressure'],
      ['PIDPressure', 'False', 'KubeletHasSufficientPID', 'kubelet has sufficient PID available'],
      ['Ready', 'True', 'KubeletReady', 'kubelet is posting ready status'],
    ]);
    for (const c of node.status?.conditions ?? []) assert.deepEqual([c.lastHeartbeatTime, c.lastTransitionTime], [t(T0), t(T0)]);
  });

  const ready: { name: string; over: Partial<NodeStatusInputs>; status: string; reason: string; message: string }[] = [
    { name: 'healthy: Ready', over: {}, status: 'True', reason: 'KubeletReady', message: 'kubelet is posting ready status' },
    {
      name: 'the PLEG unhealthy: NotReady with runtimeState\'s message',
      over: { runtimeErrors: 'PLEG is not healthy: pleg was last seen active 181s ago; threshold is 180s' },
      status: 'False',
      reason: 'KubeletNotReady',
      message: 'PLEG is not healthy: pleg was last seen active 181s ago; threshold is 180s',
    },
    {
      name: 'runtime and network: both, aggregated as errors.NewAggregate prints them',
      over: { runtimeErrors: 'container runtime is down', networkErrors: 'container runtime network not ready: NetworkReady=false reason:NetworkPluginNotReady message:cni' },
      status: 'False',
      reason: 'KubeletNotReady',
      message: '[container runtime is down, container runtime network not ready: NetworkReady=false reason:NetworkPluginNotReady message:cni]',
    },
    {
      name: 'a required capacity missing',
      over: { capacity: { cpu: 1000, memory: Gi, pods: 10 } },
      status: 'False',
      reason: 'KubeletNotReady',
      message: 'missing node capacity for resources: ephemeral-storage',
    },
  ];
  for (const tc of ready) {
    it(`Ready: ${tc.name}`, () => {
      const node = initialNode('n1', {}, inputs(tc.over), T0);
      const c = cond(node, 'Ready');
      assert.deepEqual([c?.status, c?.reason, c?.message], [tc.status, tc.reason, tc.message]);
    });
  }

  const pressure: { name: string; over: Partial<NodeStatusInputs>; type: string; reason: string; message: string; event: string }[] = [
    { name: 'memory', over: { memoryPressure: true }, type: 'MemoryPressure', reason: 'KubeletHasInsufficientMemory', message: 'kubelet has insufficient memory available', event: 'NodeHasInsufficientMemory' },
    { name: 'disk', over: { diskPressure: true }, type: 'DiskPressure', reason: 'KubeletHasDiskPressure', message: 'kubelet has disk pressure', event: 'NodeHasDiskPressure' },
    { name: 'PIDs', over: { pidPressure: true }, type: 'PIDPressure', reason: 'KubeletHasInsufficientPID', message: 'kubelet has insufficient PID available', event: 'NodeHasInsufficientPID' },
  ];
  for (const tc of pressure) {
    it(`${tc.type}: under ${tc.name} pressure, with upstream's reason, and a transition`, () => {
      const node = initialNode('n1', {}, inputs(), T0);
      const events = setNodeStatus(node, inputs(tc.over), T0 + 10_000);
      const c = cond(node, tc.type);
      assert.deepEqual([c?.status, c?.reason, c?.message, c?.lastTransitionTime], ['True', tc.reason, tc.message, t(T0 + 10_000)]);
      assert.deepEqual(events, [tc.event]);
    });
  }

  it('a condition keeps its lastTransitionTime while its status holds, and only its heartbeat moves; NodeNotReady and NodeReady are recorded at the turns', () => {
    const node = initialNode('n1', {}, inputs(), T0);
    assert.deepEqual(setNodeStatus(node, inputs(), T0 + 10_000), []);
    assert.deepEqual([cond(node, 'Ready')?.lastTransitionTime, cond(node, 'Ready')?.lastHeartbeatTime], [t(T0), t(T0 + 10_000)]);
    assert.deepEqual(setNodeStatus(node, inputs({ runtimeErrors: 'container runtime is down' }), T0 + 20_000), ['NodeNotReady']);
    assert.equal(cond(node, 'Ready')?.lastTransitionTime, t(T0 + 20_000));
    setNodeStatus(node, inputs({ runtimeErrors: 'container runtime is down' }), T0 + 30_000);
    assert.equal(cond(node, 'Ready')?.lastTransitionTime, t(T0 + 20_000));
    assert.deepEqual(setNodeStatus(node, inputs(), T0 + 40_000), ['NodeReady']);
    assert.equal(cond(node, 'Ready')?.status, 'True');
  });

  it('keeps what it does not own: another controller\'s condition, an extended resource', () => {
    const node = initialNode('n1', {}, inputs(), T0);
    node.status?.conditions?.unshift({ type: 'NetworkUnavailable', status: 'False', reason: 'RouteCreated' });
    node.status!.capacity!['example.com/dongle'] = '2';
    setNodeStatus(node, inputs(), T0 + 10_000);
    assert.deepEqual(node.status?.conditions?.map((c) => c.type), ['NetworkUnavailable', 'MemoryPressure', 'DiskPressure', 'PIDPressure', 'Ready']);
    assert.equal(node.status?.capacity?.['example.com/dongle'], '2');
  });

  it("RuntimeHandlers and NodeFeatures: containerd 2's handlers and SupplementalGroupsPolicy; containerd 1.6's none, the fields left out", () => {
    const two = initialNode('n1', {}, inputs({ runtimeHandlers: [{ name: '', recursiveReadOnlyMounts: true, userNamespaces: true }, { name: 'runc', recursiveReadOnlyMounts: true, userNamespaces: true }], runtimeFeatures: { supplementalGroupsPolicy: true } }), T0);
    assert.deepEqual(two.status?.runtimeHandlers, [
      { name: '', features: { recursiveReadOnlyMounts: true, userNamespaces: true } },
      { name: 'runc', features: { recursiveReadOnlyMounts: true, userNamespaces: true } },
    ]);
    assert.deepEqual((two.status as { features?: unknown }).features, { supplementalGroupsPolicy: true });
    const old = initialNode('n1', {}, inputs(), T0);
    assert.equal(old.status?.runtimeHandlers, undefined);
    assert.equal((old.status as { features?: unknown }).features, undefined);
    assert.ok(nodeStatusHasChanged(old.status, two.status), 'a runtime that gained them changes the Node');
  });

  it('huge pages: a size that went away leaves capacity and allocatable', () => {
    const node = initialNode('n1', {}, inputs({ capacity: { ...inputs().capacity, 'hugepages-2Mi': 2 ** 30 }, allocatable: { ...inputs().allocatable, 'hugepages-2Mi': 2 ** 30 } }), T0);
    assert.equal(node.status?.capacity?.['hugepages-2Mi'], '1Gi');
    setNodeStatus(node, inputs(), T0 + 10_000);
    assert.equal(node.status?.capacity?.['hugepages-2Mi'], undefined);
    assert.equal(node.status?.allocatable?.['hugepages-2Mi'], undefined);
  });
});

describe('nodeStatusHasChanged', () => {
  const base = () => initialNode('n1', {}, inputs(), T0);
  const cases: { name: string; change: (n: Node) => void; want: boolean }[] = [
    { name: 'a heartbeat only: unchanged', change: (n) => setNodeStatus(n, inputs(), T0 + 10_000), want: false },
    { name: 'the same quantity written otherwise: unchanged', change: (n) => void (n.status!.capacity!['memory'] = String(8 * Gi)), want: false },
    { name: 'a condition\'s message: changed', change: (n) => setNodeStatus(n, inputs({ runtimeErrors: 'x' }), T0), want: true },
    { name: 'an allocatable amount: changed', change: (n) => void (n.status!.allocatable!['cpu'] = '3'), want: true },
    { name: 'an address: changed', change: (n) => setNodeStatus(n, inputs({ nodeIP: '10.0.0.6' }), T0), want: true },
    { name: 'conditions in another order: unchanged', change: (n) => void n.status!.conditions!.reverse(), want: false },
  ];
  for (const tc of cases) {
    it(tc.name, () => {
      const a = base();
      const b = structuredClone(a);
      tc.change(b);
      assert.equal(nodeStatusHasChanged(a.status, b.status), tc.want);
    });
  }
});

describe('reconcileExistingNode (tryRegisterWithAPIServer on AlreadyExists)', () => {
  const initial = () => initialNode('n1', { 'kubernetes.io/hostname': 'n1', 'kubernetes.io/os': 'linux', 'kubernetes.io/arch': 'amd64', 'beta.kubernetes.io/os': 'linux', 'beta.kubernetes.io/arch': 'amd64' }, inputs(), T0);

  it('nothing to do when the existing Node agrees', () => {
    const existing = { ...initial(), metadata: { ...initial().metadata, uid: 'u1', labels: { ...initial().metadata.labels, team: 'a' } } };
    assert.equal(reconcileExistingNode(initial(), existing), undefined);
  });

  it('sets the default labels again, keeps the others, and adds missing resources and the attach/detach annotation', () => {
    const existing: Node = { metadata: { name: 'n1', uid: 'u1', labels: { 'kubernetes.io/hostname': 'old', team: 'a' } }, status: {} };
    const got = reconcileExistingNode(initial(), existing);
    assert.deepEqual(got?.metadata.labels, { 'kubernetes.io/hostname': 'n1', team: 'a', 'kubernetes.io/os': 'linux', 'kubernetes.io/arch': 'amd64', 'beta.kubernetes.io/os': 'linux', 'beta.kubernetes.io/arch': 'amd64' });
    assert.equal(got?.metadata.annotations?.['volumes.kubernetes.io/controller-managed-attach-detach'], 'true');
    assert.deepEqual(got?.status?.capacity, initial().status?.capacity);
    assert.deepEqual(got?.status?.allocatable, initial().status?.allocatable);
  });

  it('removes a huge page size the machine no longer has', () => {
    const existing = structuredClone(initial());
    existing.status!.capacity!['hugepages-1Gi'] = '2Gi';
    existing.status!.allocatable!['hugepages-1Gi'] = '2Gi';
    const got = reconcileExistingNode(initial(), existing);
    assert.equal(got?.status?.capacity?.['hugepages-1Gi'], undefined);
    assert.equal(got?.status?.allocatable?.['hugepages-1Gi'], undefined);
  });
});
