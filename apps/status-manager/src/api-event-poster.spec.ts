import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { ApiError } from '@app/apiserver';
import { FakeClock } from '@app/clock/testing';
import { MessageTypes, type EventMessage } from '@app/contracts';
import { NotLeaderError } from '@app/leader-election';
import { silentLogger } from '@app/observability';
import { ApiEventPoster } from './api-event-poster.js';
import { FakeEventSink } from './testing.js';

const T = Date.UTC(2026, 0, 1);

function podEvent(reason: string, message: string, type: 'Normal' | 'Warning' = 'Normal', at = T): EventMessage {
  return {
    type: MessageTypes.event,
    involvedObject: { kind: 'Pod', namespace: 'team-a', name: 'web', uid: 'u1', fieldPath: 'spec.containers{app}' },
    eventType: type,
    reason,
    message,
    source: { component: 'kubelet', host: 'node-a' },
    timestamp: new Date(at).toISOString(),
  };
}

function setup(random = 0.5) {
  const clock = new FakeClock(T);
  const sink = new FakeEventSink();
  const poster = new ApiEventPoster(sink, clock, silentLogger(), { random: () => random });
  poster.start();
  const settle = async (ms = 0) => {
    await clock.step(ms);
  };
  return { clock, sink, poster, settle };
}

describe('ApiEventPoster (the event broadcaster recording to the apiserver)', () => {
  it('posts a pod\'s event as a core/v1 Event about the pod, from the kubelet on this node', async () => {
    const { sink, poster, settle } = setup();
    poster.post(podEvent('Started', 'Started container app'));
    await settle();
    const [e] = sink.all();
    assert.ok(e);
    assert.match(e.metadata.name ?? '', /^web\.[0-9a-f]+$/);
    assert.equal(e.metadata.namespace, 'team-a');
    assert.deepEqual(e.involvedObject, { kind: 'Pod', apiVersion: 'v1', namespace: 'team-a', name: 'web', uid: 'u1', fieldPath: 'spec.containers{app}' });
    assert.deepEqual([e.type, e.reason, e.message, e.count], ['Normal', 'Started', 'Started container app', 1]);
    assert.deepEqual(e.source, { component: 'kubelet', host: 'node-a' });
    assert.deepEqual([e.reportingComponent, e.reportingInstance], ['kubelet', 'node-a']);
    assert.deepEqual([e.firstTimestamp, e.lastTimestamp], ['2026-01-01T00:00:00Z', '2026-01-01T00:00:00Z']);
  });

  it('a node\'s event refers to the Node (its name as UID) in the default namespace', async () => {
    const { sink, poster, settle } = setup();
    poster.post({ ...podEvent('FailedToAdmitStaticPod', 'bad.yaml: invalid', 'Warning'), involvedObject: { kind: 'Node', name: 'node-a', uid: 'node-a' } });
    await settle();
    const [e] = sink.all();
    assert.equal(e?.metadata.namespace, 'default');
    assert.deepEqual(e?.involvedObject, { kind: 'Node', name: 'node-a', uid: 'node-a' });
  });

  it('the same event again: the count of the one posted is patched', async () => {
    const { sink, poster, settle } = setup();
    poster.post(podEvent('BackOff', 'Back-off restarting failed container app', 'Warning'));
    await settle(10_000);
    poster.post(podEvent('BackOff', 'Back-off restarting failed container app', 'Warning', T + 10_000));
    await settle();
    assert.deepEqual(sink.calls.map((c) => c.verb), ['create', 'patch']);
    const [e] = sink.all();
    assert.equal(sink.all().length, 1);
    assert.equal(e?.count, 2);
    assert.equal(e?.lastTimestamp, '2026-01-01T00:00:10Z');
    assert.equal(e?.firstTimestamp, '2026-01-01T00:00:00Z');
  });

  it('an event whose count patch finds it gone (expired) is created again', async () => {
    const { sink, poster, settle } = setup();
    poster.post(podEvent('Pulled', 'Container image "busybox" already present on machine'));
    await settle();
    sink.events.clear();
    poster.post(podEvent('Pulled', 'Container image "busybox" already present on machine'));
    await settle();
    assert.deepEqual(sink.calls.map((c) => c.verb), ['create', 'patch', 'create']);
    assert.equal(sink.all()[0]?.count, 2);
  });

  it('the apiserver unreachable: tried again after a randomized first wait, then every 10 s, 12 tries, then dropped; the queue waits behind it', async () => {
    const { sink, poster, settle } = setup(0.5);
    for (let i = 0; i < 12; i++) sink.failures.push(new ApiError(0, 'ConnectionFailed', 'connection refused'));
    poster.post(podEvent('Created', 'Created container app'));
    poster.post(podEvent('Started', 'Started container app'));
    await settle();
    assert.equal(sink.calls.length, 1);
    await settle(4_999);
    assert.equal(sink.calls.length, 1);
    await settle(1);
    assert.equal(sink.calls.length, 2, 'the first retry after 5 s (half of 10 s, randomized)');
    await settle(10_000);
    assert.equal(sink.calls.length, 3);
    await settle(100_000);
    assert.equal(sink.calls.filter((c) => c.name.startsWith('web.') && c.verb === 'create').length, 13, '12 tries of the first, then the second event');
    assert.deepEqual(sink.all().map((e) => e.reason), ['Started'], 'the first was dropped, the second written');
  });

  it('an event the apiserver refuses is dropped at once, and the next one is posted', async () => {
    const { sink, poster, settle } = setup();
    sink.failures.push(new ApiError(422, 'Invalid', 'Event "web.1" is invalid: reason: Required value'));
    poster.post(podEvent('', 'no reason'));
    poster.post(podEvent('Started', 'Started container app'));
    await settle();
    assert.deepEqual(sink.calls.map((c) => c.verb), ['create', 'create']);
    assert.deepEqual(sink.all().map((e) => e.reason), ['Started']);
  });

  it('posting never waits for the apiserver; a full queue (1000) drops the event', () => {
    const { sink, poster } = setup();
    sink.failures.push(...Array.from({ length: 12 }, () => new ApiError(0, 'ConnectionFailed', 'connection refused')));
    for (let i = 0; i < 1100; i++) poster.post(podEvent(`R${i}`, `m${i}`));
    assert.equal(poster.queued, 1000);
  });

  it('writes nothing when not leading, or once stopped; a NotLeaderError drops the event', async () => {
    const { sink, poster, settle } = setup();
    sink.failures.push(new NotLeaderError('post an event to the apiserver'));
    poster.post(podEvent('Created', 'Created container app'));
    await settle(60_000);
    assert.equal(sink.calls.length, 1);
    poster.stop();
    poster.post(podEvent('Started', 'Started container app'));
    await settle(60_000);
    assert.equal(sink.calls.length, 1);
    assert.equal(sink.all().length, 0);
  });
});

