import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { Msg, NatsConnection, PublishOptions, SubscriptionOptions } from '@nats-io/transport-node';
import { headers as natsHeaders } from '@nats-io/transport-node';
import { FakeClock } from '@app/clock/testing';
import { NoTraceRecorder, installTraceRecorder, nextSpan, runInTrace } from '@app/tracing';
import { FakeTraceRecorder } from '@app/tracing/testing';
import { CriError } from './errors.js';
import { NatsCriClient, REPLY_MARGIN_MS } from './client.js';
import { CRI_PROGRESS_HEADER, CRI_PROGRESS_STALL_MS, CRI_TIMEOUT_HEADER } from './methods.js';

interface Asked {
  subject: string;
  replySubject: string;
  body: unknown;
  deadlineHeader: string | undefined;
  progressHeader: string | undefined;
  /** Sends the gateway's answer, or a sign of progress, to the caller. */
  reply(body: unknown): void;
  progress(): void;
}

/** A NATS connection: what is published is recorded, and answered by `answer` when set; replies go to the subscription whose subject (or `<prefix>.*`) matches. */
class FakeNats {
  readonly asked: Asked[] = [];
  readonly inboxes = new Map<string, (err: Error | null, msg: Msg) => void>();
  /** Every subject subscribed to, in order. */
  readonly subscribed: string[] = [];
  answer: ((a: Asked) => unknown) | undefined;
  subscribe(subject: string, opts: SubscriptionOptions) {
    this.subscribed.push(subject);
    this.inboxes.set(subject, opts.callback as (err: Error | null, msg: Msg) => void);
    return { unsubscribe: () => void this.inboxes.delete(subject) };
  }
  /** The callback of the subscription `subject` reaches. */
  private listener(subject: string) {
    const wildcard = `${subject.slice(0, subject.lastIndexOf('.'))}.*`;
    return this.inboxes.get(subject) ?? this.inboxes.get(wildcard);
  }
  /** Fails the subscription `subject` reaches, as nats.js does when the server closes it. */
  failSubscription(subject: string, err: Error) {
    this.listener(subject)?.(err, undefined as unknown as Msg);
  }
  publish(subject: string, data: Uint8Array, opts: PublishOptions) {
    const reply = opts.reply ?? '';
    const deliver = (msg: Partial<Msg>) => this.listener(reply)?.(null, { subject: reply, ...msg } as Msg);
    const a: Asked = {
      subject,
      replySubject: reply,
      body: JSON.parse(new TextDecoder().decode(data)),
      deadlineHeader: opts.headers?.get(CRI_TIMEOUT_HEADER),
      progressHeader: opts.headers?.get(CRI_PROGRESS_HEADER),
      reply: (body) => deliver({ data: new TextEncoder().encode(JSON.stringify(body)) }),
      progress: () => {
        const h = natsHeaders();
        h.set(CRI_PROGRESS_HEADER, '1000');
        deliver({ data: new Uint8Array(0), headers: h });
      },
    };
    this.asked.push(a);
    if (this.answer) a.reply(this.answer(a));
  }
}

/** The client needs only subscribe() and publish(). */
const asNats = (f: FakeNats) => f as unknown as Pick<NatsConnection, 'subscribe' | 'publish'>;

const podWorkerTimeouts = { requestMs: 120_000, listMs: 30_000, pullMs: 300_000 };

