import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { Subjects, SubjectTokenError, nodeFromToken, nodeToken, resolvePattern, shardOf, subjectMatches } from './subjects.js';

const NODE = 'node-a';
const UID = '3f2c7a9e-1b2d-4c5e-8f90-0a1b2c3d4e5f';

describe('Subjects: every builder lands in its own wildcard and parses back', () => {
  const cases = [
    { name: 'podUpdate add', subject: Subjects.podUpdate.build(NODE, 'add'), wildcard: Subjects.podUpdate.wildcard(NODE), parsed: Subjects.podUpdate.parse(Subjects.podUpdate.build(NODE, 'add')), want: { node: NODE, op: 'add' } },
    { name: 'podUpdate delete', subject: Subjects.podUpdate.build(NODE, 'delete'), wildcard: Subjects.podUpdate.wildcard(NODE), parsed: Subjects.podUpdate.parse(Subjects.podUpdate.build(NODE, 'delete')), want: { node: NODE, op: 'delete' } },
    { name: 'sourcesReady', subject: Subjects.sourcesReady.build(NODE), wildcard: Subjects.sourcesReady.wildcard(NODE), parsed: Subjects.sourcesReady.parse(Subjects.sourcesReady.build(NODE)), want: { node: NODE } },
    { name: 'pleg', subject: Subjects.pleg.build(NODE, UID), wildcard: Subjects.pleg.wildcard(NODE), parsed: Subjects.pleg.parse(Subjects.pleg.build(NODE, UID)), want: { node: NODE, uid: UID } },
    { name: 'plegInspect', subject: Subjects.plegInspect.build(NODE, UID), wildcard: Subjects.plegInspect.wildcard(NODE), parsed: Subjects.plegInspect.parse(Subjects.plegInspect.build(NODE, UID)), want: { node: NODE, uid: UID } },
    { name: 'probeResult liveness', subject: Subjects.probeResult.build(NODE, 'liveness', UID), wildcard: Subjects.probeResult.wildcard(NODE), parsed: Subjects.probeResult.parse(Subjects.probeResult.build(NODE, 'liveness', UID)), want: { node: NODE, probeType: 'liveness', uid: UID } },
    { name: 'probeResult readiness, typed wildcard', subject: Subjects.probeResult.build(NODE, 'readiness', UID), wildcard: Subjects.probeResult.wildcard(NODE, 'readiness'), parsed: Subjects.probeResult.parse(Subjects.probeResult.build(NODE, 'readiness', UID)), want: { node: NODE, probeType: 'readiness', uid: UID } },
    { name: 'work shard 7', subject: Subjects.work.build(NODE, 7, UID), wildcard: Subjects.work.wildcard(NODE, 7), parsed: Subjects.work.parse(Subjects.work.build(NODE, 7, UID)), want: { node: NODE, shard: 7, uid: UID } },
    { name: 'workDone', subject: Subjects.workDone.build(NODE, UID), wildcard: Subjects.workDone.wildcard(NODE), parsed: Subjects.workDone.parse(Subjects.workDone.build(NODE, UID)), want: { node: NODE, uid: UID } },
    { name: 'status TerminatePod', subject: Subjects.status.build(NODE, 'TerminatePod', UID), wildcard: Subjects.status.wildcard(NODE), parsed: Subjects.status.parse(Subjects.status.build(NODE, 'TerminatePod', UID)), want: { node: NODE, verb: 'TerminatePod', uid: UID } },
    { name: 'prober AddPod', subject: Subjects.prober.build(NODE, 'AddPod'), wildcard: Subjects.prober.wildcard(NODE), parsed: Subjects.prober.parse(Subjects.prober.build(NODE, 'AddPod')), want: { node: NODE, verb: 'AddPod' } },
    { name: 'events', subject: Subjects.events.build(NODE, UID), wildcard: Subjects.events.wildcard(NODE), parsed: Subjects.events.parse(Subjects.events.build(NODE, UID)), want: { node: NODE, uid: UID } },
    { name: 'criRuntime', subject: Subjects.criRuntime.build(NODE, 'RunPodSandbox'), wildcard: Subjects.criRuntime.wildcard(NODE), parsed: Subjects.criRuntime.parse(Subjects.criRuntime.build(NODE, 'RunPodSandbox')), want: { node: NODE, method: 'RunPodSandbox' } },
    { name: 'criImage', subject: Subjects.criImage.build(NODE, 'PullImage'), wildcard: Subjects.criImage.wildcard(NODE), parsed: Subjects.criImage.parse(Subjects.criImage.build(NODE, 'PullImage')), want: { node: NODE, method: 'PullImage' } },
    { name: 'criEvents', subject: Subjects.criEvents.build(NODE), wildcard: Subjects.criEvents.wildcard(NODE), parsed: Subjects.criEvents.parse(Subjects.criEvents.build(NODE)), want: { node: NODE } },
    { name: 'serviceInfo', subject: Subjects.serviceInfo.build(NODE, 'pleg'), wildcard: Subjects.serviceInfo.wildcard(NODE), parsed: Subjects.serviceInfo.parse(Subjects.serviceInfo.build(NODE, 'pleg')), want: { node: NODE, service: 'pleg' } },
    { name: 'criEventsStatus', subject: Subjects.criEventsStatus.build(NODE), wildcard: Subjects.criEventsStatus.wildcard(NODE), parsed: Subjects.criEventsStatus.parse(Subjects.criEventsStatus.build(NODE)), want: { node: NODE } },
    { name: 'apiObject', subject: Subjects.apiObject.build(NODE), wildcard: Subjects.apiObject.wildcard(NODE), parsed: Subjects.apiObject.parse(Subjects.apiObject.build(NODE)), want: { node: NODE } },
    { name: 'serviceAccountToken', subject: Subjects.serviceAccountToken.build(NODE), wildcard: Subjects.serviceAccountToken.wildcard(NODE), parsed: Subjects.serviceAccountToken.parse(Subjects.serviceAccountToken.build(NODE)), want: { node: NODE } },
    { name: 'serviceList', subject: Subjects.serviceList.build(NODE), wildcard: Subjects.serviceList.wildcard(NODE), parsed: Subjects.serviceList.parse(Subjects.serviceList.build(NODE)), want: { node: NODE } },
    { name: 'trace', subject: Subjects.trace.build(NODE, 'pleg', UID), wildcard: Subjects.trace.wildcard(NODE), parsed: Subjects.trace.parse(Subjects.trace.build(NODE, 'pleg', UID)), want: { node: NODE, service: 'pleg', uid: UID } },
    { name: 'trace, one pod on any node', subject: Subjects.trace.build('node-b', 'prober', UID), wildcard: Subjects.trace.forPod(UID), parsed: Subjects.trace.parse(Subjects.trace.build('node-b', 'prober', UID)), want: { node: 'node-b', service: 'prober', uid: UID } },
    { name: "trace, one service's grant", subject: Subjects.trace.build(NODE, 'prober', UID), wildcard: Subjects.trace.ofService(NODE, 'prober'), parsed: Subjects.trace.parse(Subjects.trace.build(NODE, 'prober', UID)), want: { node: NODE, service: 'prober', uid: UID } },
  ];
  for (const tc of cases) {
    it(tc.name, () => {
      assert.ok(subjectMatches(tc.wildcard, tc.subject), `${tc.subject} should match ${tc.wildcard}`);
      assert.deepEqual(tc.parsed, tc.want);
    });
  }
});

