import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { ApiError } from '@app/apiserver';
import { FakeClock } from '@app/clock/testing';
import { RuntimeState, nodeLabels } from '@app/kube';
import { silentLogger } from '@app/observability';
import { NodeStatusManager, mergePatch } from './node-status-manager.js';
import { NodeLabelsSink, NodeWatch, RuntimeNetworkConfig } from './ports.js';
import type { Node } from '@app/contracts';
import { FakeKubeApi, FakeMachine, FakeNodePressure, FakeRuntimeVersion } from './testing.js';

const Gi = 2 ** 30;
const Mi = 2 ** 20;

function setup(opts: { memory?: string } = {}) {
  const events: string[] = [];
  const network = new FakeRuntimeNetwork();
  const published = new RecordingLabels();
  const watch = new FakeNodeWatch();
  const clock = new FakeClock();
  const api = new FakeKubeApi();
  const machine = new FakeMachine();
  const pressure = new FakeNodePressure();
  // The runtime answered once and is never taken for down (its threshold is runtime-state.spec's business).
  const runtime = new RuntimeState(clock, Number.POSITIVE_INFINITY);
  runtime.setRuntimeSync(clock.now());
  const manager = new NodeStatusManager(api.nodeApi, machine, pressure, runtime, new FakeRuntimeVersion(), clock, silentLogger(), {
    nodeName: 'n1',
    hostname: 'n1',
    nodeIP: '10.0.0.5',
    labels: nodeLabels('n1', { team: 'a' }, 'amd64'),
    settings: { cpu: '4', memory: opts.memory ?? '8Gi', maxPods: 110, kubeReserved: 'cpu=500m,memory=1Gi', evictionHard: 'memory.available<100Mi,nodefs.available<10%' },
    kubeletPort: 10250,
    recordEvent: (reason, message) => events.push(`${reason}: ${message}`),
    runtimeNetwork: network,
    nodeLabels: published,
    nodeWatch: watch,
  });
  const ready = () => api.nodes.get('n1')?.status?.conditions?.find((c) => c.type === 'Ready');
  return { clock, api, machine, pressure, runtime, manager, ready, events, network, published, watch };
}

/** The runtime's UpdateRuntimeConfig calls; `fail` makes the next one fail. */
class FakeRuntimeNetwork extends RuntimeNetworkConfig {
  calls: string[] = [];
  fail = false;
  updatePodCIDR(cidrs: string): Promise<void> {
    this.calls.push(cidrs);
    if (this.fail) {
      this.fail = false;
      return Promise.reject(new Error('runtime down'));
    }
    return Promise.resolve();
  }
}

/** The labels published for admission. */
class RecordingLabels extends NodeLabelsSink {
  published: Record<string, string>[] = [];
  publish(labels: Record<string, string>): Promise<void> {
    this.published.push({ ...labels });
    return Promise.resolve();
  }
}

/** The Node watch: `emit` plays a change. */
class FakeNodeWatch extends NodeWatch {
  onNode?: (node: Node | undefined) => void;
  start(onNode: (node: Node | undefined) => void): void {
    this.onNode = onNode;
  }
  stop(): void {
    this.onNode = undefined;
  }
}

describe("NodeStatusManager: the Node's labels for admission", () => {
  it('a label set on the Node is published as the watch sees it, before the next status update; not once stopped', async () => {
    const { clock, manager, published, watch } = setup();
    manager.start();
    await clock.step(100);
    watch.onNode?.({ metadata: { name: 'n1', labels: { color: 'blue' } } });
    await clock.step(1);
    assert.deepEqual(published.published.at(-1), { color: 'blue' });
    manager.stop();
    assert.equal(watch.onNode, undefined, 'the watch stops with the term');
  });

  it('publishes the API Node\'s labels as read, a label someone else set included, and again only when they change', async () => {
    const { clock, api, manager, published } = setup();
    manager.start();
    await clock.step(10_100);
    assert.equal(published.published.at(-1)?.['team'], 'a');
    const count = published.published.length;
    await clock.step(20_000);
    assert.equal(published.published.length, count, 'unchanged: not written again');
    const node = api.nodes.get('n1');
    assert.ok(node);
    node.metadata.labels = { ...node.metadata.labels, color: 'blue' };
    await clock.step(10_000);
    assert.equal(published.published.at(-1)?.['color'], 'blue');
    assert.equal(published.published.length, count + 1);
    manager.stop();
  });
});

