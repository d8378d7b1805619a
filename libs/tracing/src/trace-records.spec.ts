import { afterEach, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { NatsConnection } from '@nats-io/transport-node';
import { NatsBus } from '@app/nats';
import { Headers, messageHeaders, nextSpan, readMeta } from './headers.js';
import { JsonKvStore } from '@app/nats';
import { FakeKv } from '@app/nats/testing';
import { FakeTraceRecorder } from './testing.js';
import { continueTrace, hopStart, installTraceRecorder, recordKvWatch, runInTrace } from './trace-context.js';
import { buildTimeline } from './trace-timeline.js';
import { JetStreamTraceRecorder, NoTraceRecorder, TRACE_RECORD_TYPE, messageFacts, parseTraceRecord, sentByItsService, type TraceHop } from './trace-records.js';

const dec = new TextDecoder();

/** A connection that keeps what is published. */
function fakeConnection(opts: { failPublish?: boolean; closed?: boolean } = {}) {
  const sent: { subject: string; data: Uint8Array; headers?: ReturnType<typeof messageHeaders> }[] = [];
  const nc = {
    options: { name: 'pleg@n1#a' },
    publish(subject: string, data: Uint8Array, o?: { headers?: ReturnType<typeof messageHeaders> }) {
      if (opts.failPublish) throw new Error('connection draining');
      sent.push({ subject, data, ...(o?.headers ? { headers: o.headers } : {}) });
    },
    isClosed: () => opts.closed ?? false,
  };
  return { nc, sent };
}

function hop(podUid: string, over: Partial<TraceHop> = {}): TraceHop {
  return { kind: 'handle', podUid, traceId: nextSpan().traceId, spanId: nextSpan().spanId, at: 1000, durationMs: 1, ...over };
}

describe('JetStreamTraceRecorder', () => {
  it('buffers records and publishes them in a batch, each on trace.<node>.<service>.<uid>, off the caller\'s path', async () => {
    const { nc, sent } = fakeConnection();
    const r = new JetStreamTraceRecorder(nc, { node: 'n1', service: 'pleg', instance: 'pleg@n1#a', maxBuffered: 10, flushMs: 5 });
    r.record(hop('uid-1'));
    r.record(hop('uid-2'));
    assert.equal(sent.length, 0, 'nothing is published while the handler runs');
    await new Promise((res) => setTimeout(res, 20));
    assert.deepEqual(sent.map((s) => s.subject), ['trace.n1.pleg.uid-1', 'trace.n1.pleg.uid-2']);
    const stored = parseTraceRecord(JSON.parse(dec.decode(sent[0]?.data)));
    assert.equal(stored?.type, TRACE_RECORD_TYPE);
    assert.equal(stored?.instance, 'pleg@n1#a');
    assert.equal(stored?.podUid, 'uid-1');
  });

  it('a full buffer drops the record and counts it; the caller never waits or fails', () => {
    const { nc, sent } = fakeConnection();
    let drops = 0;
    const r = new JetStreamTraceRecorder(nc, { node: 'n1', service: 'pleg', instance: 'i', maxBuffered: 2, flushMs: 60_000, onDrop: () => drops++ });
    for (let i = 0; i < 5; i++) r.record(hop('uid-1'));
    assert.equal(r.dropped, 3);
    assert.equal(drops, 3);
    r.flush();
    assert.equal(sent.length, 2);
  });

  it('a record whose pod UID no subject token can carry is dropped and counted, and the rest of its batch goes out', () => {
    const { nc, sent } = fakeConnection();
    let drops = 0;
    const r = new JetStreamTraceRecorder(nc, { node: 'n1', service: 'pleg', instance: 'i', maxBuffered: 10, flushMs: 60_000, onDrop: () => drops++ });
    r.record(hop('a.b'));
    r.record(hop('>'));
    r.record(hop('uid-2'));
    r.flush();
    assert.deepEqual(sent.map((s) => s.subject), ['trace.n1.pleg.uid-2']);
    assert.equal(r.dropped, 2);
    assert.equal(drops, 2);
  });

  const failures = [
    { name: 'a publish that throws', conn: { failPublish: true } },
    { name: 'a closed connection', conn: { closed: true } },
  ];
  for (const tc of failures) {
    it(`${tc.name} drops the batch and counts it, without throwing`, () => {
      const { nc } = fakeConnection(tc.conn);
      const r = new JetStreamTraceRecorder(nc, { node: 'n1', service: 'pleg', instance: 'i', maxBuffered: 10, flushMs: 60_000 });
      r.record(hop('uid-1'));
      r.record(hop('uid-1'));
      assert.doesNotThrow(() => r.flush());
      assert.equal(r.dropped, 2);
    });
  }
});

describe('sentByItsService: a record is kept only when its subject names the service it claims', () => {
  const record = (instance: string, podUid = 'uid-1') => ({ type: TRACE_RECORD_TYPE, traceId: 't', spanId: 's', kind: 'cri' as const, podUid, instance, at: 1, durationMs: 1 });
  const cases = [
    { name: "the prober's record under its own name", subject: 'trace.n1.prober.uid-1', r: record('prober@n1#a'), want: true },
    { name: 'a dotted node name, its token in the subject', subject: 'trace.ip-10-0-0-1_ec2.prober.uid-1', r: record('prober@ip-10-0-0-1.ec2#a'), want: true },
    { name: 'published by the prober, claiming the pod worker', subject: 'trace.n1.prober.uid-1', r: record('pod-worker@n1#a'), want: false },
    { name: 'published on node n2, claiming node n1', subject: 'trace.n2.prober.uid-1', r: record('prober@n1#a'), want: false },
    { name: "published under one pod, about another", subject: 'trace.n1.prober.uid-2', r: record('prober@n1#a'), want: false },
    { name: 'the unnamed subject of before', subject: 'trace.n1.uid-1', r: record('prober@n1#a'), want: false },
    { name: 'an instance that is not <service>@<node>#<instance>', subject: 'trace.n1.prober.uid-1', r: record('prober'), want: false },
  ];
  for (const tc of cases) it(tc.name, () => assert.equal(sentByItsService(tc.subject, tc.r), tc.want));
});

describe('messageFacts', () => {
  const cases = [
    { name: 'a PLEG event', payload: { type: 'kubelet.v1.pod_lifecycle_event', id: 'u', eventType: 'ContainerStarted', data: 'c1' }, want: { messageType: 'kubelet.v1.pod_lifecycle_event', detail: { eventType: 'ContainerStarted', data: 'c1' } } },
    { name: 'a probe result', payload: { type: 'kubelet.v1.probe_result', probeType: 'readiness', result: 'Success', podUid: 'u' }, want: { messageType: 'kubelet.v1.probe_result', detail: { probeType: 'readiness', result: 'Success' } } },
    { name: 'a status version', payload: { version: 7, status: { phase: 'Running' } }, want: { detail: { version: 7 } } },
    { name: 'a status command, by the phase it sets', payload: { type: 'kubelet.v1.status_command', podUid: 'u', args: { status: { phase: 'Running' } } }, want: { messageType: 'kubelet.v1.status_command', detail: { phase: 'Running' } } },
    { name: 'not an object', payload: 'x', want: {} },
  ];
  for (const tc of cases) it(tc.name, () => assert.deepEqual(messageFacts(tc.payload), tc.want));
});

describe('recording hops at the doors', () => {
  let recorder: FakeTraceRecorder;
  afterEach(() => installTraceRecorder(new NoTraceRecorder()));
  const install = () => {
    recorder = new FakeTraceRecorder();
    installTraceRecorder(recorder);
  };

  it('a handled message, what the handler publishes and its KV write are hops of one trace, each under its cause', async () => {
    install();
    const { nc, sent } = fakeConnection();
    const bus = new NatsBus(nc as unknown as NatsConnection, 'pleg');
    const kv = new FakeKv('pod-cache');
    const store = new JsonKvStore<{ version: number }>(kv, 'n1', 'pod');
    const cause = messageHeaders({ podUid: 'uid-1', sender: 'cri-gateway@n1#x' });
    await continueTrace({ subject: 'cri.n1.events', headers: cause }, async () => {
      bus.publish('kubelet.n1.pleg.uid-1', { type: 'kubelet.v1.pod_lifecycle_event', id: 'uid-1', eventType: 'ContainerStarted' });
      await store.put('uid-1', { version: 3 });
    });
    const [published, put, handled] = recorder.hops;
    assert.deepEqual(recorder.hops.map((h) => h.kind), ['publish', 'kv.put', 'handle']);
    const causeSpan = readMeta(cause).trace;
    assert.equal(handled?.parentSpanId, causeSpan?.spanId);
    assert.equal(handled?.from, 'cri-gateway@n1#x');
    assert.equal(handled?.subject, 'cri.n1.events');
    for (const h of recorder.hops) assert.equal(h.traceId, causeSpan?.traceId);
    assert.equal(published?.parentSpanId, handled?.spanId);
    assert.equal(published?.detail?.['eventType'], 'ContainerStarted');
    assert.equal(readMeta(sent[0]?.headers).trace?.spanId, published?.spanId, 'the published message carries the recorded span');
    assert.equal(sent[0]?.headers?.get(Headers.sender), 'pleg@n1#a');
    assert.equal(put?.parentSpanId, handled?.spanId);
    assert.deepEqual([put?.bucket, put?.key, put?.revision, put?.detail?.['version']], ['pod-cache', 'n1.pod.uid-1', 1, 3]);
  });

  it('a watcher that receives the write records where it read; the timeline makes the write its cause', async () => {
    install();
    const kv = new FakeKv('pod-cache');
    const store = new JsonKvStore<{ version: number }>(kv, 'n1', 'pod');
    await continueTrace({ subject: 'cri.n1.events', headers: messageHeaders({ podUid: 'uid-1', sender: 'cri-gateway@n1#x' }) }, () => store.put('uid-1', { version: 1 }));
    recordKvWatch({ bucket: 'pod-cache', key: 'n1.pod.uid-1', revision: 1 }, 'uid-1', hopStart());
    recordKvWatch({ bucket: 'pod-cache', key: 'n1.pod.uid-1', revision: 7 }, 'uid-1', hopStart());
    const records = recorder.hops.map((h) => ({ ...h, type: TRACE_RECORD_TYPE, instance: h.kind === 'kv.watch' ? 'pod-worker@n1#b' : 'pleg@n1#a' }));
    const put = records.find((h) => h.kind === 'kv.put');
    const [seen, unrecorded] = records.filter((h) => h.kind === 'kv.watch');
    assert.notEqual(seen?.traceId, put?.traceId, 'a KV entry carries no headers: the watcher cannot know the trace');
    const t = buildTimeline('uid-1', records);
    const watched = t.hops.find((h) => h.spanId === seen?.spanId);
    assert.equal(watched?.parentSpanId, put?.spanId);
    assert.equal(watched?.traceId, put?.traceId);
    assert.equal(watched?.what, 'KV watch pod-cache n1.pod.uid-1 @1 (written by pleg@n1#a)');
    assert.ok(t.hops.indexOf(watched) > t.hops.findIndex((h) => h.spanId === put?.spanId), 'after the write');
    const alone = t.hops.find((h) => h.spanId === unrecorded?.spanId);
    assert.equal(alone?.parentSpanId, undefined, 'a write not recorded leaves the watch a root');
    assert.equal(alone?.what, 'KV watch pod-cache n1.pod.uid-1 @7');
  });

  it('a hop about no pod is not recorded (records are kept per pod)', () => {
    install();
    const { nc } = fakeConnection();
    continueTrace({ subject: 'kubelet.n1.config.add', headers: messageHeaders() }, () => new NatsBus(nc as unknown as NatsConnection, 'config-source').publish('kubelet.n1.config.ready', {}));
    assert.equal(recorder.hops.length, 0);
  });

  it('what a handler sends about its pod carries the pod UID without being told', () => {
    const { nc, sent } = fakeConnection();
    runInTrace({ trace: nextSpan(), podUid: 'uid-9' }, () => new NatsBus(nc as unknown as NatsConnection, 'pod-worker').publish('s', {}));
    assert.equal(sent[0]?.headers?.get(Headers.podUid), 'uid-9');
  });

  it('a failing recorder never fails the handler or the publish', async () => {
    install();
    recorder.failing = true;
    const { nc, sent } = fakeConnection();
    const out = await continueTrace({ subject: 's', headers: messageHeaders({ podUid: 'uid-1' }) }, async () => {
      new NatsBus(nc as unknown as NatsConnection, 'pleg').publish('x', {});
      await Promise.resolve();
      return 'handled';
    });
    assert.equal(out, 'handled');
    assert.equal(sent.length, 1);
  });

  it('a handler that fails is recorded with its error, and still fails as before', async () => {
    install();
    await assert.rejects(continueTrace({ subject: 's', headers: messageHeaders({ podUid: 'uid-1' }) }, () => Promise.reject(new Error('boom'))), /boom/);
    await new Promise((r) => setImmediate(r));
    assert.equal(recorder.hops[0]?.error, 'boom');
  });
});
