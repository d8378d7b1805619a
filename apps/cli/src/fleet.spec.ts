import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { Pod, PodList } from '@app/contracts';
import { buildFleetTopology, findFleetPods, fleetNodesOf, leafLinksOf, mergeFleetPods, printFleetTopology, selectFleetPods, serviceInfosOf, type NodeReplies } from './fleet.js';
import { info, leafz, onNode } from './testing.js';

const list = (...items: Pod[]): PodList => ({ apiVersion: 'v1', kind: 'PodList', metadata: {}, items });

describe('get pods --fleet: the status managers\' answers merged', () => {
  const cases: { name: string; replies: NodeReplies[]; pods: string[]; answered: string[]; silent: string[]; errors: string[] }[] = [
    { name: 'no node asked', replies: [], pods: [], answered: [], silent: [], errors: [] },
    {
      name: 'two nodes, sorted by node then namespace and name',
      replies: [
        { node: 'node-b', replies: [list(onNode('node-b', 'web', 'u3'), onNode('node-b', 'api', 'u2', 'kube-system'))] },
        { node: 'node-a', replies: [list(onNode('node-a', 'db', 'u1'))] },
      ],
      pods: ['node-a default/db', 'node-b default/web', 'node-b kube-system/api'],
      answered: ['node-a', 'node-b'],
      silent: [],
      errors: [],
    },
    {
      name: 'a pod two replies carry (two replicas answered) is listed once',
      replies: [{ node: 'node-a', replies: [list(onNode('node-a', 'db', 'u1')), list(onNode('node-a', 'db', 'u1'))] }],
      pods: ['node-a default/db'],
      answered: ['node-a'],
      silent: [],
      errors: [],
    },
    {
      name: 'a node with no pods answered; a node that did not is silent',
      replies: [{ node: 'node-a', replies: [list()] }, { node: 'node-b', replies: [] }],
      pods: [],
      answered: ['node-a'],
      silent: ['node-b'],
      errors: [],
    },
    {
      name: 'a pod without spec.nodeName is on the node asked',
      replies: [{ node: 'node-a', replies: [list({ ...onNode('', 'db', 'u1') })] }],
      pods: ['node-a default/db'],
      answered: ['node-a'],
      silent: [],
      errors: [],
    },
    {
      name: 'an error reply and a foreign reply are said, by node',
      replies: [{ node: 'node-a', replies: [{ error: { code: 'Unavailable', description: 'not leading' } }, { hello: 1 }] }, { node: 'node-b', replies: [list(onNode('node-b', 'db', 'u1'))] }],
      pods: ['node-b default/db'],
      answered: ['node-b'],
      silent: ['node-a'],
      errors: ['node node-a: Unavailable: not leading', 'node node-a: a reply that is no PodList'],
    },
  ];
  for (const tc of cases) {
    it(tc.name, () => {
      const m = mergeFleetPods(tc.replies);
      assert.deepEqual(m.pods.map((p) => `${p.node} ${p.pod.metadata.namespace}/${p.pod.metadata.name}`), tc.pods);
      assert.deepEqual(m.answered, tc.answered);
      assert.deepEqual(m.silent, tc.silent);
      assert.deepEqual(m.errors, tc.errors);
    });
  }

  it('finds a pod by UID or by namespace and name; selects by namespace, all of them, or one name', () => {
    const { pods } = mergeFleetPods([{ node: 'node-a', replies: [list(onNode('node-a', 'db', 'u1'), onNode('node-b', 'web', 'u2'), onNode('node-b', 'dns', 'u3', 'kube-system'))] }]);
    assert.deepEqual(findFleetPods(pods, { uid: 'u2' }).map((p) => p.node), ['node-b']);
    assert.deepEqual(findFleetPods(pods, { namespace: 'kube-system', name: 'dns' }).map((p) => p.node), ['node-b']);
    assert.deepEqual(findFleetPods(pods, { namespace: 'default', name: 'dns' }), []);
    assert.deepEqual(selectFleetPods(pods, { namespace: 'default', allNamespaces: false }).map((p) => p.pod.metadata.name), ['db', 'web']);
    assert.deepEqual(selectFleetPods(pods, { namespace: 'default', allNamespaces: true }).map((p) => p.pod.metadata.name), ['db', 'web', 'dns']);
    assert.deepEqual(selectFleetPods(pods, { namespace: 'default', allNamespaces: false, name: 'web' }).map((p) => p.node), ['node-b']);
  });

  it('the ServiceInfo replies among others', () => {
    const infos = serviceInfosOf([info('node-b', 'pleg'), { error: { code: 'x', description: 'y' } }, { type: 'kubelet.v1.other' }, info('node-c', 'pleg')]);
    assert.deepEqual(infos.map((i) => i.node), ['node-b', 'node-c']);
  });
});

