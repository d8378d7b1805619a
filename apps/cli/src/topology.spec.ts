import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { SERVICE_NAMES } from '@app/contracts';
import { NATS_ACCESS, buildTopology, classifySubject, covers, designedPublications, parseConnectionName, printTopologyDot, printTopologyMermaid, topologyEdges, type Connz } from '@app/nats';
import { testdata } from './testing.js';
import { printTopologyTable } from './topology.js';

const CONNZ_BEFORE = testdata<Connz>('connz-before.json');
const CONNZ_AFTER = testdata<Connz>('connz-after.json');
const SUBSZ = testdata<{ num_subscriptions: number }>('subsz.json');
const JSZ = testdata<{ streams: number; consumers: number; messages: number; bytes: number }>('jsz.json');

const totals = { subscriptions: SUBSZ.num_subscriptions, streams: JSZ.streams, consumers: JSZ.consumers, messages: JSZ.messages, bytes: JSZ.bytes };

describe('topology: subjects back to their families', () => {
  const cases: { name: string; subject: string; want: string }[] = [
    { name: 'the config ops wildcard (it also catches config.ready)', subject: 'kubelet.n1.config.*', want: 'podUpdate' },
    { name: 'config.ready alone', subject: 'kubelet.n1.config.ready', want: 'sourcesReady' },
    { name: 'one pod-worker shard', subject: 'kubelet.n1.work.3.*', want: 'work' },
    { name: 'work.done is its own family, not a shard', subject: 'kubelet.n1.work.done.*', want: 'workDone' },
    { name: 'probe results', subject: 'kubelet.n1.probe.*.*', want: 'probeResult' },
    { name: 'plegCh', subject: 'kubelet.n1.pleg.*', want: 'pleg' },
    { name: 'the PLEG\'s inspection requests are their own family, not plegCh', subject: 'kubelet.n1.pleg.inspect.*', want: 'plegInspect' },
    { name: 'CRI runtime calls', subject: 'cri.n1.runtime.*', want: 'criRuntime' },
    { name: 'CRI events', subject: 'cri.n1.events', want: 'criEvents' },
    { name: 'the sources snapshot', subject: 'kubelet.n1.sources.snapshot', want: 'sourcesSnapshot' },
    { name: 'a service info', subject: 'kubelet.n1.service.pleg.info', want: 'serviceInfo' },
    { name: 'a service command', subject: 'kubelet.n1.service.pleg.mode', want: 'serviceCommand' },
    { name: 'the apiserver objects pod-worker asks config-source for', subject: 'kubelet.n1.service.config-source.object', want: 'apiObject' },
    { name: 'the service account tokens', subject: 'kubelet.n1.service.config-source.token', want: 'serviceAccountToken' },
    { name: 'the Services of a pod\'s environment', subject: 'kubelet.n1.service.config-source.services', want: 'serviceList' },
    { name: 'the event relay\'s state', subject: 'kubelet.n1.service.cri-gateway.events', want: 'criEventsStatus' },
    { name: 'status-manager\'s events are podEvents (asked by the read port and the console), not the relay\'s state', subject: 'kubelet.n1.service.status-manager.events', want: 'podEvents' },
    { name: "an instance's reply inbox", subject: '_INBOX_pleg.yyZCmDeVt1sr7cmsE4bciF.*', want: 'inbox' },
    { name: 'a subject no family covers', subject: 'kubelet.n1.gossip.*', want: 'UNDOCUMENTED' },
    { name: 'a wider wildcard than any family', subject: 'kubelet.n1.>', want: 'UNDOCUMENTED' },
    { name: 'a status verb that is one token short', subject: 'kubelet.n1.status.*', want: 'UNDOCUMENTED' },
  ];
  for (const tc of cases) it(tc.name, () => assert.equal(classifySubject(tc.subject), tc.want));

  it('covers: a wildcard covers a narrower subscription, not a wider one', () => {
    assert.equal(covers('kubelet.*.config.*', 'kubelet.n1.config.*'), true);
    assert.equal(covers('kubelet.*.config.*', 'kubelet.n1.>'), false);
    assert.equal(covers('kubelet.>', 'kubelet.n1.config.add'), true);
  });

  it('connection names are <service>@<node>#<instance>', () => {
    assert.deepEqual(parseConnectionName('pod-worker@n1.example#2'), { service: 'pod-worker', node: 'n1.example', instance: '2' });
    assert.equal(parseConnectionName('e2e-test'), undefined);
    assert.equal(parseConnectionName(undefined), undefined);
  });
});

