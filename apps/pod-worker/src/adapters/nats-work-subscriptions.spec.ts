import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { Msg, MsgHdrs, NatsConnection, SubscriptionOptions } from '@nats-io/transport-node';
import { FakeClock } from '@app/clock/testing';
import { FencingTokenFilter } from '@app/leader-election';
import { messageHeaders } from '@app/tracing';
import { NatsWorkSubscriptions } from './nats-work-subscriptions.js';

/** Just enough of a connection to deliver messages to the adapter's subscription callbacks. */
class FakeConnection {
  readonly callbacks = new Map<string, NonNullable<SubscriptionOptions['callback']>>();
  subscribe(subject: string, opts: SubscriptionOptions) {
    if (opts.callback) this.callbacks.set(subject, opts.callback);
    return { unsubscribe: () => this.callbacks.delete(subject) };
  }
  /** What was answered, by reply subject. */
  readonly answers: { reply: string; body: unknown }[] = [];
  deliver(subject: string, headers: MsgHdrs, reply?: string): void {
    const wildcard = subject.split('.').slice(0, -1).join('.') + '.*';
    const respond = (data: Uint8Array) => {
      if (reply) this.answers.push({ reply, body: JSON.parse(new TextDecoder().decode(data)) });
      return true;
    };
    void this.callbacks.get(wildcard)?.(null, { subject, headers, reply, respond, data: new TextEncoder().encode(subject) } as unknown as Msg);
  }
}

describe('NatsWorkSubscriptions: the fence on work', () => {
  it('drops work carrying a lower leader revision than the highest seen from the sync loop, on every shard', () => {
    const nc = new FakeConnection();
    const subs = new NatsWorkSubscriptions({ nc: nc as unknown as NatsConnection, node: 'node-a', addSubjects: () => undefined, fence: new FencingTokenFilter(new FakeClock()) });
    const got: string[] = [];
    const take = (subject: string) => {
      got.push(subject);
      return true;
    };
    subs.follow(0, take);
    subs.follow(1, take);
    nc.deliver('kubelet.node-a.work.0.u1', messageHeaders({ leaderRevision: 10 }));
    nc.deliver('kubelet.node-a.work.1.u2', messageHeaders({ leaderRevision: 25 })); // a new leader
    nc.deliver('kubelet.node-a.work.0.u1', messageHeaders({ leaderRevision: 10 })); // the deposed one, late
    nc.deliver('kubelet.node-a.work.0.u3', messageHeaders({})); // not from an elected sender
    nc.deliver('kubelet.node-a.work.0.u1', messageHeaders({ leaderRevision: 25 }));
    assert.deepEqual(got, ['kubelet.node-a.work.0.u1', 'kubelet.node-a.work.1.u2', 'kubelet.node-a.work.0.u3', 'kubelet.node-a.work.0.u1']);
  });
});

describe('NatsWorkSubscriptions: the answer to a dispatch', () => {
  it('answers a request it took with work_accepted, and leaves one it did not take (or a plain publish) unanswered', async () => {
    const nc = new FakeConnection();
    const subs = new NatsWorkSubscriptions({ nc: nc as unknown as NatsConnection, node: 'node-a', addSubjects: () => undefined, fence: new FencingTokenFilter(new FakeClock()) });
    subs.follow(2, (subject) => !subject.endsWith('.refused'));
    nc.deliver('kubelet.node-a.work.2.u1', messageHeaders({ leaderRevision: 3 }), '_INBOX_sync-loop.a');
    nc.deliver('kubelet.node-a.work.2.refused', messageHeaders({ leaderRevision: 3 }), '_INBOX_sync-loop.b');
    nc.deliver('kubelet.node-a.work.2.u2', messageHeaders({ leaderRevision: 3 }));
    nc.deliver('kubelet.node-a.work.2.u3', messageHeaders({ leaderRevision: 1 }), '_INBOX_sync-loop.c'); // a deposed leader's
    await new Promise<void>((r) => setImmediate(r));
    assert.deepEqual(nc.answers, [{ reply: '_INBOX_sync-loop.a', body: { type: 'kubelet.v1.work_accepted', podUid: 'u1', shard: 2 } }]);
  });

  it('answers a request only once the work is stored (onMessage\'s promise resolved true); a promise that rejects or resolves false leaves it unanswered', async () => {
    const nc = new FakeConnection();
    const subs = new NatsWorkSubscriptions({ nc: nc as unknown as NatsConnection, node: 'node-a', addSubjects: () => undefined, fence: new FencingTokenFilter(new FakeClock()) });
    const saves = new Map<string, { resolve: (taken: boolean) => void; reject: (e: Error) => void }>();
    subs.follow(2, (subject) => new Promise<boolean>((resolve, reject) => saves.set(subject.split('.').pop() ?? '', { resolve, reject })));
    for (const uid of ['u1', 'u2', 'u3']) nc.deliver(`kubelet.node-a.work.2.${uid}`, messageHeaders({ leaderRevision: 3 }), `_INBOX_sync-loop.${uid}`);
    const flush = async () => {
      for (let i = 0; i < 5; i++) await new Promise<void>((r) => setImmediate(r));
    };
    await flush();
    assert.deepEqual(nc.answers, [], 'nothing answered while the records are being saved');
    saves.get('u1')?.reject(new Error('not the owner of pod-worker shard 2: refused to write the workers record'));
    saves.get('u2')?.resolve(false);
    saves.get('u3')?.resolve(true);
    await flush();
    assert.deepEqual(nc.answers, [{ reply: '_INBOX_sync-loop.u3', body: { type: 'kubelet.v1.work_accepted', podUid: 'u3', shard: 2 } }]);
  });
});
