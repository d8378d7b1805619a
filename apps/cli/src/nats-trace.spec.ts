import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { TRACE_RECORD_TYPE, buildTimeline, type TraceRecord } from '@app/tracing';
import { describeDelivery, probeable, joinServerViews, natsTraceProbes, printServerViews, serverTraces, serverView, type ServerView } from './nats-trace.js';
import { testdata } from './testing.js';

const RECORDED_TRACE_EVENTS = testdata<Readonly<Record<string, unknown>>>('nats-trace-events.json');

const UID = '11111111-2222-3333-4444-555555555555';
const TRACE = '0af7651916cd43dd8448eb211c80319c';

function rec(spanId: string, at: number, o: Partial<TraceRecord>): TraceRecord {
  return { type: TRACE_RECORD_TYPE, traceId: TRACE, spanId, kind: 'handle', podUid: UID, instance: 'x@n1#a', at: 1_700_000_000_000 + at, durationMs: 1, ...o };
}

const records: TraceRecord[] = [
  rec('a000000000000001', 0, { kind: 'publish', instance: 'sync-loop@n1#e5f6', subject: `kubelet.n1.work.0.${UID}` }),
  rec('a000000000000002', 1, { kind: 'handle', instance: 'pod-worker@n1#a1b2', from: 'sync-loop@n1#e5f6', subject: `kubelet.n1.work.0.${UID}` }),
  rec('a000000000000003', 2, { kind: 'cri', instance: 'pod-worker@n1#a1b2', subject: 'cri.n1.runtime.RunPodSandbox', method: 'RunPodSandbox' }),
  rec('a000000000000004', 3, { kind: 'kv.put', instance: 'sync-loop@n1#e5f6', bucket: 'pods', key: `n1.${UID}`, revision: 4 }),
  rec('a000000000000005', 4, { kind: 'publish', instance: 'pleg@n1#0001', subject: `kubelet.n1.pleg.${UID}` }),
  rec('a000000000000006', 5, { kind: 'publish', instance: 'prober@n1#0001' }),
  rec('a000000000000007', 6, { kind: 'request', instance: 'pleg@n1#0001', subject: '$JS.API.STREAM.INFO.KV_pod-cache' }),
];

/** The recorded events as the CLI would have them: by the subject each probe asked about. */
function recordedViews(): Map<string, ServerView> {
  const views = new Map<string, ServerView>();
  for (const value of Object.values(RECORDED_TRACE_EVENTS)) {
    const v = serverView(value);
    if (v) views.set(v.subject, v);
  }
  return views;
}

