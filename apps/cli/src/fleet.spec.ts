import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { Pod, PodList } from '@app/contracts';
import { buildFleetTopology, findFleetPods, fleetNodes, leafLinksOf, mergeFleetPods, printFleetTopology, selectFleetPods, serviceInfosOf } from './fleet.js';
import { info, leafz, onNode } from './testing.js';

const list = (...items: Pod[]): PodList => ({ apiVersion: 'v1', kind: 'PodList', metadata: {}, items });

describe('get pods --fleet: the status managers\' answers merged', () => {
  const cases: { name: string; replies: unknown[]; pods: string[]; answered: number; nodes: string[]; errors: string[] }[] = [
    { name: 'no answer', replies: [], pods: [], answered: 0, nodes: [], errors: [] },
    {
      name: 'two nodes, sorted by node then namespace and name',
      replies: [list(onNode('node-b', 'web', 'u3'), onNode('node-b', 'api', 'u2', 'kube-system')), list(onNode('node-a', 'db', 'u1'))],
      pods: ['node-a default/db', 'node-b default/web', 'node-b kube-system/api'],
      answered: 2,
      nodes: ['node-a', 'node-b'],
      errors: [],
    },
    { name: 'a pod two replies carry is listed once', replies: [list(onNode('node-a', 'db', 'u1')), list(onNode('node-a', 'db', 'u1'))], pods: ['node-a default/db'], answered: 2, nodes: ['node-a'], errors: [] },
    { name: 'a node with no pods answers, and names no node', replies: [list(), list(onNode('node-a', 'db', 'u1'))], pods: ['node-a default/db'], answered: 2, nodes: ['node-a'], errors: [] },
    {
      name: 'an error reply and a foreign reply are counted apart',
      replies: [{ error: { code: 'Unavailable', description: 'not leading' } }, { hello: 1 }, list(onNode('node-a', 'db', 'u1'))],
      pods: ['node-a default/db'],
      answered: 1,
      nodes: ['node-a'],
      errors: ['Unavailable: not leading', 'a reply that is no PodList'],
    },
  ];
  for (const tc of cases) {
    it(tc.name, () => {
      const m = mergeFleetPods(tc.replies);
      assert.deepEqual(m.pods.map((p) => `${p.node} ${p.pod.metadata.namespace}/${p.pod.metadata.name}`), tc.pods);
      assert.equal(m.answered, tc.answered);
      assert.deepEqual(m.nodes, tc.nodes);
      assert.deepEqual(m.errors, tc.errors);
    });
  }

  it('finds a pod by UID or by namespace and name; selects by namespace, all of them, or one name', () => {
    const { pods } = mergeFleetPods([list(onNode('node-a', 'db', 'u1'), onNode('node-b', 'web', 'u2'), onNode('node-b', 'dns', 'u3', 'kube-system'))]);
    assert.deepEqual(findFleetPods(pods, { uid: 'u2' }).map((p) => p.node), ['node-b']);
    assert.deepEqual(findFleetPods(pods, { namespace: 'kube-system', name: 'dns' }).map((p) => p.node), ['node-b']);
    assert.deepEqual(findFleetPods(pods, { namespace: 'default', name: 'dns' }), []);
    assert.deepEqual(selectFleetPods(pods, { namespace: 'default', allNamespaces: false }).map((p) => p.pod.metadata.name), ['db', 'web']);
    assert.deepEqual(selectFleetPods(pods, { namespace: 'default', allNamespaces: true }).map((p) => p.pod.metadata.name), ['db', 'web', 'dns']);
    assert.deepEqual(selectFleetPods(pods, { namespace: 'default', allNamespaces: false, name: 'web' }).map((p) => p.node), ['node-b']);
  });

  it('the nodes: those whose services answer and those the pods name, once each', () => {
    const infos = serviceInfosOf([info('node-b', 'pleg'), info('node-b', 'status-manager'), { error: { code: 'x', description: 'y' } }, info('node-c', 'pleg')]);
    assert.equal(infos.length, 3);
    assert.deepEqual(fleetNodes(infos, mergeFleetPods([list(onNode('node-a', 'db', 'u1'))])), ['node-a', 'node-b', 'node-c']);
  });
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