describe('NodeStatusManager: updatePodCIDR', () => {
  it('gives the runtime the Node\'s spec.podCIDRs once set, once (not at every tick), again when they change, and after a failure', async () => {
    const { clock, api, manager, network } = setup();
    manager.start();
    await clock.step(100);
    assert.deepEqual(network.calls, [], 'no pod CIDR on the Node: nothing');
    const node = api.nodes.get('n1');
    assert.ok(node);
    node.spec = { ...node.spec, podCIDR: '10.244.1.0/24', podCIDRs: ['10.244.1.0/24', 'fd00:1::/64'] };
    network.fail = true;
    await clock.step(10_000);
    assert.deepEqual(network.calls, ['10.244.1.0/24,fd00:1::/64'], 'comma-separated, as updatePodCIDR joins them');
    await clock.step(10_000);
    assert.deepEqual(network.calls, ['10.244.1.0/24,fd00:1::/64', '10.244.1.0/24,fd00:1::/64'], 'tried again after the failure');
    await clock.step(30_000);
    assert.equal(network.calls.length, 2, 'then not again while unchanged');
    node.spec = { ...node.spec, podCIDRs: ['10.244.2.0/24'] };
    await clock.step(10_000);
    assert.deepEqual(network.calls.at(-1), '10.244.2.0/24');
    manager.stop();
  });
});

describe('NodeStatusManager: registerWithAPIServer', () => {
  it('creates the Node when leading, with the labels, capacity and allocatable admission uses, and Ready', async () => {
    const { clock, api, manager, ready, events } = setup();
    manager.start();
    await clock.step(100);
    const node = api.nodes.get('n1');
    assert.ok(node, 'registered 100 ms after start');
    assert.equal(node.metadata.labels?.['kubernetes.io/hostname'], 'n1');
    assert.equal(node.metadata.labels?.['team'], 'a');
    assert.deepEqual(node.status?.capacity, { cpu: '4', memory: '8Gi', pods: '110', 'ephemeral-storage': '100Gi' });
    // capacity − kube-reserved − the hard eviction thresholds (GetNodeAllocatableReservation).
    assert.deepEqual(node.status?.allocatable, { cpu: '3500m', memory: `${(8 * Gi - Gi - 100 * Mi) / Mi}Mi`, pods: '110', 'ephemeral-storage': '90Gi' });
    assert.equal(ready()?.status, 'True');
    assert.deepEqual(events, ['NodeHasSufficientMemory', 'NodeHasNoDiskPressure', 'NodeHasSufficientPID'].map((r) => `${r}: Node n1 status is now: ${r}`), 'the conditions\' first events, as a kubelet starting records them');
    manager.stop();
  });

  it('an existing Node is reconciled (default labels set again) rather than created', async () => {
    const { clock, api, manager } = setup();
    api.nodes.set('n1', { metadata: { name: 'n1', uid: 'u0', resourceVersion: '1', labels: { 'kubernetes.io/hostname': 'stale', other: 'x' } }, status: {} });
    manager.start();
    await clock.step(100);
    assert.deepEqual(api.calls.slice(0, 3), ['createNode', 'getNode', 'patchNodeStatus']);
    assert.equal(api.nodes.get('n1')?.metadata.labels?.['kubernetes.io/hostname'], 'n1');
    assert.equal(api.nodes.get('n1')?.metadata.labels?.['other'], 'x');
    assert.equal(api.nodes.get('n1')?.metadata.uid, 'u0');
    manager.stop();
  });

  it('tries again after a failure, 100 ms doubling to 7 s between tries', async () => {
    const { clock, api, manager } = setup();
    api.fail['createNode'] = [new ApiError(0, 'ConnectionFailed', 'down'), new ApiError(0, 'ConnectionFailed', 'down'), new ApiError(500, 'InternalError', 'etcd')];
    manager.start();
    await clock.step(100);
    await clock.step(200);
    await clock.step(400);
    assert.equal(api.nodes.size, 0);
    await clock.step(799);
    assert.equal(api.nodes.size, 0);
    await clock.step(1);
    assert.ok(api.nodes.get('n1'), 'the fourth try, 1.5 s after start');
    manager.stop();
  });
});

