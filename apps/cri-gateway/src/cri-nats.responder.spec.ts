import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { Msg, NatsConnection, PublishOptions, RequestOptions, SubscriptionOptions } from '@nats-io/transport-node';
import { headers as natsHeaders } from '@nats-io/transport-node';
import { FakeClock } from '@app/clock/testing';
import { CRI_PROGRESS_HEADER, CRI_TIMEOUT_HEADER, NatsCriClient, type ContainerEventResponse, type CriService } from '@app/cri';
import { silentLogger } from '@app/observability';
import { CriNatsResponder } from './cri-nats.responder.js';
import { CriGateway } from './gateway.js';
import { RuntimeMetrics } from './ports.js';
import { RuntimeConnection, type EventStream } from './ports.js';

/** One in-memory NATS: a publish reaches the subscription whose subject (or wildcard) matches; request() resolves with the first reply. */
class InMemoryNats {
  private readonly subs: { subject: string; callback: (err: Error | null, msg: Msg) => void }[] = [];
  private inbox = 0;
  subscribe(subject: string, opts: SubscriptionOptions) {
    const sub = { subject, callback: opts.callback as (err: Error | null, msg: Msg) => void };
    this.subs.push(sub);
    return { unsubscribe: () => void this.subs.splice(this.subs.indexOf(sub), 1) };
  }
  publish(subject: string, data: Uint8Array, opts?: PublishOptions): void {
    const sub = this.subs.find((s) => (s.subject.endsWith('*') ? subject.startsWith(s.subject.slice(0, -1)) : subject === s.subject));
    if (!sub) return;
    const reply = opts?.reply;
    const msg = { subject, data, reply, headers: opts?.headers, respond: (d: Uint8Array, o?: PublishOptions) => (reply ? (this.publish(reply, d, o), true) : false) };
    sub.callback(null, msg as unknown as Msg);
  }
  request(subject: string, data: Uint8Array, opts: RequestOptions): Promise<Msg> {
    return new Promise((resolve) => {
      const inbox = `_INBOX.${++this.inbox}`;
      const sub = this.subscribe(inbox, { callback: (_e, m) => (sub.unsubscribe(), resolve(m)) });
      this.publish(subject, data, { reply: inbox, ...(opts.headers ? { headers: opts.headers } : {}) });
    });
  }
}

/** The runtime end: records the gRPC deadline of each call. */
class DeadlineRecorder extends RuntimeConnection {
  readonly deadlines: { method: string; deadlineMs: number }[] = [];
  unary(_service: CriService, method: string, _request: unknown, deadlineMs: number): Promise<unknown> {
    this.deadlines.push({ method, deadlineMs });
    return Promise.resolve({});
  }
  containerEvents(_onEvent: (e: ContainerEventResponse) => void): EventStream {
    return { done: new Promise(() => undefined), cancel: () => undefined };
  }
  hasMethod(): boolean {
    return true;
  }
  close(): void {}
}

class NoMetrics extends RuntimeMetrics {
  observe(): void {}
  observeRunPodSandbox(): void {}
}

/** The gateway's own timeouts (for calls that carry none): a 1-minute pull. */
const gatewayTimeouts = { requestMs: 120_000, listMs: 30_000, pullMs: 60_000 };

function stack() {
  const nats = new InMemoryNats();
  const conn = new DeadlineRecorder();
  const gateway = new CriGateway(conn, gatewayTimeouts, new NoMetrics(), new FakeClock(0));
  new CriNatsResponder({ nc: nats as unknown as NatsConnection, gateway, node: 'node-a', logger: silentLogger() }).start();
  return { nats, conn };
}

