import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { MessageTypes, type Pod } from '@app/contracts';
import { TRACE_RECORD_TYPE, buildTimeline, describeHop, type TraceRecord } from '@app/tracing';
import { looksLikeUid, podRef, printTimeline, timelineJson } from './trace.js';
import { resolvePodUid } from './trace-command.js';

const T = 1_700_000_000_000;
const UID = '6f1c1e3a-1b2c-4d5e-8f90-123456789abc';
const TRACE = '0af7651916cd43dd8448eb211c80319c';

function rec(spanId: string, parentSpanId: string | undefined, at: number, durationMs: number, o: Partial<TraceRecord>): TraceRecord {
  return { type: TRACE_RECORD_TYPE, traceId: TRACE, spanId, ...(parentSpanId ? { parentSpanId } : {}), kind: 'handle', podUid: UID, instance: 'x@n1#a', at: T + at, durationMs, ...o };
}

/** A pod's start, as the stack records it (stored out of order, as several services' batches interleave). */
const records: TraceRecord[] = [
  rec('s5', 's4', 40, 300, { kind: 'cri', instance: 'pod-worker@n1#a', subject: 'cri.n1.runtime.RunPodSandbox', method: 'RunPodSandbox' }),
  rec('s1', undefined, 0, 0, { kind: 'publish', instance: 'config-source@n1#a', subject: 'kubelet.n1.config.add', messageType: MessageTypes.podUpdate, detail: { op: 'add' } }),
  rec('s2', 's1', 2, 5, { instance: 'sync-loop@n1#a', subject: 'kubelet.n1.config.add', from: 'config-source@n1#a', messageType: MessageTypes.podUpdate }),
  rec('s3', 's2', 6, 0, { kind: 'publish', instance: 'sync-loop@n1#a', subject: 'kubelet.n1.work.3.uid' }),
  rec('s4', 's3', 6, 500, { instance: 'pod-worker@n1#a', subject: 'kubelet.n1.work.3.uid' }),
  rec('s6', 's5', 41, 299, { instance: 'cri-gateway@n1#a', subject: 'cri.n1.runtime.RunPodSandbox' }),
  rec('s7', undefined, 400, 0, { kind: 'publish', instance: 'pleg@n1#a', subject: `kubelet.n1.pleg.${UID}`, messageType: MessageTypes.podLifecycleEvent, detail: { eventType: 'ContainerStarted', data: 'c1' } }),
  rec('s8', 's7', 401, 3, { kind: 'kv.put', instance: 'status-manager@n1#a', bucket: 'pod-status', key: `n1.${UID}`, revision: 12, detail: { version: 3 } }),
  rec('s9', undefined, 450, 0, { kind: 'publish', instance: 'prober@n1#a', messageType: MessageTypes.probeResult, detail: { probeType: 'readiness', result: 'Success' } }),
];