describe('NatsCriClient: the caller owns the deadline', () => {
  const cases = [
    { name: 'PullImage sends the pull timeout (5 minutes)', call: (c: NatsCriClient) => c.image('PullImage', { image: { image: 'x' } }), want: 300_000 },
    // remote_runtime.go StopContainer: `r.timeout + time.Duration(timeout)*time.Second`, room for the grace period and the SIGKILL after it.
    { name: 'StopContainer sends its grace period plus the request timeout', call: (c: NatsCriClient) => c.runtime('StopContainer', { containerId: 'c', timeout: '10' }), want: 130_000 },
    { name: 'StopContainer with a 300s grace period may take longer than the request timeout', call: (c: NatsCriClient) => c.runtime('StopContainer', { containerId: 'c', timeout: '300' }), want: 420_000 },
    { name: 'ListContainers sends the list timeout', call: (c: NatsCriClient) => c.runtime('ListContainers', {}), want: 30_000 },
    { name: 'ExecSync sends its own timeout plus the request timeout', call: (c: NatsCriClient) => c.runtime('ExecSync', { containerId: 'c', cmd: ['true'], timeout: '5' }), want: 125_000 },
  ];
  for (const tc of cases) {
    it(tc.name, async () => {
      const nats = new FakeNats();
      nats.answer = () => ({});
      await tc.call(new NatsCriClient(asNats(nats), 'node-a', 'pod-worker', podWorkerTimeouts, new FakeClock(0)));
      assert.equal(nats.asked[0]?.deadlineHeader, String(tc.want), 'the deadline travels in the header');
    });
  }

  it('gives up with DeadlineExceeded once its own deadline and the margin have passed, not before', async () => {
    const clock = new FakeClock(0);
    const nats = new FakeNats();
    const client = new NatsCriClient(asNats(nats), 'node-a', 'pod-worker', podWorkerTimeouts, clock);
    // The gateway works on it: signs of progress every second, no answer.
    const beat = () => {
      nats.asked[0]?.progress();
      clock.setTimer(1000, beat);
    };
    clock.setTimer(1000, beat);
    const outcome: { settled?: unknown } = {};
    const pending = client.image('PullImage', { image: { image: 'registry.invalid/x' } }).then(
      () => (outcome.settled = 'answered'),
      (err: unknown) => (outcome.settled = err),
    );
    await clock.step(300_000 + REPLY_MARGIN_MS - 1);
    assert.equal(typeof outcome.settled, 'undefined', 'still waiting for the gateway within the deadline');
    await clock.step(1);
    await pending;
    const err = outcome.settled;
    assert.ok(err instanceof CriError && err.code === 'DeadlineExceeded', String(err));
    assert.match(err.description, /within 302000ms/);
  });

  it('sends the request as JSON on cri.<node>.<service>.<Method> and turns an error reply into a CriError', async () => {
    const nats = new FakeNats();
    nats.answer = () => ({ error: { code: 'NotFound', description: 'container "c9" not found' } });
    const client = new NatsCriClient(asNats(nats), 'node-a', 'prober', undefined, new FakeClock(0));
    await assert.rejects(client.runtime('ContainerStatus', { containerId: 'c9' }), { code: 'NotFound', description: 'container "c9" not found' });
    assert.deepEqual(nats.asked.map((a) => [a.subject, a.body]), [['cri.node-a.runtime.ContainerStatus', { containerId: 'c9' }]]);
  });

  it('a gateway that goes silent mid-call (it died) fails the call with Unavailable after the stall time, not the deadline', async () => {
    const clock = new FakeClock(0);
    const nats = new FakeNats();
    const client = new NatsCriClient(asNats(nats), 'node-a', 'pod-worker', podWorkerTimeouts, clock);
    const outcome: { settled?: unknown } = {};
    const pending = client.runtime('RunPodSandbox', { config: {} }).then(
      () => (outcome.settled = 'answered'),
      (err: unknown) => (outcome.settled = err),
    );
    assert.equal(nats.asked[0]?.progressHeader, '1000', 'the client asks for progress every second');
    // The gateway took it and showed progress twice, then was SIGKILLed.
    await clock.step(900);
    nats.asked[0]?.progress();
    await clock.step(1000);
    nats.asked[0]?.progress();
    await clock.step(CRI_PROGRESS_STALL_MS - 1);
    assert.equal(typeof outcome.settled, 'undefined', 'still waiting within the stall time after the last progress');
    await clock.step(1);
    await pending;
    const err = outcome.settled;
    assert.ok(err instanceof CriError && err.code === 'Unavailable', String(err));
    assert.match(err.description, /went silent on cri\.node-a\.runtime\.RunPodSandbox/);
    assert.equal(client.callsInFlight, 0, 'no longer waiting for its reply');
  });

  it('a long call that shows progress gets its answer', async () => {
    const clock = new FakeClock(0);
    const nats = new FakeNats();
    const client = new NatsCriClient(asNats(nats), 'node-a', 'pod-worker', podWorkerTimeouts, clock);
    const pending = client.image('PullImage', { image: { image: 'registry.example/big:1' } });
    for (let s = 0; s < 30; s++) {
      await clock.step(1000);
      nats.asked[0]?.progress();
    }
    nats.asked[0]?.reply({ imageRef: 'sha256:1' });
    assert.deepEqual(await pending, { imageRef: 'sha256:1' });
  });
});