describe('the nodes to ask', () => {
  const cases: { name: string; leafz: unknown[]; named?: string[]; want: string[] }[] = [
    { name: 'none: no hub server answered', leafz: [], want: [] },
    { name: 'one per leaf link\'s JetStream domain, sorted', leafz: [leafz('h0', [{ name: 'lb', domain: 'node-b' }]), leafz('h1', [{ name: 'la', domain: 'node-a' }])], want: ['node-a', 'node-b'] },
    { name: 'a node linked to two hub servers, once', leafz: [leafz('h0', [{ name: 'la', domain: 'node-a' }]), leafz('h1', [{ name: 'la', domain: 'node-a' }])], want: ['node-a'] },
    { name: 'a leaf without JetStream is no node to ask', leafz: [leafz('h0', [{ name: 'lx' }])], want: [] },
    { name: 'a domain is a node token: the node name has its dots back', leafz: [leafz('h0', [{ name: 'l', domain: 'n1_example_com' }])], want: ['n1.example.com'] },
    { name: 'and the nodes --node names, once', leafz: [leafz('h0', [{ name: 'la', domain: 'node-a' }])], named: ['node-a', 'node-z'], want: ['node-a', 'node-z'] },
  ];
  for (const tc of cases) it(tc.name, () => assert.deepEqual(fleetNodesOf(tc.leafz, tc.named), tc.want));
});

describe('topology --fleet', () => {
  it('a leaf link belongs to the node whose JetStream domain its interest carries', () => {
    const { hubServers, leafs } = leafLinksOf([leafz('ks-hub-1', []), leafz('ks-hub-0', [{ name: 'ks-leaf-node-a', domain: 'node-a' }]), { not: 'leafz' }]);
    assert.deepEqual(hubServers, ['ks-hub-0', 'ks-hub-1']);
    assert.deepEqual(leafs.map((l) => [l.hubServer, l.name, l.domain, l.ip, l.port, l.rtt, l.inMsgs, l.outMsgs]), [['ks-hub-0', 'ks-leaf-node-a', 'node-a', '127.0.0.1', 40000, '410µs', 3, 5]]);
  });

  it('a node with dots in its name: its domain is its node token', () => {
    const t = buildFleetTopology([info('n1.example', 'pleg')], [leafz('ks-hub-0', [{ name: 'leaf', domain: 'n1_example' }])]);
    assert.deepEqual(t.nodes.map((n) => [n.node, n.domain, n.leafLinks]), [['n1.example', 'n1_example', ['ks-hub-0']]]);
    assert.deepEqual(t.notes, []);
  });

  const cases: { name: string; infos: unknown[]; leafz: unknown[]; notes: RegExp[] }[] = [
    { name: 'every node with its link: nothing to say', infos: [info('node-a', 'pleg'), info('node-b', 'pleg')], leafz: [leafz('h0', [{ name: 'la', domain: 'node-a' }]), leafz('h1', [{ name: 'lb', domain: 'node-b' }])], notes: [] },
    {
      name: 'services answer, no leaf link with the node\'s domain',
      infos: [info('node-a', 'pleg'), info('node-b', 'pleg')],
      leafz: [leafz('h0', [{ name: 'la', domain: 'node-a' }])],
      notes: [/^node node-b: its services answer, but no hub server lists a leaf link with its JetStream domain "node-b"$/],
    },
    {
      name: 'a leaf link behind which no service answers',
      infos: [info('node-a', 'pleg')],
      leafz: [leafz('h0', [{ name: 'la', domain: 'node-a' }, { name: 'lc', domain: 'node-c' }])],
      notes: [/^leaf link lc on h0 \(JetStream domain "node-c"\): no service of its node answered$/],
    },
    { name: 'a leaf with no JetStream domain', infos: [], leafz: [leafz('h0', [{ name: 'lx' }])], notes: [/^leaf link lx on h0 \(no JetStream domain\): no service of its node answered$/] },
    {
      name: 'a node linked to two hub servers',
      infos: [info('node-a', 'pleg')],
      leafz: [leafz('h0', [{ name: 'la', domain: 'node-a' }]), leafz('h1', [{ name: 'la', domain: 'node-a' }])],
      notes: [/^node node-a: 2 leaf links \(h0, h1\)$/],
    },
  ];
  for (const tc of cases) {
    it(tc.name, () => {
      const { notes } = buildFleetTopology(tc.infos, tc.leafz);
      assert.equal(notes.length, tc.notes.length, notes.join('\n'));
      tc.notes.forEach((re, i) => assert.match(notes[i] ?? '', re));
    });
  }

  it('the table: a row per service instance, a row per leaf link, then the summary and the notes', () => {
    const t = buildFleetTopology(
      [info('node-b', 'status-manager', { leadership: { role: 'leader', identity: 'i0', since: '2026-12-02T00:00:00Z' } }), info('node-a', 'pleg'), info('node-b', 'pleg', { instance: 'i1', version: '' })],
      [leafz('ks-hub-0', [{ name: 'ks-leaf-node-a', domain: 'node-a' }]), leafz('ks-hub-2', [])],
    );
    assert.equal(
      printFleetTopology(t),
      [
        'NODE     DOMAIN   SERVICE          INSTANCE   VERSION   ROLE     LEAF LINK',
        'node-a   node-a   pleg             i0         0.30.0    -        ks-hub-0',
        'node-b   node-b   pleg             i1         -         -        <none>',
        'node-b   node-b   status-manager   i0         0.30.0    leader   <none>',
        '',
        'HUB SERVER   LEAF             NODE     ACCOUNT   ADDRESS           RTT     IN MSGS   OUT MSGS',
        'ks-hub-0     ks-leaf-node-a   node-a   KUBELET   127.0.0.1:40000   410µs   3         5',
        '',
        '2 nodes, 1 leaf link, 2 hub servers answered (ks-hub-0, ks-hub-2)',
        'node node-b: its services answer, but no hub server lists a leaf link with its JetStream domain "node-b"',
        '',
      ].join('\n'),
    );
  });
});