describe('Subjects: families do not catch each other', () => {
  const cases = [
    { name: 'work shard wildcard does not catch work.done', wildcard: Subjects.work.wildcard(NODE, 0), subject: Subjects.workDone.build(NODE, UID) },
    { name: 'one shard does not catch another', wildcard: Subjects.work.wildcard(NODE, 1), subject: Subjects.work.build(NODE, 2, UID) },
    { name: 'plegCh does not catch the PLEG\'s inspection requests', wildcard: Subjects.pleg.wildcard(NODE), subject: Subjects.plegInspect.build(NODE, UID) },
    { name: 'the inspection requests do not catch plegCh', wildcard: Subjects.plegInspect.wildcard(NODE), subject: Subjects.pleg.build(NODE, UID) },
    { name: 'another node is not ours', wildcard: Subjects.pleg.wildcard(NODE), subject: Subjects.pleg.build('node-b', UID) },
    { name: 'readiness wildcard does not catch liveness', wildcard: Subjects.probeResult.wildcard(NODE, 'readiness'), subject: Subjects.probeResult.build(NODE, 'liveness', UID) },
    { name: 'runtime wildcard does not catch image calls', wildcard: Subjects.criRuntime.wildcard(NODE), subject: Subjects.criImage.build(NODE, 'ListImages') },
    { name: 'the objects do not catch the tokens', wildcard: Subjects.apiObject.wildcard(NODE), subject: Subjects.serviceAccountToken.build(NODE) },
    { name: 'the tokens do not catch the service list', wildcard: Subjects.serviceAccountToken.wildcard(NODE), subject: Subjects.serviceList.build(NODE) },
    { name: "the relay's state is not status-manager's events command", wildcard: Subjects.criEventsStatus.wildcard(NODE), subject: Subjects.serviceCommand.build(NODE, 'status-manager', 'events') },
    { name: "the relay's state is not the relayed events", wildcard: Subjects.criEventsStatus.wildcard(NODE), subject: Subjects.criEvents.build(NODE) },
    { name: "one pod's records are not another's", wildcard: Subjects.trace.forPod(UID), subject: Subjects.trace.build(NODE, 'pleg', 'other-uid') },
    { name: "a node's records are not another node's", wildcard: Subjects.trace.wildcard(NODE), subject: Subjects.trace.build('node-b', 'pleg', UID) },
    { name: "a service's grant does not cover another service's records", wildcard: Subjects.trace.ofService(NODE, 'prober'), subject: Subjects.trace.build(NODE, 'pod-worker', UID) },
    { name: "a service's grant does not cover its records on another node", wildcard: Subjects.trace.ofService(NODE, 'prober'), subject: Subjects.trace.build('node-b', 'prober', UID) },
  ];
  for (const tc of cases) {
    it(tc.name, () => assert.equal(subjectMatches(tc.wildcard, tc.subject), false));
  }

  it('parse refuses subjects of another family', () => {
    assert.equal(Subjects.work.parse(Subjects.workDone.build(NODE, UID)), undefined);
    assert.equal(Subjects.podUpdate.parse(Subjects.sourcesReady.build(NODE)), undefined);
    assert.equal(Subjects.status.parse(`kubelet.${NODE}.status.Bogus.${UID}`), undefined);
    assert.equal(Subjects.pleg.parse(`cri.${NODE}.pleg.${UID}`), undefined);
    assert.equal(Subjects.pleg.parse(Subjects.plegInspect.build(NODE, UID)), undefined);
    assert.equal(Subjects.plegInspect.parse(Subjects.pleg.build(NODE, UID)), undefined);
  });

  const malformed = [
    { name: 'apiObject: another command of config-source', parsed: Subjects.apiObject.parse(Subjects.serviceAccountToken.build(NODE)) },
    { name: 'apiObject: the command of another service', parsed: Subjects.apiObject.parse(`kubelet.${NODE}.service.pleg.object`) },
    { name: 'apiObject: a token too many', parsed: Subjects.apiObject.parse(`${Subjects.apiObject.build(NODE)}.x`) },
    { name: 'serviceAccountToken: the service info', parsed: Subjects.serviceAccountToken.parse(Subjects.serviceInfo.build(NODE, 'config-source')) },
    { name: 'serviceList: under cri.', parsed: Subjects.serviceList.parse(`cri.${NODE}.service.config-source.services`) },
    { name: "criEventsStatus: status-manager's events command", parsed: Subjects.criEventsStatus.parse(Subjects.serviceCommand.build(NODE, 'status-manager', 'events')) },
    { name: 'criEventsStatus: the relayed events', parsed: Subjects.criEventsStatus.parse(Subjects.criEvents.build(NODE)) },
    { name: 'trace: a token short (the unnamed subject before issue 28)', parsed: Subjects.trace.parse(`trace.${NODE}.${UID}`) },
    { name: 'trace: a token too many', parsed: Subjects.trace.parse(`trace.${NODE}.pleg.${UID}.x`) },
    { name: 'trace: not a trace subject', parsed: Subjects.trace.parse(Subjects.events.build(NODE, UID)) },
  ];
  for (const tc of malformed) it(`parse refuses ${tc.name}`, () => assert.equal(tc.parsed, undefined));
});

