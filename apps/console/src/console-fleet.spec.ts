import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { FakeClock } from '@app/clock/testing';
import { MessageTypes, type NodeCondition, type NodeConditionsMessage, type Pod, type PodList, type ServiceInfo } from '@app/contracts';
import { ConsoleFleet, FLEET_OFF, fleetNodes, type FleetAnswers, type FleetNode } from './console-fleet.js';
import { nodesOfLeafz } from './adapters/nats-fleet-reads.js';
import { FleetReads, type FleetAnswer } from './ports.js';

const BOUND = 2000;

function info(node: string, service: string, instance = 'i1', role?: 'leader' | 'standby'): ServiceInfo {
  return {
    type: 'kubelet.v1.service_info',
    service,
    node,
    instance,
    connectionName: `${service}@${node}#${instance}`,
    ...(role ? { leadership: { role, identity: instance } } : {}),
  } as ServiceInfo;
}

function pod(namespace: string, name: string, phase: string, ready: boolean[]): Pod {
  return {
    metadata: { namespace, name, uid: `${namespace}-${name}` },
    spec: { containers: ready.map((_, i) => ({ name: `c${i}` })) },
    status: { phase, containerStatuses: ready.map((r, i) => ({ name: `c${i}`, ready: r, restartCount: 0, image: 'x', imageID: '', containerID: '' })) },
  };
}

function podList(node: string, instance: string, pods: Pod[]): FleetAnswer<PodList> {
  return { sender: `status-manager@${node}#${instance}`, body: { apiVersion: 'v1', kind: 'PodList', metadata: {}, items: pods } };
}

function conditions(node: string, leading: boolean, ready?: Pick<NodeCondition, 'status' | 'reason' | 'message'>): NodeConditionsMessage {
  return { type: MessageTypes.nodeConditions, node, leading, conditions: ready ? [{ type: 'MemoryPressure', status: 'False' }, { type: 'Ready', ...ready }] : [] };
}

const READY = { status: 'True', reason: 'KubeletReady', message: 'kubelet is posting ready status' };
const NOT_READY = { status: 'False', reason: 'KubeletNotReady', message: 'container runtime is down' };

/** Node a: Ready, two pods, two pod-worker replicas; node b: NotReady, no pods. */
const twoNodes: FleetAnswers = {
  linked: ['a', 'b'],
  infos: [info('a', 'status-manager', 'i1', 'leader'), info('a', 'pod-worker', 'p1'), info('a', 'pod-worker', 'p2'), info('a', 'node-status', 'n1', 'leader'), info('b', 'status-manager', 'i1', 'leader'), info('b', 'node-status')],
  pods: [podList('a', 'i1', [pod('default', 'web', 'Running', [true, false]), pod('kube-system', 'dns', 'Pending', [false])]), podList('b', 'i1', [])],
  conditions: [conditions('a', true, READY), conditions('b', true, NOT_READY)],
};

const row = (nodes: FleetNode[], name: string) => nodes.find((n) => n.name === name);
const summary = (n: FleetNode | undefined) => n && { reachable: n.reachable, ready: n.ready, reason: n.reason, pods: n.pods.map((p) => `${p.namespace}/${p.name} ${p.phase} ${p.ready}`), services: n.services.map((s) => `${s.service}×${s.instances}`) };

