import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { NatsConnection, RequestOptions } from '@nats-io/transport-node';
import { FakeClock } from '@app/clock/testing';
import { CriError } from './errors.js';
import { NatsCriClient, REPLY_MARGIN_MS } from './client.js';
import { CRI_TIMEOUT_HEADER } from './methods.js';

interface Asked {
  subject: string;
  body: unknown;
  timeout: number;
  deadlineHeader: string | undefined;
}

/** A NATS connection whose request times out on a fake clock, as nats.js's does on the real one, unless answered. */
class FakeNats {
  readonly asked: Asked[] = [];
  answer: ((a: Asked) => unknown) | undefined;
  constructor(private readonly clock: FakeClock) {}
  request(subject: string, data: Uint8Array, opts: RequestOptions) {
    const a: Asked = { subject, body: JSON.parse(new TextDecoder().decode(data)), timeout: opts.timeout, deadlineHeader: (opts.headers)?.get(CRI_TIMEOUT_HEADER) };
    this.asked.push(a);
    if (this.answer) return Promise.resolve({ data: new TextEncoder().encode(JSON.stringify(this.answer(a))) });
    return new Promise<never>((_, reject) => {
      this.clock.setTimer(opts.timeout, () => reject(Object.assign(new Error('timeout'), { name: 'TimeoutError' })));
    });
  }
}

/** The client needs only request(); the fake answers with what it needs of a Msg. */
const asNats = (f: FakeNats) => f as unknown as Pick<NatsConnection, 'request'>;

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
      const nats = new FakeNats(new FakeClock(0));
      nats.answer = () => ({});
      await tc.call(new NatsCriClient(asNats(nats), 'node-a', 'pod-worker', podWorkerTimeouts));
      assert.equal(nats.asked[0]?.deadlineHeader, String(tc.want), 'the deadline travels in the header');
      assert.equal(nats.asked[0]?.timeout, tc.want + REPLY_MARGIN_MS, 'the client waits the deadline plus a margin for the reply');
    });
  }

  it('gives up with DeadlineExceeded once its own deadline and the margin have passed, not before', async () => {
    const clock = new FakeClock(0);
    const nats = new FakeNats(clock);
    const client = new NatsCriClient(asNats(nats), 'node-a', 'pod-worker', podWorkerTimeouts);
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
    const nats = new FakeNats(new FakeClock(0));
    nats.answer = () => ({ error: { code: 'NotFound', description: 'container "c9" not found' } });
    const client = new NatsCriClient(asNats(nats), 'node-a', 'prober');
    await assert.rejects(client.runtime('ContainerStatus', { containerId: 'c9' }), { code: 'NotFound', description: 'container "c9" not found' });
    assert.deepEqual(nats.asked.map((a) => [a.subject, a.body]), [['cri.node-a.runtime.ContainerStatus', { containerId: 'c9' }]]);
  });
});