describe('ApiEventPoster.record: the events handed out by KUBELET_EVENTS\'s durable consumer', () => {
  it('writes the event, named from its time and stream sequence, and says done', async () => {
    const { sink, poster } = setup();
    assert.equal(await poster.record(podEvent('Started', 'Started container app'), 42), 'done');
    assert.deepEqual(sink.all().map((e) => [e.metadata.name, e.reason, e.count]), [[`web.${(BigInt(T) * 1_000_000n + 42n).toString(16)}`, 'Started', 1]]);
  });

  it('handed out again after the leader died between the write and the ack: the new leader\'s create is refused AlreadyExists, so it is posted once', async () => {
    const { sink, poster, clock } = setup();
    assert.equal(await poster.record(podEvent('Started', 'Started container app'), 7), 'done');
    const next = new ApiEventPoster(sink, clock, silentLogger(), { random: () => 0.5 });
    next.start();
    assert.equal(await next.record(podEvent('Started', 'Started container app'), 7), 'done');
    assert.equal(sink.all().length, 1);
    assert.deepEqual(sink.calls.map((c) => c.verb), ['create', 'create']);
  });

  it('not leading, or the fence refuses: again (the next leader posts it), nothing dropped', async () => {
    const { sink, poster } = setup();
    sink.failures.push(new NotLeaderError('post an event to the apiserver'));
    assert.equal(await poster.record(podEvent('Started', 'Started container app'), 1), 'again');
    poster.stop();
    assert.equal(await poster.record(podEvent('Pulled', 'pulled'), 2), 'again');
    assert.equal(sink.all().length, 0);
  });

  it('the apiserver away: tried again every 10 s, working() said before each wait, done once written; stopped mid-way: again', async () => {
    const { sink, poster, clock } = setup();
    const unreachable = () => new ApiError(0, 'Unreachable', 'connect ECONNREFUSED');
    sink.failures.push(unreachable(), unreachable());
    let working = 0;
    const first = poster.record(podEvent('Started', 'Started container app'), 3, () => void working++);
    await clock.step(5000);
    await clock.step(10_000);
    assert.equal(await first, 'done');
    assert.equal(working, 2);
    sink.failures.push(unreachable());
    const second = poster.record(podEvent('Killing', 'Stopping container app'), 4);
    await clock.step(0);
    poster.stop();
    assert.equal(await second, 'again');
  });
});

