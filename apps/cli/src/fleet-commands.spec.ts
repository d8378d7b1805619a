import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { Pod, PodList } from '@app/contracts';
import { fleetPods, fleetTopology, fleetTrace } from './fleet-commands.js';
import { FakeFleetReader, info, leafz, onNode, traceRecord } from './testing.js';

const UID_A = '11111111-1111-4111-8111-111111111111';
const UID_B = '22222222-2222-4222-8222-222222222222';
const GONE = '33333333-3333-4333-8333-333333333333';
const list = (...items: Pod[]): PodList => ({ apiVersion: 'v1', kind: 'PodList', metadata: {}, items });

/** Two nodes linked to the hub: db on node-a, web on node-b; each node's services answer. */
function twoNodes(): FakeFleetReader {
  const r = new FakeFleetReader();
  r.leafzReplies = [leafz('ks-hub-0', [{ name: 'ks-leaf-node-a', domain: 'node-a' }]), leafz('ks-hub-1', [{ name: 'ks-leaf-node-b', domain: 'node-b' }]), leafz('ks-hub-2', [])];
  r.podReplies.set('node-a', [list(onNode('node-a', 'db', UID_A))]);
  r.podReplies.set('node-b', [list(onNode('node-b', 'web', UID_B))]);
  r.infoReplies.set('node-a', [info('node-a', 'status-manager')]);
  r.infoReplies.set('node-b', [info('node-b', 'status-manager'), info('node-b', 'pleg')]);
  r.records.set(`node-b ${UID_B}`, [traceRecord('node-b', 'pod-worker', UID_B, 1000), traceRecord('node-b', 'status-manager', UID_B, 1002)]);
  r.records.set(`node-a ${GONE}`, [traceRecord('node-a', 'pod-worker', GONE, 500)]);
  return r;
}