describe('trace timeline', () => {
  const t = buildTimeline(UID, records);

  it('orders the hops by start, each after its cause, with offsets from the first', () => {
    assert.deepEqual(t.hops.map((h) => h.spanId), ['s1', 's2', 's3', 's4', 's5', 's6', 's7', 's8', 's9']);
    assert.deepEqual(t.hops.map((h) => h.offsetMs), [0, 2, 6, 6, 40, 41, 400, 401, 450]);
    const seen = new Set<string>();
    for (const h of t.hops) {
      if (h.parentSpanId && t.hops.some((p) => p.spanId === h.parentSpanId)) assert.ok(seen.has(h.parentSpanId), `${h.spanId} after its parent`);
      seen.add(h.spanId);
    }
  });

  it('measures the total from the first start to the last end, and marks the slowest hop', () => {
    assert.equal(t.totalMs, 506);
    assert.equal(t.slowestSpanId, 's4');
    assert.deepEqual(t.traceIds, [TRACE]);
  });

  const cases = [
    { name: 'a CRI call by its method', span: 's5', want: 'CRI RunPodSandbox' },
    { name: 'a PLEG event', span: 's7', want: 'sent PLEG ContainerStarted' },
    { name: 'a status version written', span: 's8', want: `KV put pod-status n1.${UID} @12 status v3` },
    { name: 'a probe result', span: 's9', want: 'sent probe readiness Success' },
    { name: 'a handled message by its type', span: 's2', want: 'handled pod_update' },
  ];
  for (const tc of cases) it(`says what each hop was: ${tc.name}`, () => assert.equal(t.hops.find((h) => h.spanId === tc.span)?.what, tc.want));

  it('a failed CRI call shows its code', () => assert.equal(describeHop(rec('x', undefined, 0, 1, { kind: 'cri', method: 'StartContainer', error: 'Unknown' })), 'CRI StartContainer (Unknown)'));

  it('prints a table with each hop\'s instance and subject, the slowest marked, the total under it', () => {
    const out = printTimeline(t);
    const lines = out.trimEnd().split('\n');
    assert.match(lines[0] ?? '', /^OFFSET\s+DURATION\s+INSTANCE\s+HOP\s+SUBJECT$/);
    assert.equal(lines.length, 1 + 9 + 2);
    const slow = lines.find((l) => l.includes('<- slowest'));
    assert.match(slow ?? '', /^\+6\.0ms\s+500\.0ms\s+pod-worker@n1#a\s+handled\s+kubelet\.n1\.work\.3\.uid\s+<- slowest$/);
    assert.equal(lines.filter((l) => l.includes('<- slowest')).length, 1);
    assert.match(out, /cri-gateway@n1#a\s+handled\s+cri\.n1\.runtime\.RunPodSandbox/);
    assert.match(out, new RegExp(`pod ${UID}: 9 hops in 1 trace, total 506\\.0ms`));
    assert.match(out, /slowest: handled by pod-worker@n1#a, 500\.0ms/);
  });

  it('-o json has the hops with their offsets, the total and the slowest', () => {
    const json = JSON.parse(timelineJson(t)) as { podUid: string; totalMs: number; slowestSpanId: string; hops: { spanId: string; offsetMs: number; method?: string }[] };
    assert.equal(json.podUid, UID);
    assert.equal(json.totalMs, 506);
    assert.equal(json.slowestSpanId, 's4');
    assert.deepEqual(json.hops.find((h) => h.spanId === 's5'), { ...json.hops.find((h) => h.spanId === 's5'), offsetMs: 40, method: 'RunPodSandbox' });
  });

  it('--fleet: the node in the summary line, and node, uid and each hop\'s service in -o json', () => {
    assert.match(printTimeline(t, 'node-b'), new RegExp(`^pod ${UID} on node node-b: 9 hops in 1 trace, total 506\\.0ms$`, 'm'));
    const json = JSON.parse(timelineJson(t, 'node-b')) as { node: string; uid: string; podUid: string; hops: { service: string; instance: string }[] };
    assert.deepEqual([json.node, json.uid, json.podUid], ['node-b', UID, UID]);
    assert.ok(json.hops.every((h) => h.instance.startsWith(`${h.service}@`)), 'each hop\'s service is its instance\'s');
    assert.equal(json.hops.find((h) => h.instance.startsWith('cri-gateway@'))?.service, 'cri-gateway');
    assert.equal((JSON.parse(timelineJson(t)) as { node?: string }).node, undefined, 'no node without --fleet');
  });

  it('no records, no hops', () => assert.deepEqual(buildTimeline(UID, []).hops, []));
});

describe('trace POD argument', () => {
  const pods = () => Promise.resolve({ items: [{ metadata: { name: 'web', namespace: 'default', uid: UID } } as Pod] });
  const cases = [
    { name: 'a UID is taken as it is', arg: UID, ns: 'default', want: UID },
    { name: 'a name in the namespace', arg: 'web', ns: 'default', want: UID },
    { name: 'NAMESPACE/NAME', arg: 'default/web', ns: 'kube-system', want: UID },
    { name: 'pod/NAME', arg: 'pod/web', ns: 'default', want: UID },
  ];
  for (const tc of cases) it(tc.name, async () => assert.equal(await resolvePodUid(tc.arg, tc.ns, pods as never), tc.want));

  it('an unknown pod says so', async () => {
    await assert.rejects(resolvePodUid('nope', 'default', pods), /pods "nope" not found in namespace "default"/);
    await assert.rejects(resolvePodUid('web', 'other', pods), /not found/);
  });

  it('tells a UID from a name', () => {
    assert.equal(looksLikeUid(UID), true);
    assert.equal(looksLikeUid('web'), false);
    assert.deepEqual(podRef('kube-system/etcd', 'default'), { namespace: 'kube-system', name: 'etcd' });
  });
});