describe('fleetNodes: the fleet table from one refresh and the nodes seen before', () => {
  const cases: { name: string; answers: FleetAnswers; previous?: FleetNode[]; node: string; want: ReturnType<typeof summary> }[] = [
    {
      name: 'a node that answers: its Ready condition as its leading node-status computed it, its pods (READY counted), its services with their instances',
      answers: twoNodes,
      node: 'a',
      want: { reachable: true, ready: 'True', reason: 'KubeletReady', pods: ['default/web Running 1/2', 'kube-system/dns Pending 0/1'], services: ['node-status×1', 'pod-worker×2', 'status-manager×1'] },
    },
    {
      name: 'a node whose runtime is down: NotReady with the reason it gives',
      answers: twoNodes,
      node: 'b',
      want: { reachable: true, ready: 'False', reason: 'KubeletNotReady', pods: [], services: ['node-status×1', 'status-manager×1'] },
    },
    {
      name: "the leading status manager's pods, not a standby's (which may lag)",
      answers: {
        linked: ['a'],
        infos: [info('a', 'status-manager', 'old', 'standby'), info('a', 'status-manager', 'new', 'leader')],
        pods: [podList('a', 'old', [pod('default', 'stale', 'Running', [true])]), podList('a', 'new', [pod('default', 'web', 'Running', [true])])],
        conditions: [conditions('a', true, READY)],
      },
      node: 'a',
      want: { reachable: true, ready: 'True', reason: 'KubeletReady', pods: ['default/web Running 1/1'], services: ['status-manager×2'] },
    },
    {
      name: 'node-status does not answer: reachable, but Ready is Unknown',
      answers: { linked: ['a'], infos: [info('a', 'status-manager')], pods: [], conditions: [] },
      node: 'a',
      want: { reachable: true, ready: 'Unknown', reason: 'NodeStatusNotAnswering', pods: [], services: ['status-manager×1'] },
    },
    {
      name: "only a standby node-status answers: nobody keeps the Node, Unknown",
      answers: { linked: ['a'], infos: [info('a', 'node-status')], pods: [], conditions: [conditions('a', false)] },
      node: 'a',
      want: { reachable: true, ready: 'Unknown', reason: 'NoLeader', pods: [], services: ['node-status×1'] },
    },
    {
      name: 'the leader keeps no Node (no apiserver): Unknown, said why',
      answers: { linked: ['a'], infos: [info('a', 'node-status')], pods: [], conditions: [conditions('a', true)] },
      node: 'a',
      want: { reachable: true, ready: 'Unknown', reason: 'NoNodeStatus', pods: [], services: ['node-status×1'] },
    },
    {
      name: 'a node linked to the hub on which nothing answers: Unknown, no services',
      answers: { linked: ['a'], infos: [], pods: [], conditions: [] },
      node: 'a',
      want: { reachable: false, ready: 'Unknown', reason: 'NodeStatusUnknown', pods: [], services: [] },
    },
    {
      name: "still linked when the cut falls during a refresh, nothing answering: Unknown, the pods as last read (not none)",
      answers: { linked: ['a', 'b'], infos: twoNodes.infos.filter((i) => i.node === 'b'), pods: [twoNodes.pods[1] as FleetAnswer<PodList>], conditions: [conditions('b', true, NOT_READY)] },
      previous: fleetNodes(twoNodes, [], 1000, BOUND),
      node: 'a',
      want: { reachable: false, ready: 'Unknown', reason: 'NodeStatusUnknown', pods: ['default/web Running 1/2', 'kube-system/dns Pending 0/1'], services: [] },
    },
    {
      name: "its status manager silent this time: the pods as it last said them",
      answers: { linked: ['a'], infos: [info('a', 'node-status')], pods: [], conditions: [conditions('a', true, READY)] },
      previous: fleetNodes(twoNodes, [], 1000, BOUND),
      node: 'a',
      want: { reachable: true, ready: 'True', reason: 'KubeletReady', pods: ['default/web Running 1/2', 'kube-system/dns Pending 0/1'], services: ['node-status×1'] },
    },
    {
      name: 'a node seen before that answers nothing now: Unknown (unreachable), its pods as last read, no services',
      answers: { linked: ['a'], infos: [info('a', 'status-manager')], pods: [], conditions: [] },
      previous: fleetNodes(twoNodes, [], 1000, BOUND),
      node: 'b',
      want: { reachable: false, ready: 'Unknown', reason: 'NodeStatusUnknown', pods: [], services: [] },
    },
  ];
  for (const tc of cases) {
    it(tc.name, () => {
      assert.deepEqual(summary(row(fleetNodes(tc.answers, tc.previous ?? [], 5000, BOUND), tc.node)), tc.want);
    });
  }

  it('keeps an unreachable node\'s pods and when it last answered; the next answer makes it reachable again', () => {
    const seen = fleetNodes(twoNodes, [], 1000, BOUND);
    const cut = fleetNodes({ linked: ['b'], infos: twoNodes.infos.filter((i) => i.node === 'b'), pods: [twoNodes.pods[1] as FleetAnswer<PodList>], conditions: [conditions('b', true, NOT_READY)] }, seen, 9000, BOUND);
    const a = row(cut, 'a');
    assert.equal(a?.reachable, false);
    assert.equal(a?.ready, 'Unknown');
    assert.equal(a?.lastSeen, 1000);
    assert.deepEqual(a?.pods.map((p) => p.name), ['web', 'dns']);
    assert.match(a?.message ?? '', /no answer from the node within 2000 ms/);
    const back = fleetNodes(twoNodes, cut, 12_000, BOUND);
    assert.deepEqual(summary(row(back, 'a'))?.ready, 'True');
    assert.equal(row(back, 'a')?.lastSeen, 12_000);
    assert.deepEqual(back.map((n) => n.name), ['a', 'b'], 'sorted by name');
  });
});