describe('trace --fleet', () => {
  it('a pod by name: the nodes behind the leaf links asked, found on the one that runs it, its records read in that node\'s domain only', async () => {
    const r = twoNodes();
    const t = await fleetTrace(r, 'web', 'default');
    assert.equal(t.node, 'node-b');
    assert.equal(t.uid, UID_B);
    assert.deepEqual(t.records.map((x) => x.instance), ['pod-worker@node-b#i0', 'status-manager@node-b#i0']);
    assert.deepEqual(r.asked, ['leafz', 'pods node-a', 'pods node-b', `trace node-b ${UID_B}`]);
  });

  it('a UID a status manager lists: straight to its node', async () => {
    const r = twoNodes();
    assert.equal((await fleetTrace(r, UID_B, 'default')).node, 'node-b');
    assert.deepEqual(r.asked.filter((a) => a.startsWith('trace')), [`trace node-b ${UID_B}`]);
  });

  it('a UID no status manager lists (the pod is gone, its records kept): every node\'s domain in turn', async () => {
    const r = twoNodes();
    const t = await fleetTrace(r, GONE, 'default');
    assert.equal(t.node, 'node-a');
    assert.deepEqual(r.asked.filter((a) => a.startsWith('trace')), [`trace node-a ${GONE}`]);
  });

  const errors: { name: string; arrange: (r: FakeFleetReader) => void; arg: string; want: RegExp }[] = [
    { name: 'no hub server answered LEAFZ', arrange: (r) => (r.leafzReplies = []), arg: 'web', want: /^no hub server answered \$SYS\.REQ\.SERVER\.PING\.LEAFZ at nats:\/\/hub-0:4222 \(is --nats the hub's client URLs/ },
    { name: 'no leaf link on the hub', arrange: (r) => (r.leafzReplies = [leafz('ks-hub-0', [])]), arg: 'web', want: /^no node is linked to the hub at nats:\/\/hub-0:4222: 1 hub server\(s\) answered, none lists a leaf link/ },
    {
      name: 'no status manager answered',
      arrange: (r) => r.podReplies.clear(),
      arg: 'web',
      want: /^no node answered: none of the 2 node\(s\) linked to the hub at nats:\/\/hub-0:4222 \(node-a, node-b\) answered kubelet\.<node>\.service\.status-manager\.pods/,
    },
    { name: 'the pod is on none of the nodes', arrange: () => undefined, arg: 'kube-system/web', want: /^pods "web" not found in namespace "kube-system" on any of the 2 node\(s\) that answered \(node-a, node-b\)$/ },
    {
      name: 'the pod is on none of the nodes that answered, and one did not',
      arrange: (r) => r.podReplies.delete('node-a'),
      arg: 'db',
      want: /^pods "db" not found in namespace "default" on any of the 1 node\(s\) that answered \(node-b\); 1 did not answer \(node-a\)$/,
    },
    { name: 'the pod is found, its node has no records', arrange: (r) => r.records.delete(`node-b ${UID_B}`), arg: 'web', want: new RegExp(`^no trace records for pod ${UID_B} on node node-b \\(TRACING=off`) },
    { name: 'the pod is found, its node\'s domain does not answer', arrange: (r) => r.unreachable.add('node-b'), arg: 'web', want: /^node node-b's JetStream domain "node-b" is unreachable from the hub: no responders$/ },
    {
      name: 'a UID in no domain, one of them unreachable: both said',
      arrange: (r) => r.unreachable.add('node-b'),
      arg: '44444444-4444-4444-8444-444444444444',
      want: /^no trace records for pod 4{8}-.* on any of 2 node\(s\) \(node-a, node-b\) .*\n {2}node node-b's JetStream domain "node-b" is unreachable/,
    },
    {
      name: 'one name on two nodes',
      arrange: (r) => r.podReplies.get('node-a')?.push(list(onNode('node-c', 'web', 'other-uid'))),
      arg: 'web',
      want: /^pods "web" is on 2 nodes \(node-b, node-c\): give its UID$/,
    },
  ];
  for (const tc of errors) {
    it(`error: ${tc.name}`, async () => {
      const r = twoNodes();
      tc.arrange(r);
      await assert.rejects(fleetTrace(r, tc.arg, 'default'), (err: Error) => (assert.match(err.message, tc.want), true));
    });
  }
});

describe('get pods --fleet and topology --fleet', () => {
  it('get pods: both nodes\' pods with their nodes', async () => {
    const m = await fleetPods(twoNodes());
    assert.deepEqual(m.pods.map((p) => [p.node, p.pod.metadata.name]), [['node-a', 'db'], ['node-b', 'web']]);
  });

  it('get pods: a node --node names is asked too', async () => {
    const r = twoNodes();
    r.podReplies.set('node-z', [list(onNode('node-z', 'far', 'u9'))]);
    const m = await fleetPods(r, ['node-z']);
    assert.deepEqual(m.answered, ['node-a', 'node-b', 'node-z']);
  });

  it('get pods: no node answered is an error, not an empty list', async () => {
    const r = twoNodes();
    r.podReplies.clear();
    await assert.rejects(fleetPods(r), /^Error: no node answered: none of the 2 node\(s\)/);
  });

  it('topology: every service of every node asked, and the leaf links', async () => {
    const r = twoNodes();
    const t = await fleetTopology(r);
    assert.deepEqual(t.nodes.map((n) => [n.node, n.services.map((s) => s.service), n.leafLinks]), [['node-a', ['status-manager'], ['ks-hub-0']], ['node-b', ['pleg', 'status-manager'], ['ks-hub-1']]]);
    assert.deepEqual(t.hubServers, ['ks-hub-0', 'ks-hub-1', 'ks-hub-2']);
    assert.deepEqual(r.asked, ['leafz', 'info node-a (10 services)', 'info node-b (10 services)']);
  });

  it('topology: a node linked whose services are silent, and a node named whose services answer without a link, are said', async () => {
    const r = twoNodes();
    r.infoReplies.delete('node-a');
    r.infoReplies.set('node-z', [info('node-z', 'pleg')]);
    const t = await fleetTopology(r, ['node-z']);
    assert.deepEqual(t.notes, [
      'node node-z: its services answer, but no hub server lists a leaf link with its JetStream domain "node-z"',
      'leaf link ks-leaf-node-a on ks-hub-0 (JetStream domain "node-a"): no service of its node answered',
    ]);
  });
});