describe('trace --nats-trace', () => {
  describe('which servers trace messages', () => {
    const cases = [
      { name: "Debian's 2.9.10 does not", version: '2.9.10', want: false },
      { name: '2.10.x does not', version: '2.10.24', want: false },
      { name: '2.11.0 does', version: '2.11.0', want: true },
      { name: 'the built 2.14.9 does', version: '2.14.9', want: true },
      { name: 'a prerelease of 2.12 does', version: '2.12.0-RC.1', want: true },
      { name: 'an unknown version does not (nothing is sent)', version: undefined, want: false },
    ];
    for (const tc of cases) it(tc.name, () => assert.equal(serverTraces(tc.version), tc.want));
  });

  describe('which subjects are asked about', () => {
    const cases = [
      { name: 'a pod work subject', subject: `kubelet.n1.work.0.${UID}`, want: true },
      { name: 'a CRI call', subject: 'cri.n1.runtime.RunPodSandbox', want: true },
      { name: 'a KV write (its stream skips a trace-only message)', subject: `$KV.pods.n1.${UID}`, want: true },
      { name: 'a reply inbox', subject: '_INBOX_pod-worker.abc.1', want: false },
      { name: 'the JetStream API, whose handler a trace-only message still reaches', subject: '$JS.API.STREAM.DELETE.KV_pods', want: false },
      { name: 'a JetStream ack', subject: '$JS.ACK.KV_pods.c.1.2.3.4.5', want: false },
      { name: 'the system account', subject: '$SYS.REQ.SERVER.PING', want: false },
    ];
    for (const tc of cases) it(tc.name, () => assert.equal(probeable(tc.subject), tc.want));
  });

  it('asks once per subject the pod went over, with the trace headers of its first hop', () => {
    const probes = natsTraceProbes(buildTimeline(UID, records).hops);
    assert.deepEqual(
      probes.map((p) => [p.subject, p.spanIds]),
      [
        [`kubelet.n1.work.0.${UID}`, ['a000000000000001', 'a000000000000002']],
        ['cri.n1.runtime.RunPodSandbox', ['a000000000000003']],
        [`$KV.pods.n1.${UID}`, ['a000000000000004']],
        [`kubelet.n1.pleg.${UID}`, ['a000000000000005']],
      ],
    );
    assert.deepEqual(probes[0]?.headers, { traceparent: `00-${TRACE}-a000000000000001-01`, 'Kubelet-Pod-UID': UID, 'Kubelet-Sender': 'sync-loop@n1#e5f6' });
  });

  it('reads what nats-server 2.14.9 saw: the connection it came in on and the queue subscriber it would go to', () => {
    const work = recordedViews().get(`kubelet.n1.work.0.${UID}`);
    assert.deepEqual(work, {
      server: 'kubelet-split',
      version: '2.14.9',
      subject: `kubelet.n1.work.0.${UID}`,
      ingress: { name: 'kubelet-split-cli', cid: 5, kind: 'client', account: '$G' },
      egress: [{ name: 'pod-worker@n1#a1b2', cid: 6, kind: 'client', account: '$G', subscription: 'kubelet.n1.work.0.*', queue: 'pod-worker' }],
      streams: [],
      crossings: [],
    });
  });

  it('reads a KV write as the stream that would store it, and a subject nobody listens to as no subscriber', () => {
    const views = recordedViews();
    const kv = views.get(`$KV.pods.n1.${UID}`);
    assert.deepEqual(kv?.streams, [{ stream: 'KV_pods', subject: `$KV.pods.n1.${UID}`, noInterest: false }]);
    assert.equal(describeDelivery(kv ?? assert.fail('no KV event')), 'stream KV_pods');
    assert.equal(describeDelivery(views.get(`kubelet.n1.pleg.${UID}`) ?? assert.fail('no pleg event')), 'no subscriber');
  });

  describe('what is not a trace event', () => {
    const cases: { name: string; value: unknown }[] = [
      { name: 'not an object', value: 'trace' },
      { name: 'no events', value: { server: { name: 's' } } },
      { name: 'events not starting with ingress', value: { events: [{ type: 'eg', name: 'x' }] } },
      { name: 'events not a list', value: { events: { type: 'in' } } },
    ];
    for (const tc of cases) it(tc.name, () => assert.equal(serverView(tc.value), undefined));
  });

  it('reads mappings, exports, imports and errors it does not see in one account', () => {
    const v = serverView({
      server: { name: 'n', ver: '2.14.9' },
      events: [
        { type: 'in', kind: 0, cid: 1, name: 'a', acc: 'A', subj: 'x' },
        { type: 'sm', to: 'y' },
        { type: 'se', acc: 'B', to: 'z' },
        { type: 'si', acc: 'C', from: 'z', to: 'w' },
        { type: 'eg', kind: 4, cid: 9, name: 'leaf', acc: 'B', sub: 'z', error: 'Not delivered because remote does not support message tracing' },
        { type: 'js', stream: 'S', subject: 'y', nointerest: true },
      ],
    });
    assert.deepEqual(v?.crossings, ['mapped to y', 'exported to account B as z', 'imported by account C: z -> w']);
    assert.equal(
      describeDelivery(v ?? assert.fail('no view')),
      'leaf (leafnode, account B) on z (error: Not delivered because remote does not support message tracing); stream S (no interest); mapped to y; exported to account B as z; imported by account C: z -> w',
    );
  });

  it('prints each hop with what the server saw of its subject, and says when no event came back', () => {
    const hops = buildTimeline(UID, records).hops;
    const views = recordedViews();
    views.delete('cri.n1.runtime.RunPodSandbox');
    const out = printServerViews(joinServerViews(hops, views), 'nats-server 2.14.9 (kubelet-split)');
    const lines = out.trimEnd().split('\n');
    assert.equal(lines[0], 'nats-server 2.14.9 (kubelet-split)');
    assert.match(lines[1] ?? '', /^OFFSET +INSTANCE +WHAT +SUBJECT +IN +TO$/);
    assert.equal(lines.length, 2 + 5, 'the five hops with a subject; the prober publish without one is left out');
    assert.match(lines[2] ?? '', /sync-loop@n1#e5f6 .*kubelet-split-cli \(account \$G\) +pod-worker@n1#a1b2 \(account \$G\) on kubelet\.n1\.work\.0\.\* \[queue pod-worker\]$/);
    assert.match(lines[4] ?? '', /cri\.n1\.runtime\.RunPodSandbox +- +no trace event from the server$/);
    assert.match(lines[5] ?? '', /\$KV\.pods\.n1\..* stream KV_pods$/);
  });
});