/** FleetReads answered from a table of nodes, each asked by name; a node in `cut` is not linked and answers nothing; `failWith` fails every read. */
class FakeFleetReads extends FleetReads {
  readonly boundMs = BOUND;
  readonly cut = new Set<string>();
  failWith: Error | undefined;
  /** The reads, in order: `linked`, `infos <node>`, ... */
  readonly calls: string[] = [];
  constructor(private readonly answers: FleetAnswers) {
    super();
  }
  private answer<T>(call: string, list: readonly T[], keep: (t: T) => boolean): Promise<T[]> {
    this.calls.push(call);
    if (this.failWith) return Promise.reject(this.failWith);
    return Promise.resolve(list.filter(keep));
  }
  linkedNodes(): Promise<string[]> {
    return this.answer('linked', this.answers.linked, (n) => !this.cut.has(n));
  }
  serviceInfos(node: string): Promise<ServiceInfo[]> {
    return this.answer(`infos ${node}`, this.answers.infos, (i) => i.node === node && !this.cut.has(node));
  }
  podLists(node: string): Promise<FleetAnswer<PodList>[]> {
    return this.answer(`pods ${node}`, this.answers.pods, (a) => a.sender?.split('@')[1]?.split('#')[0] === node && !this.cut.has(node));
  }
  nodeConditions(node: string): Promise<NodeConditionsMessage[]> {
    return this.answer(`conditions ${node}`, this.answers.conditions, (c) => c.node === node && !this.cut.has(node));
  }
}

describe('ConsoleFleet (GET /console/fleet/nodes)', () => {
  it('says how to turn the page on when FLEET_NATS_URL is unset', async () => {
    assert.deepEqual(await new ConsoleFleet(undefined, new FakeClock()).view(), { enabled: false, message: FLEET_OFF });
    assert.match(FLEET_OFF, /FLEET_NATS_URL/);
    assert.match(FLEET_OFF, /FLEET_NATS_PASSWORD_FILE/);
  });

  it('a node cut off turns Unknown at the next refresh and comes back at the one after its link returns', async () => {
    const reads = new FakeFleetReads(twoNodes);
    const clock = new FakeClock(0);
    const fleet = new ConsoleFleet(reads, clock);
    const ready = async () => {
      const v = await fleet.view();
      assert.ok(v.enabled);
      return v.nodes.map((n) => `${n.name}:${n.ready}${n.reachable ? '' : ' (unreachable)'}`);
    };
    assert.deepEqual(await ready(), ['a:True', 'b:False']);
    reads.cut.add('a');
    await clock.step(3000);
    assert.deepEqual(await ready(), ['a:Unknown (unreachable)', 'b:False']);
    reads.cut.delete('a');
    await clock.step(3000);
    assert.deepEqual(await ready(), ['a:True', 'b:False']);
  });

  it('the hub itself cannot be asked: every node known is unreachable, and the page is told why', async () => {
    const reads = new FakeFleetReads(twoNodes);
    const fleet = new ConsoleFleet(reads, new FakeClock(0));
    await fleet.view();
    reads.failWith = new Error('not connected to the hub (yet)');
    const v = await fleet.view();
    assert.ok(v.enabled);
    assert.match(v.error ?? '', /reading the fleet from the hub: not connected to the hub/);
    assert.deepEqual(v.nodes.map((n) => `${n.name}:${n.ready}:${n.reachable}`), ['a:Unknown:false', 'b:Unknown:false']);
  });

  it('asks each linked node by name, and only those: a cut node is not asked', async () => {
    const reads = new FakeFleetReads(twoNodes);
    reads.cut.add('b');
    await new ConsoleFleet(reads, new FakeClock(0)).view();
    assert.deepEqual(reads.calls.sort(), ['conditions a', 'infos a', 'linked', 'pods a']);
  });

  it('pages asking at once share one refresh', async () => {
    const reads = new FakeFleetReads(twoNodes);
    const fleet = new ConsoleFleet(reads, new FakeClock(0));
    const [x, y] = await Promise.all([fleet.view(), fleet.view()]);
    assert.equal(reads.calls.filter((c) => c === 'linked').length, 1);
    assert.deepEqual(x, y);
    await fleet.view();
    assert.equal(reads.calls.filter((c) => c === 'linked').length, 2, 'the next refresh reads again');
  });
});

// The fake is a FleetReads (checked at compile time).
void (new FakeFleetReads(twoNodes) satisfies FleetReads);

describe('nodesOfLeafz: the nodes of the hub\'s leaf links', () => {
  const leafz = (...leafs: string[][]) => ({ server: { name: 'ks-hub-0' }, data: { leafs: leafs.map((subs, i) => ({ name: `leaf-${i}`, subscriptions_list: subs })) } });
  const cases: { name: string; answers: unknown[]; want: string[] }[] = [
    { name: 'each hub server answers for its own leafs; the node is in the subjects the fabric lets cross', answers: [leafz(['kubelet.node-a.service.console.info', '$JS.node-a.API.INFO']), leafz(['$JS.node-b.API.>']), leafz()], want: ['node-a', 'node-b'] },
    { name: 'a node token is the node name with its dots as underscores', answers: [leafz(['kubelet.n1_example_com.service.pleg.info'])], want: ['n1.example.com'] },
    { name: 'a leaf with no subscriptions yet, and an answer that is not LEAFZ, name no node', answers: [leafz([], ['$LDS.x']), { error: 'x' }], want: [] },
  ];
  for (const tc of cases) it(tc.name, () => assert.deepEqual(nodesOfLeafz(tc.answers), tc.want));
});