describe('subject tokens', () => {
  it('a dotted node name becomes one token and comes back', () => {
    const node = 'ip-10-0-0-1.ec2.internal';
    const subject = Subjects.pleg.build(node, UID);
    assert.equal(subject.split('.').length, 4);
    assert.equal(nodeFromToken(nodeToken(node)), node);
    assert.deepEqual(Subjects.pleg.parse(subject), { node, uid: UID });
  });

  const bad = [
    { name: 'empty UID', build: () => Subjects.pleg.build(NODE, '') },
    { name: 'UID with a dot', build: () => Subjects.pleg.build(NODE, 'a.b') },
    { name: 'UID that is a wildcard', build: () => Subjects.events.build(NODE, '*') },
    { name: 'UID with a space', build: () => Subjects.workDone.build(NODE, 'a b') },
    { name: 'negative shard', build: () => Subjects.work.build(NODE, -1, UID) },
    { name: 'fractional shard', build: () => Subjects.work.build(NODE, 1.5, UID) },
    { name: 'CRI method with ">"', build: () => Subjects.criRuntime.build(NODE, '>') },
    { name: 'a trace record of a UID with a dot', build: () => Subjects.trace.build(NODE, 'pleg', 'a.b') },
    { name: "a pod's trace filter that is a wildcard", build: () => Subjects.trace.forPod('>') },
    { name: 'an object request for a node that is a wildcard', build: () => Subjects.apiObject.build('*') },
  ];
  for (const tc of bad) {
    it(`refuses ${tc.name}`, () => assert.throws(tc.build, SubjectTokenError));
  }

  it('decorator patterns resolve to the wildcards', () => {
    assert.equal(resolvePattern(Subjects.pleg.pattern, NODE), Subjects.pleg.wildcard(NODE));
    assert.equal(resolvePattern(Subjects.probeResult.pattern, NODE), Subjects.probeResult.wildcard(NODE));
    assert.equal(resolvePattern(Subjects.serviceInfo.pattern, NODE, 'prober'), Subjects.serviceInfo.build(NODE, 'prober'));
    for (const f of [Subjects.apiObject, Subjects.serviceAccountToken, Subjects.serviceList, Subjects.criEventsStatus]) assert.equal(resolvePattern(f.pattern, NODE), f.build(NODE));
    assert.equal(resolvePattern(Subjects.trace.pattern, NODE), Subjects.trace.wildcard(NODE));
  });
});

describe('shardOf', () => {
  it('is stable and within range', () => {
    assert.equal(shardOf(UID), shardOf(UID));
    for (let i = 0; i < 200; i++) {
      const s = shardOf(`pod-${i}`, 16);
      assert.ok(Number.isInteger(s) && s >= 0 && s < 16);
    }
  });
  it('spreads pods over every shard', () => {
    const seen = new Set<number>();
    for (let i = 0; i < 500; i++) seen.add(shardOf(`uid-${i}`, 16));
    assert.equal(seen.size, 16);
  });
});

describe('subjectMatches', () => {
  const cases = [
    { w: 'a.*.c', s: 'a.b.c', want: true },
    { w: 'a.*', s: 'a.b.c', want: false },
    { w: 'a.>', s: 'a.b.c', want: true },
    { w: 'a.>', s: 'a', want: false },
    { w: 'a.b', s: 'a.b', want: true },
    { w: 'a.b.c', s: 'a.b', want: false },
  ];
  for (const tc of cases) it(`${tc.w} vs ${tc.s}`, () => assert.equal(subjectMatches(tc.w, tc.s), tc.want));
});
