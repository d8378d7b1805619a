import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { Headers, formatTraceparent, messageHeaders, nextSpan, parseTraceparent, readMeta, replyHeaders } from './headers.js';
import { continueTrace, heardFrom, installContractWitness, withTraceRecorderScope, type ContractWitness } from './trace-context.js';

describe('traceparent', () => {
  it('round-trips', () => {
    const ctx = nextSpan();
    assert.deepEqual(parseTraceparent(formatTraceparent(ctx)), ctx);
  });

  it('a child span keeps the trace and gets a new span id', () => {
    const parent = nextSpan();
    const child = nextSpan(parent);
    assert.equal(child.traceId, parent.traceId);
    assert.notEqual(child.spanId, parent.spanId);
  });

  it('new traces and spans get distinct well-formed ids, across many refills of the random pool', () => {
    const spans = Array.from({ length: 2000 }, () => nextSpan());
    assert.ok(spans.every((s) => /^[0-9a-f]{32}$/.test(s.traceId) && /^[0-9a-f]{16}$/.test(s.spanId)));
    assert.equal(new Set(spans.map((s) => s.traceId)).size, spans.length);
    assert.equal(new Set(spans.map((s) => s.spanId)).size, spans.length);
    assert.ok(spans.every((s) => parseTraceparent(formatTraceparent(s)) !== undefined), 'each one a valid traceparent');
  });

  const bad = ['', 'garbage', '01-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01', '00-00000000000000000000000000000000-b7ad6b7169203331-01', '00-0af7651916cd43dd8448eb211c80319c-0000000000000000-01'];
  for (const v of bad) it(`refuses "${v}"`, () => assert.equal(parseTraceparent(v), undefined));

  it('parses the W3C example', () => {
    assert.deepEqual(parseTraceparent('00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01'), {
      traceId: '0af7651916cd43dd8448eb211c80319c',
      spanId: 'b7ad6b7169203331',
      sampled: true,
    });
  });

  it('message headers carry the trace, pod and sender, and read back', () => {
    const trace = nextSpan();
    const h = messageHeaders({ trace, podUid: 'uid-1', service: 'pleg' });
    const meta = readMeta(h);
    assert.equal(meta.trace?.traceId, trace.traceId);
    assert.notEqual(meta.trace?.spanId, trace.spanId);
    assert.equal(meta.podUid, 'uid-1');
    assert.equal(meta.service, 'pleg');
    assert.equal(h.get(Headers.podUid), 'uid-1');
  });

  it('the sending instance travels as Kubelet-Sender', () => {
    const h = messageHeaders({ service: 'pleg', sender: 'pleg@n1#a1' });
    assert.equal(h.get(Headers.sender), 'pleg@n1#a1');
    assert.equal(readMeta(h).sender, 'pleg@n1#a1');
    assert.equal(readMeta(messageHeaders({ service: 'pleg' })).sender, undefined);
  });

  it('a leader\'s fencing token travels as Kubelet-Leader-Revision; a missing or bad one reads as none', () => {
    assert.equal(readMeta(messageHeaders({ leaderRevision: 42 })).leaderRevision, 42);
    assert.equal(messageHeaders({ leaderRevision: 42 }).get(Headers.leaderRevision), '42');
    assert.equal(readMeta(messageHeaders({})).leaderRevision, undefined);
    const bad = messageHeaders({});
    bad.set(Headers.leaderRevision, 'x');
    assert.equal(readMeta(bad).leaderRevision, undefined);
  });
});

describe('Kubelet-Contract: the sender\'s contract version (docs/adr/0034-version-skew-policy.md)', () => {
  it('every message carries this build\'s version unless told another, and readMeta reads it back', () => {
    assert.equal(messageHeaders().get(Headers.contract), '1');
    assert.equal(readMeta(messageHeaders({ contract: 3 })).contract, 3);
    assert.equal(replyHeaders({ service: 'pod-worker', sender: 'pod-worker@n#0' }).get(Headers.contract), '1');
  });

  it('a header that is not a positive integer is read as no announcement', () => {
    for (const raw of ['', 'two', '0', '-3', '1e3']) {
      const h = messageHeaders();
      h.set(Headers.contract, raw);
      assert.equal(readMeta(h).contract, undefined, raw);
    }
  });

  it('what a module sends carries its witness\'s version, and what it receives is told to that witness (never to another module\'s)', async () => {
    const heard: string[] = [];
    const witness = (version: number, name: string): ContractWitness => ({ version, heard: (p, subject) => void heard.push(`${name} heard ${p.sender ?? '?'} v${p.version} on ${subject}`) });
    const sent = await withTraceRecorderScope(async () => {
      installContractWitness(witness(3, 'a'));
      await Promise.resolve();
      const h = messageHeaders({ sender: 'sync-loop@n#1' });
      continueTrace({ subject: 'kubelet.n.work.0.u', headers: messageHeaders({ sender: 'pod-worker@n#0', contract: 1 }) }, () => undefined);
      return h.get(Headers.contract);
    });
    assert.equal(sent, '3');
    withTraceRecorderScope(() => {
      installContractWitness(witness(1, 'b'));
      heardFrom(messageHeaders({ sender: 'sync-loop@n#1', contract: 3 }), 'kubelet.n.cri.runtime.Version');
    });
    assert.deepEqual(heard, ['a heard pod-worker@n#0 v1 on kubelet.n.work.0.u', 'b heard sync-loop@n#1 v3 on kubelet.n.cri.runtime.Version']);
  });

  it('a witness that throws never fails the work the message carries', () => {
    const out = withTraceRecorderScope(() => {
      installContractWitness({ version: 1, heard: () => { throw new Error('boom'); } });
      return continueTrace({ subject: 's', headers: messageHeaders({ contract: 9 }) }, () => 'handled');
    });
    assert.equal(out, 'handled');
  });
});