describe('topology from recorded /connz samples', () => {
  const t = buildTopology(CONNZ_BEFORE, CONNZ_AFTER, totals);

  it('lists the seven services of the sample (recorded before the status group was split), in the design order, and the other connections apart', () => {
    const recorded = new Set(['kubelet-server', 'node-status', 'console']);
    assert.deepEqual(t.instances.map((i) => i.service), SERVICE_NAMES.filter((s) => !recorded.has(s)));
    assert.deepEqual(t.others.map((o) => o.name), ['e2e-test']);
  });

  it('each service subscribes only to families the design gives it (NATS_ACCESS subscribes and serves)', () => {
    assert.deepEqual(t.undocumented, []);
    for (const i of t.instances) {
      const access = NATS_ACCESS[i.service as (typeof SERVICE_NAMES)[number]];
      const allowed = new Set<string>([...access.subscribes, ...access.serves, 'serviceInfo', 'serviceCommand', 'inbox']);
      for (const s of i.subscribes) assert.ok(allowed.has(s.family), `${i.name} subscribes to ${s.subject} (${s.family})`);
    }
    const families = (service: string) => [...new Set(t.instances.find((i) => i.service === service)?.subscribes.map((s) => s.family))].sort();
    assert.deepEqual(families('sync-loop'), ['inbox', 'pleg', 'podUpdate', 'probeResult', 'serviceInfo', 'workDone']);
    assert.deepEqual(families('cri-gateway'), ['criEventsStatus', 'criImage', 'criRuntime', 'serviceInfo']);
    assert.deepEqual(families('config-source'), ['apiObject', 'serviceAccountToken', 'serviceInfo', 'sourcesSnapshot']);
  });

  it('message counts are the subscription and connection counters; rates come from the two samples', () => {
    const sync = t.instances.find((i) => i.service === 'sync-loop');
    assert.equal(sync?.subscribes.find((s) => s.family === 'podUpdate')?.msgs, 5);
    assert.equal(sync?.inMsgs, 70);
    const before = CONNZ_BEFORE.connections.find((c) => c.cid === sync?.cid);
    const dt = (Date.parse(CONNZ_AFTER.now) - Date.parse(CONNZ_BEFORE.now)) / 1000;
    assert.ok(dt > 0.5 && dt < 2, `samples ${dt}s apart`);
    assert.equal(sync?.outRate, (79 - (before?.out_msgs ?? 0)) / dt);
    assert.equal(t.intervalSeconds, dt);
  });

  it('publishes are derived from the design and marked so', () => {
    const cs = t.instances.find((i) => i.service === 'config-source');
    assert.deepEqual(cs?.publishes.filter((p) => p.how === 'publishes').map((p) => [p.family, p.subject]), [
      ['podUpdate', 'kubelet.stats-e2e.config.*'],
      ['sourcesReady', 'kubelet.stats-e2e.config.ready'],
      ['events', 'kubelet.stats-e2e.events.*'],
    ]);
    assert.ok(cs?.publishes.every((p) => p.derived));
    const pleg = designedPublications('pleg', 'n1');
    assert.ok(pleg.some((p) => p.how === 'requests' && p.family === 'criRuntime' && p.subject === `cri.n1.runtime.* (${p.only?.length} methods)` && p.only?.includes('ListContainers') && !p.only.includes('CreateContainer')), JSON.stringify(pleg));
    assert.deepEqual(designedPublications('e2e-test', 'n1'), []);
  });

  it('an undocumented subscription is flagged, and named in the table', () => {
    const rogue: Connz = structuredClone(CONNZ_AFTER);
    rogue.connections.find((c) => c.name === 'pleg@stats-e2e#0')?.subscriptions_list_detail?.push({ subject: 'kubelet.stats-e2e.gossip.*', sid: '99', msgs: 0 });
    const bad = buildTopology(CONNZ_BEFORE, rogue);
    assert.deepEqual(bad.undocumented, [{ instance: 'pleg@stats-e2e#0', subject: 'kubelet.stats-e2e.gossip.*' }]);
    assert.match(printTopologyTable(bad), /UNDOCUMENTED: pleg@stats-e2e#0 subscribes to kubelet\.stats-e2e\.gossip\.\*/);
  });

  it('the table: connections with counts and rates, then one row per subject', () => {
    const out = printTopologyTable(t);
    assert.match(out, /^SERVICE\s+INSTANCE\s+NODE\s+CID\s+IN MSGS\s+OUT MSGS\s+IN\/S\s+OUT\/S\n/);
    assert.match(out, /\nsync-loop\s+0\s+subscribes\s+podUpdate\s+kubelet\.stats-e2e\.config\.\*\s+5\n/);
    assert.match(out, /\ncri-gateway\s+0\s+subscribes\s+criRuntime\s+cri\.stats-e2e\.runtime\.\* \(queue cri-gateway\)\s+51\n/);
    assert.match(out, /\nconfig-source\s+0\s+publishes\*\s+podUpdate\s+kubelet\.stats-e2e\.config\.\*\s+-\n/);
    assert.match(out, /\* derived from the design's subject table/);
    assert.match(out, /server: 104 subscriptions; JetStream: /);
    assert.doesNotMatch(out, /_INBOX_/, 'reply inboxes are not listed');
  });

  it('edges run from a publisher to the instances subscribed to that family', () => {
    const edges = topologyEdges(t).map((e) => `${e.from} -> ${e.to}: ${e.family}`);
    for (const want of [
      'config-source#0 -> sync-loop#0: podUpdate',
      'sync-loop#0 -> pod-worker#0: work',
      'pod-worker#0 -> sync-loop#0: workDone',
      'pleg#0 -> sync-loop#0: pleg',
      'pod-worker#0 -> status-manager#0: status',
      'pod-worker#0 -> cri-gateway#0: criRuntime',
      'sync-loop#0 -> config-source#0: sourcesSnapshot',
      'cri-gateway#0 -> pleg#0: criEvents',
      'pod-worker#0 -> config-source#0: apiObject',
      'pleg#0 -> cri-gateway#0: criEventsStatus',
    ]) assert.ok(edges.includes(want), `${want} in\n${edges.join('\n')}`);
    // A request of one service to another names its family: no edge to whoever answers some other command.
    assert.deepEqual(edges.filter((e) => e.endsWith(': serviceCommand')), []);
  });

  it('mermaid and dot text', () => {
    const mermaid = printTopologyMermaid(t);
    assert.match(mermaid, /^flowchart LR\n/);
    assert.match(mermaid, /\n {2}config_source_0 -->\|"podUpdate \(5\)"\| sync_loop_0\n/);
    const dot = printTopologyDot(t);
    assert.match(dot, /^digraph topology \{\n/);
    assert.match(dot, /\n {2}"config-source#0" -> "sync-loop#0" \[label="podUpdate \(5\)"\];\n/);
    assert.match(dot, /\}\n$/);
  });
});
