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
  deliver(subject: string, headers: MsgHdrs): void {
    const wildcard = subject.split('.').slice(0, -1).join('.') + '.*';
    void this.callbacks.get(wildcard)?.(null, { subject, headers, data: new TextEncoder().encode(subject) } as unknown as Msg);
  }
}

describe('NatsWorkSubscriptions: the fence on work', () => {
  it('drops work carrying a lower leader revision than the highest seen from the sync loop, on every shard', () => {
    const nc = new FakeConnection();
    const subs = new NatsWorkSubscriptions({ nc: nc as unknown as NatsConnection, node: 'node-a', addSubjects: () => undefined, fence: new FencingTokenFilter(new FakeClock()) });
    const got: string[] = [];
    subs.follow(0, (subject) => got.push(subject));
    subs.follow(1, (subject) => got.push(subject));
    nc.deliver('kubelet.node-a.work.0.u1', messageHeaders({ leaderRevision: 10 }));
    nc.deliver('kubelet.node-a.work.1.u2', messageHeaders({ leaderRevision: 25 })); // a new leader
    nc.deliver('kubelet.node-a.work.0.u1', messageHeaders({ leaderRevision: 10 })); // the deposed one, late
    nc.deliver('kubelet.node-a.work.0.u3', messageHeaders({})); // not from an elected sender
    nc.deliver('kubelet.node-a.work.0.u1', messageHeaders({ leaderRevision: 25 }));
    assert.deepEqual(got, ['kubelet.node-a.work.0.u1', 'kubelet.node-a.work.1.u2', 'kubelet.node-a.work.0.u3', 'kubelet.node-a.work.0.u1']);
  });
});