describe('NatsCriClient: one reply subscription for all calls', () => {
  it('subscribes once, under the connection\'s inbox prefix, and each call gets its own reply subject', async () => {
    const nats = new FakeNats();
    nats.answer = (a) => ({ containerId: (a.body as { containerId: string }).containerId });
    const client = new NatsCriClient(asNats(nats), 'node-a', 'prober', undefined, new FakeClock(0));
    const answers = await Promise.all(['c1', 'c2', 'c3'].map((containerId) => client.runtime('ContainerStatus', { containerId })));
    assert.deepEqual(answers, [{ containerId: 'c1' }, { containerId: 'c2' }, { containerId: 'c3' }]);
    await client.runtime('ListContainers', {});
    assert.equal(nats.subscribed.length, 1, 'one SUB, no UNSUB per call');
    assert.match(nats.subscribed[0] ?? '', /^_INBOX\.\w+\.\*$/);
    const replySubjects = nats.asked.map((a) => a.replySubject);
    assert.equal(new Set(replySubjects).size, 4, 'a reply subject per call');
    assert.ok(replySubjects.every((r) => r.startsWith((nats.subscribed[0] ?? '').slice(0, -1))));
    assert.equal(client.callsInFlight, 0);
  });

  it('answers reach the call they answer, in whatever order they come', async () => {
    const nats = new FakeNats();
    const client = new NatsCriClient(asNats(nats), 'node-a', 'prober', undefined, new FakeClock(0));
    const first = client.runtime('ContainerStatus', { containerId: 'c1' });
    const second = client.runtime('ContainerStatus', { containerId: 'c2' });
    nats.asked[1]?.reply({ status: { id: 'c2' } });
    nats.asked[0]?.reply({ error: { code: 'NotFound', description: 'c1 not found' } });
    assert.deepEqual(await second, { status: { id: 'c2' } });
    await assert.rejects(first, { code: 'NotFound' });
  });

  it('when the server closes the reply subscription, the waiting calls fail with Unavailable and the next call subscribes anew', async () => {
    const nats = new FakeNats();
    const client = new NatsCriClient(asNats(nats), 'node-a', 'prober', undefined, new FakeClock(0));
    const waiting = client.runtime('ListContainers', {});
    nats.failSubscription(nats.asked[0]?.replySubject ?? '', new Error('Permissions Violation for Subscription'));
    await assert.rejects(waiting, (err: unknown) => err instanceof CriError && err.code === 'Unavailable' && /Permissions Violation/.test(err.description));
    assert.equal(client.callsInFlight, 0);
    nats.answer = () => ({ containers: [] });
    assert.deepEqual(await client.runtime('ListContainers', {}), { containers: [] });
    assert.equal(nats.subscribed.length, 2, 'subscribed again');
  });
});

describe('NatsCriClient: a call its caller cancels (CriCallOptions.signal)', () => {
  it('rejects at once with Canceled, stops listening, and drops a late answer', async () => {
    const nats = new FakeNats();
    const client = new NatsCriClient(asNats(nats), 'node-a', 'pod-worker', podWorkerTimeouts, new FakeClock(0));
    const abort = new AbortController();
    const pull = client.image('PullImage', { image: { image: 'registry.invalid/big' } }, undefined, { signal: abort.signal });
    assert.equal(nats.asked.length, 1, 'sent');
    abort.abort();
    await assert.rejects(pull, (err: unknown) => err instanceof CriError && err.code === 'Canceled');
    assert.equal(client.callsInFlight, 0, 'no longer listening for the answer');
    nats.asked[0]?.reply({ imageRef: 'sha256:late' }); // dropped
  });

  it('an already aborted signal sends nothing', async () => {
    const nats = new FakeNats();
    const client = new NatsCriClient(asNats(nats), 'node-a', 'pod-worker', podWorkerTimeouts, new FakeClock(0));
    await assert.rejects(client.runtime('StopContainer', { containerId: 'c', timeout: '300' }, undefined, { signal: AbortSignal.abort() }), { code: 'Canceled' });
    assert.equal(nats.asked.length, 0);
  });
});

describe('NatsCriClient: trace hops', () => {
  it('a call made while handling a pod\'s message is a `cri` hop with its method, duration and error, under the handler\'s span', async () => {
    const recorder = new FakeTraceRecorder();
    installTraceRecorder(recorder);
    try {
      const nats = new FakeNats();
      nats.answer = (a) => (a.subject.endsWith('RemoveContainer') ? { error: { code: 'NotFound', description: 'gone' } } : {});
      const client = new NatsCriClient(asNats(nats), 'node-a', 'pod-worker', podWorkerTimeouts, new FakeClock(0));
      const handler = { trace: nextSpan(), podUid: 'uid-1' };
      await runInTrace(handler, async () => {
        await client.runtime('RunPodSandbox', { config: {} });
        await client.runtime('RemoveContainer', { containerId: 'c' }).catch(() => undefined);
      });
      assert.deepEqual(
        recorder.hops.map((h) => [h.kind, h.method, h.podUid, h.traceId, h.parentSpanId, h.error]),
        [
          ['cri', 'RunPodSandbox', 'uid-1', handler.trace.traceId, handler.trace.spanId, undefined],
          ['cri', 'RemoveContainer', 'uid-1', handler.trace.traceId, handler.trace.spanId, 'NotFound'],
        ],
      );
      assert.ok(recorder.hops.every((h) => h.durationMs >= 0));
    } finally {
      installTraceRecorder(new NoTraceRecorder());
    }
  });
});
