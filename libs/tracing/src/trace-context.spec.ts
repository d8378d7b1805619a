import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { headers as natsHeaders } from '@nats-io/transport-node';
import { Headers, messageHeaders, nextSpan, readMeta } from './headers.js';
import { continueTrace, currentTrace, hopOf, installTraceRecorder, runInTrace, withTraceRecorderScope } from './trace-context.js';
import { FakeTraceRecorder } from './testing.js';
import { connect as connectTcp, createServer, type AddressInfo } from 'node:net';

/** A logger that keeps what was logged at debug. */
function debugLog() {
  const lines: { obj: object; msg: string }[] = [];
  return { lines, debug: (obj: object, msg: string) => void lines.push({ obj, msg }) };
}

function incoming(values: Record<string, string>) {
  const h = natsHeaders();
  for (const [k, v] of Object.entries(values)) h.set(k, v);
  return { subject: 'kubelet.n1.pod_update', headers: h };
}

describe('trace context', () => {
  it('what a handler sends continues the trace of the message it handles, across awaits', async () => {
    const sent = messageHeaders({ podUid: 'uid-1', service: 'config-source', sender: 'config-source@n1#a' });
    const cause = readMeta(sent).trace;
    const out = await continueTrace(incoming(Object.fromEntries([...sent.keys()].map((k) => [k, sent.get(k)]))), async () => {
      await new Promise((r) => setTimeout(r, 1));
      return readMeta(messageHeaders({ service: 'sync-loop' })).trace;
    });
    assert.equal(out?.traceId, cause?.traceId, 'the same trace');
    assert.notEqual(out?.spanId, cause?.spanId, 'a new span');
  });

  it('the hop keeps its parent span, the pod UID and the sending instance', () => {
    const parent = nextSpan();
    const hop = hopOf(messageHeaders({ trace: parent, podUid: 'uid-1', sender: 'pleg@n1#b' }));
    assert.equal(hop.trace.traceId, parent.traceId);
    assert.equal(hop.podUid, 'uid-1');
    assert.equal(hop.sender, 'pleg@n1#b');
    assert.equal(typeof hop.parentSpanId, 'string');
    assert.notEqual(hop.parentSpanId, hop.trace.spanId);
  });

  it('an explicit meta.trace wins over the current context', () => {
    const explicit = nextSpan();
    const got = runInTrace({ trace: nextSpan() }, () => readMeta(messageHeaders({ trace: explicit })).trace);
    assert.equal(got?.traceId, explicit.traceId);
  });

  it('outside any handler each message starts its own trace', () => {
    assert.equal(currentTrace(), undefined);
    const a = readMeta(messageHeaders()).trace;
    const b = readMeta(messageHeaders()).trace;
    assert.notEqual(a?.traceId, b?.traceId);
  });

  it('two handlers running at once keep their own traces', async () => {
    const t1 = nextSpan();
    const t2 = nextSpan();
    const run = (t: typeof t1, ms: number) =>
      continueTrace(incoming({ [Headers.traceparent]: `00-${t.traceId}-${t.spanId}-01` }), async () => {
        await new Promise((r) => setTimeout(r, ms));
        return readMeta(messageHeaders()).trace?.traceId;
      });
    assert.deepEqual(await Promise.all([run(t1, 5), run(t2, 1)]), [t1.traceId, t2.traceId]);
  });

  const malformed = [
    { name: 'garbage', value: 'not-a-traceparent' },
    { name: 'an unknown version', value: '01-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01' },
    { name: 'an all-zero trace id', value: '00-00000000000000000000000000000000-b7ad6b7169203331-01' },
    { name: 'a truncated span id', value: '00-0af7651916cd43dd8448eb211c80319c-b7ad6b71-01' },
  ];
  for (const tc of malformed) {
    it(`a malformed traceparent (${tc.name}) is ignored with a debug log: the handler runs in a new trace`, () => {
      const log = debugLog();
      const ran = continueTrace(incoming({ [Headers.traceparent]: tc.value, [Headers.podUid]: 'uid-1' }), () => currentTrace(), log);
      assert.ok(ran, 'the handler ran');
      assert.match(ran.trace.traceId, /^[0-9a-f]{32}$/);
      assert.notEqual(ran.trace.traceId, '0af7651916cd43dd8448eb211c80319c');
      assert.equal(ran.parentSpanId, undefined);
      assert.equal(ran.podUid, 'uid-1', 'the rest of the headers still count');
      assert.equal(log.lines.length, 1);
      assert.match(log.lines[0]?.msg ?? '', /malformed traceparent/);
    });
  }

  it('headers that cannot even be read do not stop the handler', () => {
    const log = debugLog();
    const msg = {
      subject: 's',
      get headers(): never {
        throw new Error('bad header block');
      },
    };
    assert.equal(continueTrace(msg, () => 'handled', log), 'handled');
    assert.match(log.lines[0]?.msg ?? '', /unreadable trace headers/);
  });

  it('a message with no traceparent starts a new trace without a log', () => {
    const log = debugLog();
    const hop = continueTrace(incoming({}), () => currentTrace(), log);
    assert.match(hop?.trace.traceId ?? '', /^[0-9a-f]{32}$/);
    assert.equal(log.lines.length, 0);
  });

  it('two modules of one process each record their hops in their own recorder, also from timers and sockets their boot set up', async () => {
    const recorders = { a: new FakeTraceRecorder(), b: new FakeTraceRecorder() };
    const handle = () => continueTrace(incoming({ [Headers.podUid]: 'uid-1' }), () => undefined);
    // A server outside both modules, as nats-server is: what it sends arrives on the socket a module's boot opened.
    const server = createServer((peer) => setTimeout(() => peer.end('msg'), 5));
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    const port = (server.address() as AddressInfo).port;
    const boot = (name: 'a' | 'b', connect: boolean) =>
      withTraceRecorderScope(async () => {
        installTraceRecorder(recorders[name]);
        const received = connect
          ? new Promise<void>((r) => connectTcp(port, '127.0.0.1').on('data', () => (handle(), r())))
          : Promise.resolve();
        await new Promise<void>((r) => setTimeout(() => (handle(), r()), 1));
        return received;
      });
    try {
      await Promise.all([boot('a', true), boot('b', false)]);
    } finally {
      server.close();
    }
    assert.equal(recorders.a.hops.length, 2, 'the timer and the message of module a');
    assert.equal(recorders.b.hops.length, 1, 'the timer of module b only');
  });

  it('a hop in a scope whose module installed no recorder is not recorded in the process-wide one', () => {
    const processWide = new FakeTraceRecorder();
    installTraceRecorder(processWide);
    withTraceRecorderScope(() => continueTrace(incoming({ [Headers.podUid]: 'uid-1' }), () => undefined));
    continueTrace(incoming({ [Headers.podUid]: 'uid-2' }), () => undefined);
    assert.deepEqual(processWide.hops.map((h) => h.podUid), ['uid-2']);
  });
});