describe('NodeStatusManager: the status every 10 s, patched when changed or every 5 min', () => {
  it('does not patch an unchanged status at each tick, and does after the report frequency', async () => {
    const { clock, api, manager } = setup();
    manager.start();
    await clock.step(100);
    const patches = () => api.calls.filter((c) => c === 'patchNodeStatus').length;
    const first = patches();
    assert.equal(first, 1, 'the status right after registration (no report yet)');
    await clock.step(10_000 * 29);
    assert.equal(patches(), first, 'unchanged for 290 s: no patch');
    await clock.step(10_000);
    assert.equal(patches(), first + 1, 'after 5 minutes: reported');
    manager.stop();
  });

  it('a health turn patches at once: NotReady with the runtime state\'s message, then Ready again', async () => {
    const { clock, api, runtime, manager, ready, events } = setup();
    let pleg: string | undefined;
    runtime.addHealthCheck('PLEG', () => pleg);
    manager.start();
    await clock.step(100);
    assert.equal(ready()?.status, 'True');
    pleg = 'pleg was last seen active 181s ago; threshold is 180s';
    manager.kick();
    await clock.step(0);
    assert.deepEqual([ready()?.status, ready()?.reason, ready()?.message], ['False', 'KubeletNotReady', 'PLEG is not healthy: pleg was last seen active 181s ago; threshold is 180s']);
    pleg = undefined;
    await clock.step(10_000);
    assert.deepEqual([ready()?.status, ready()?.reason], ['True', 'KubeletReady'], 'the next tick sees it healthy');
    assert.deepEqual(events.slice(-2), ['NodeNotReady: Node n1 status is now: NodeNotReady', 'NodeReady: Node n1 status is now: NodeReady'], 'recordNodeStatusEvent at each turn');
    assert.ok(api.nodes.get('n1'));
    manager.stop();
  });

  it('the eviction manager\'s record gives MemoryPressure and DiskPressure, with upstream\'s reasons, and they clear with it', async () => {
    const { clock, api, pressure, manager } = setup();
    const cond = (type: string) => api.nodes.get('n1')?.status?.conditions?.find((x) => x.type === type);
    manager.start();
    await clock.step(100);
    assert.deepEqual(['MemoryPressure', 'DiskPressure', 'PIDPressure'].map((t) => cond(t)?.status), ['False', 'False', 'False'], 'no record yet: no pressure');
    pressure.record = { observedAt: clock.now(), conditions: ['MemoryPressure', 'DiskPressure'], thresholdsMet: ['memory.available<100Mi'], observations: { 'memory.available': { available: 50 * Mi, capacity: 8 * Gi } } };
    await clock.step(10_000);
    assert.deepEqual([cond('MemoryPressure')?.status, cond('MemoryPressure')?.reason, cond('MemoryPressure')?.message], ['True', 'KubeletHasInsufficientMemory', 'kubelet has insufficient memory available']);
    assert.deepEqual([cond('DiskPressure')?.status, cond('DiskPressure')?.reason], ['True', 'KubeletHasDiskPressure']);
    assert.deepEqual([cond('PIDPressure')?.status, cond('PIDPressure')?.reason], ['False', 'KubeletHasSufficientPID']);
    pressure.fail = true;
    await clock.step(10_000);
    assert.equal(cond('MemoryPressure')?.status, 'True', 'a record that cannot be read keeps what was said last');
    pressure.fail = false;
    pressure.record = { ...pressure.record, conditions: [] };
    await clock.step(10_000);
    assert.deepEqual([cond('MemoryPressure')?.status, cond('MemoryPressure')?.reason], ['False', 'KubeletHasSufficientMemory']);
    manager.stop();
  });

  it('a failed patch is tried again at once, up to 5 times (nodeStatusUpdateRetry)', async () => {
    const { clock, api, runtime, manager, ready } = setup();
    manager.start();
    await clock.step(100);
    api.fail['patchNodeStatus'] = [1, 2, 3].map(() => new ApiError(0, 'ConnectionFailed', 'down'));
    runtime.setRuntimeState('container runtime not ready: RuntimeReady=false');
    manager.kick();
    await clock.step(0);
    assert.equal(ready()?.status, 'False');
    manager.stop();
  });

  it('stop(): nothing more is written', async () => {
    const { clock, api, manager } = setup();
    manager.start();
    await clock.step(100);
    manager.stop();
    const n = api.calls.length;
    await clock.step(600_000);
    assert.equal(api.calls.length, n);
    assert.equal(clock.waiting, 0);
  });
});

