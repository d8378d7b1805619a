/**
 * The transport's side of the skew policy (docs/adr/0034): a message whose
 * type version the handler does not read is refused with a logged reason
 * that names the sender and its contract version, a request gets an
 * InvalidArgument reply saying why, and the subscription keeps serving.
 * Over a hand-written connection: the transport's own logic, no server.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { Msg, MsgHdrs, NatsConnection, SubscriptionOptions } from '@nats-io/transport-node';
import { MessageTypes, decodeMessage } from '@app/contracts';
import { messageHeaders } from '@app/tracing';
import type { Logger } from '@app/observability';
import { KubeletNatsTransport } from './nats-transport.js';

const enc = new TextEncoder();
const dec = new TextDecoder();

/** Keeps each subscription's callback, so the test delivers messages itself. */
class FakeConnection {
  readonly callbacks = new Map<string, NonNullable<SubscriptionOptions['callback']>>();
  subscribe(subject: string, opts: SubscriptionOptions) {
    if (opts.callback) this.callbacks.set(subject, opts.callback);
    return { unsubscribe: () => undefined };
  }
}

function logger() {
  const lines: { msg: string; obj: Record<string, unknown> }[] = [];
  const log = (obj: Record<string, unknown>, msg: string) => void lines.push({ msg, obj });
  return { lines, logger: { warn: log, error: log, info: log, debug: log } as unknown as Logger };
}

/** A received message: its body, headers, and what it was answered. */
function message(subject: string, body: unknown, headers: MsgHdrs) {
  const replies: unknown[] = [];
  const replyHeaders: (MsgHdrs | undefined)[] = [];
  const respond = (data: Uint8Array, opts?: { headers?: MsgHdrs }) => {
    replies.push(JSON.parse(dec.decode(data)));
    replyHeaders.push(opts?.headers);
    return true;
  };
  const msg = { subject, data: enc.encode(JSON.stringify(body)), headers, reply: '_INBOX.x', respond };
  return { msg: msg as unknown as Msg, replies, replyHeaders };
}

const settle = async () => {
  for (let i = 0; i < 5; i++) await new Promise<void>((r) => setImmediate(r));
};

describe('KubeletNatsTransport: refusals by version', () => {
  it('refuses a type version the handler does not read, naming the sender and its version; the next message is served', async () => {
    const nc = new FakeConnection();
    const { lines, logger: log } = logger();
    const transport = new KubeletNatsTransport({ connection: nc as unknown as NatsConnection, node: 'n', service: 'pleg', logger: log, sender: 'pleg@n#0' });
    const handled: string[] = [];
    transport.addHandler('kubelet.{node}.pleg.inspect', (data: unknown) => {
      handled.push(decodeMessage(MessageTypes.inspectPod, data).podUid);
      return Promise.resolve({ ok: true });
    });
    let bound: unknown;
    transport.listen((err) => (bound = err ?? 'bound'));
    assert.equal(bound, 'bound');
    const deliver = nc.callbacks.get('kubelet.n.pleg.inspect');
    assert.ok(deliver);

    const newer = message('kubelet.n.pleg.inspect', { type: 'kubelet.v2.inspect_pod', podUid: 'u1', syncEnd: 1 }, messageHeaders({ sender: 'pod-worker@n#7', contract: 2 }));
    void deliver(null, newer.msg);
    await settle();
    assert.deepEqual(handled, [], 'nothing half-read reached the handler\'s work');
    assert.equal(lines.length, 1);
    assert.equal(lines[0]?.msg, 'refused a message of a type version this service does not read');
    assert.deepEqual(
      { refusal: lines[0]?.obj['refusal'], peer: lines[0]?.obj['peer'], peerContractVersion: lines[0]?.obj['peerContractVersion'], subject: lines[0]?.obj['subject'] },
      { refusal: 'unsupported-version', peer: 'pod-worker@n#7', peerContractVersion: 2, subject: 'kubelet.n.pleg.inspect' },
    );
    assert.match(String(lines[0]?.obj['err']), /version 2 of inspect_pod is not one this service reads \(it reads v1/);
    assert.deepEqual((newer.replies[0] as { error: { code: string } }).error.code, 'InvalidArgument');

    const unknown = message('kubelet.n.pleg.inspect', { type: 'kubelet.v1.pod_teleport' }, messageHeaders({ sender: 'x@n#0' }));
    void deliver(null, unknown.msg);
    await settle();
    assert.equal(lines[1]?.msg, 'ignored a message of a kind this service does not know');

    const ours = message('kubelet.n.pleg.inspect', { type: 'kubelet.v1.inspect_pod', podUid: 'u2', syncEnd: 1 }, messageHeaders({ sender: 'pod-worker@n#0' }));
    void deliver(null, ours.msg);
    await settle();
    assert.deepEqual(handled, ['u2']);
    assert.deepEqual(ours.replies, [{ ok: true }]);
    assert.deepEqual([ours.replyHeaders[0]?.get('Kubelet-Contract'), ours.replyHeaders[0]?.get('Kubelet-Sender')], ['1', 'pleg@n#0'], 'a reply says who answers and the version it speaks');
    transport.close();
  });
});