describe('the CRI deadline travels with the call, NatsCriClient -> NATS -> cri-gateway -> gRPC', () => {
  it('a caller with a 5-minute pull timeout gets a 5-minute gRPC deadline, though the gateway\'s own is 1 minute', async () => {
    const { nats, conn } = stack();
    const podWorker = new NatsCriClient(nats as unknown as NatsConnection, 'node-a', 'pod-worker', { requestMs: 120_000, listMs: 30_000, pullMs: 300_000 });
    await podWorker.image('PullImage', { image: { image: 'registry.example/big:1' } });
    assert.deepEqual(conn.deadlines, [{ method: 'PullImage', deadlineMs: 300_000 }]);
  });

  it('a caller\'s short deadline is the gRPC deadline too', async () => {
    const { nats, conn } = stack();
    const impatient = new NatsCriClient(nats as unknown as NatsConnection, 'node-a', 'test', { requestMs: 2_000, listMs: 500, pullMs: 3_000 });
    await impatient.runtime('StopContainer', { containerId: 'c1' });
    await impatient.runtime('ListContainers', {});
    assert.deepEqual(conn.deadlines, [{ method: 'StopContainer', deadlineMs: 2_000 }, { method: 'ListContainers', deadlineMs: 500 }]);
  });

  const bad = ['0', '-5', 'soon', '12s'];
  for (const value of bad) {
    it(`a ${CRI_TIMEOUT_HEADER} of "${value}" is InvalidArgument and never reaches the runtime`, async () => {
      const { nats, conn } = stack();
      const h = natsHeaders();
      h.set(CRI_TIMEOUT_HEADER, value);
      const reply = await nats.request('cri.node-a.runtime.ListContainers', new TextEncoder().encode('{}'), { timeout: 1000, headers: h });
      const body = JSON.parse(new TextDecoder().decode(reply.data)) as { error?: { code: string; description: string } };
      assert.equal(body.error?.code, 'InvalidArgument');
      assert.equal(body.error?.description, `ListContainers: the ${CRI_TIMEOUT_HEADER} header must be a positive number of milliseconds, got "${value}"`);
      assert.equal(conn.deadlines.length, 0);
    });
  }

  it('a call without the header (curl, an old client) gets the gateway\'s own deadline', async () => {
    const { nats, conn } = stack();
    await nats.request('cri.node-a.image.PullImage', new TextEncoder().encode('{"image":{"image":"x"}}'), { timeout: 1000 });
    assert.deepEqual(conn.deadlines, [{ method: 'PullImage', deadlineMs: 60_000 }]);
  });
});

/** A runtime that answers only when told to. */
class SlowRuntime extends DeadlineRecorder {
  private readonly waiting: (() => void)[] = [];
  override unary(service: CriService, method: string, request: unknown, deadlineMs: number): Promise<unknown> {
    void super.unary(service, method, request, deadlineMs);
    return new Promise((resolve) => this.waiting.push(() => resolve({})));
  }
  answer(): void {
    for (const w of this.waiting.splice(0)) w();
  }
}

describe('the cri-gateway shows a caller that its call is still running', () => {
  it('a caller that asks for progress gets a sign every interval while the runtime works, and none after the answer', async () => {
    const nats = new InMemoryNats();
    const conn = new SlowRuntime();
    const clock = new FakeClock(0);
    new CriNatsResponder({ nc: nats as unknown as NatsConnection, gateway: new CriGateway(conn, gatewayTimeouts, new NoMetrics(), clock), node: 'node-a', logger: silentLogger(), clock }).start();
    const got: string[] = [];
    nats.subscribe('_INBOX.caller', { callback: (_e, m) => void got.push(m.headers?.get(CRI_PROGRESS_HEADER) ? 'progress' : new TextDecoder().decode(m.data)) });
    const h = natsHeaders();
    h.set(CRI_PROGRESS_HEADER, '1000');
    nats.publish('cri.node-a.runtime.ListContainers', new TextEncoder().encode('{}'), { reply: '_INBOX.caller', headers: h });
    await clock.step(3500);
    assert.deepEqual(got, ['progress', 'progress', 'progress']);
    conn.answer();
    await new Promise((r) => setImmediate(r));
    await clock.step(5000);
    assert.deepEqual(got, ['progress', 'progress', 'progress', '{}']);
  });

  it('a caller that does not ask gets only the answer', async () => {
    const nats = new InMemoryNats();
    const conn = new SlowRuntime();
    const clock = new FakeClock(0);
    new CriNatsResponder({ nc: nats as unknown as NatsConnection, gateway: new CriGateway(conn, gatewayTimeouts, new NoMetrics(), clock), node: 'node-a', logger: silentLogger(), clock }).start();
    const got: string[] = [];
    nats.subscribe('_INBOX.old', { callback: (_e, m) => void got.push(new TextDecoder().decode(m.data)) });
    nats.publish('cri.node-a.runtime.ListContainers', new TextEncoder().encode('{}'), { reply: '_INBOX.old' });
    await clock.step(3500);
    conn.answer();
    await new Promise((r) => setImmediate(r));
    assert.deepEqual(got, ['{}']);
  });
});