describe('NodeStatusManager: the conditions it computed, for the fleet (Subjects.nodeConditions)', () => {
  it('none before it leads; Ready as computed, even when the patch fails (the apiserver cut off); none once stopped', async () => {
    const { clock, api, runtime, manager } = setup();
    const readyOf = () => manager.conditions.find((c) => c.type === 'Ready');
    assert.equal(manager.conditions.length, 0);
    const pleg: { unhealthy?: string } = {};
    runtime.addHealthCheck('PLEG', () => pleg.unhealthy);
    manager.start();
    await clock.step(100);
    assert.deepEqual([readyOf()?.status, readyOf()?.reason], ['True', 'KubeletReady']);
    assert.deepEqual(manager.conditions.map((c) => c.type).sort(), ['DiskPressure', 'MemoryPressure', 'PIDPressure', 'Ready']);
    api.fail['patchNodeStatus'] = [1, 2, 3, 4, 5].map(() => new ApiError(0, 'ConnectionFailed', 'down'));
    pleg.unhealthy = 'pleg was last seen active 181s ago; threshold is 180s';
    manager.kick();
    await clock.step(0);
    assert.deepEqual([readyOf()?.status, readyOf()?.reason], ['False', 'KubeletNotReady'], 'what the node says, patched or not');
    assert.equal(api.nodes.get('n1')?.status?.conditions?.find((c) => c.type === 'Ready')?.status, 'True', 'the apiserver still has the old status');
    manager.stop();
    assert.equal(manager.conditions.length, 0);
  });
});

describe('mergePatch (PatchNodeStatus) of the runtime-reported fields', () => {
  const node = (status: Node['status']): Node => ({ apiVersion: 'v1', kind: 'Node', metadata: { name: 'n1' }, spec: {}, status });
  it('sends the runtime handlers and the features once the runtime reported them', () => {
    const patch = mergePatch(node({}), node({ runtimeHandlers: [{ name: '', features: { recursiveReadOnlyMounts: true, userNamespaces: true } }], features: { supplementalGroupsPolicy: true } } as unknown as Node['status'])) as { status: Record<string, unknown> };
    assert.deepEqual(patch.status['runtimeHandlers'], [{ name: '', features: { recursiveReadOnlyMounts: true, userNamespaces: true } }]);
    assert.deepEqual(patch.status['features'], { supplementalGroupsPolicy: true });
  });
  it('removes handlers a runtime no longer reports (containerd 2 replaced by 1.6), and sends no features it never had', () => {
    const patch = mergePatch(node({ runtimeHandlers: [{ name: '' }] }), node({})) as { status: Record<string, unknown> };
    assert.equal(patch.status['runtimeHandlers'], null);
    assert.ok(!('features' in patch.status));
  });
});
