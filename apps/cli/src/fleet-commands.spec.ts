import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { Pod, PodList } from '@app/contracts';
import { fleetPods, fleetTopology, fleetTrace } from './fleet-commands.js';
import { FakeFleetReader, info, leafz, onNode, traceRecord } from './testing.js';

const UID_A = '11111111-1111-4111-8111-111111111111';
const UID_B = '22222222-2222-4222-8222-222222222222';
const GONE = '33333333-3333-4333-8333-333333333333';
const list = (...items: Pod[]): PodList => ({ apiVersion: 'v1', kind: 'PodList', metadata: {}, items });

/** Two nodes: db on node-a, web on node-b; each node's services answer. */
function twoNodes(): FakeFleetReader {
  const r = new FakeFleetReader();
  r.podReplies = [list(onNode('node-a', 'db', UID_A)), list(onNode('node-b', 'web', UID_B))];
  r.infoReplies = [info('node-a', 'status-manager'), info('node-b', 'status-manager')];
  r.records.set(`node-b ${UID_B}`, [traceRecord('node-b', 'pod-worker', UID_B, 1000), traceRecord('node-b', 'status-manager', UID_B, 1002)]);
  r.records.set(`node-a ${GONE}`, [traceRecord('node-a', 'pod-worker', GONE, 500)]);
  return r;
}

describe('trace --fleet', () => {
  it('a pod by name: found on the node that runs it, its records read in that node\'s domain only', async () => {
    const r = twoNodes();
    const t = await fleetTrace(r, 'web', 'default');
    assert.equal(t.node, 'node-b');
    assert.equal(t.uid, UID_B);
    assert.deepEqual(t.records.map((x) => x.instance), ['pod-worker@node-b#i0', 'status-manager@node-b#i0']);
    assert.deepEqual(r.asked.filter((a) => a.startsWith('trace')), [`trace node-b ${UID_B}`]);
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
    { name: 'no node answered', arrange: (r) => ((r.podReplies = []), (r.infoReplies = [])), arg: 'web', want: /^no node answered kubelet\.\*\.service\.status-manager\.pods on the hub at nats:\/\/hub-0:4222 \(are the nodes' leaf links up\?/ },
    { name: 'no status manager answered, a name can be found nowhere', arrange: (r) => (r.podReplies = []), arg: 'web', want: /^no node answered kubelet\.\*\.service\.status-manager\.pods/ },
    { name: 'the pod is on none of the nodes', arrange: () => undefined, arg: 'kube-system/web', want: /^pods "web" not found in namespace "kube-system" on any of the 2 node\(s\) that answered \(node-a, node-b\)$/ },
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
      arrange: (r) => r.podReplies.push(list(onNode('node-c', 'web', 'other-uid'))),
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

  it('get pods: no node answered is an error, not an empty list', async () => {
    const r = new FakeFleetReader();
    await assert.rejects(fleetPods(r), /^Error: no node answered kubelet\.\*\.service\.status-manager\.pods/);
  });

  it('topology: the services and the leaf links, asked at once', async () => {
    const r = twoNodes();
    r.leafzReplies = [leafz('ks-hub-0', [{ name: 'ks-leaf-node-a', domain: 'node-a' }]), leafz('ks-hub-1', [{ name: 'ks-leaf-node-b', domain: 'node-b' }])];
    const t = await fleetTopology(r);
    assert.deepEqual(t.nodes.map((n) => [n.node, n.leafLinks]), [['node-a', ['ks-hub-0']], ['node-b', ['ks-hub-1']]]);
    assert.deepEqual(r.asked.sort(), ['info', 'leafz']);
  });

  it('topology: neither services nor hub servers answered is an error', async () => {
    await assert.rejects(fleetTopology(new FakeFleetReader()), /^Error: no node answered kubelet\.\*\.service\.\*\.info/);
  });
});
