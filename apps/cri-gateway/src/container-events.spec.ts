import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { FakeClock } from '@app/clock/testing';
import { CriError, type ContainerEventResponse, type CriService } from '@app/cri';
import { silentLogger } from '@app/observability';
import { ContainerEventsRelay, STREAM_SETTLE_MS, UNSUPPORTED_RETRY_MS } from './container-events.js';
import { RuntimeConnection, type EventStream } from './ports.js';

/** Each call to containerEvents opens a stream the test controls. */
class StreamingConnection extends RuntimeConnection {
  opened: { emit: (e: ContainerEventResponse) => void; fail: (e: CriError) => void; end: () => void }[] = [];
  unary(_s: CriService, _m: string): Promise<unknown> {
    return Promise.resolve({});
  }
  hasMethod(): boolean {
    return true;
  }
  containerEvents(onEvent: (e: ContainerEventResponse) => void): EventStream {
    let fail: (e: CriError) => void = () => undefined;
    let end: () => void = () => undefined;
    const done = new Promise<void>((res, rej) => {
      fail = rej;
      end = res;
    });
    this.opened.push({ emit: onEvent, fail, end });
    return { done, cancel: () => end() };
  }
  close(): void {}
}

const published: { subject: string; payload: unknown }[] = [];
const bus = { publish: (subject: string, payload: unknown) => void published.push({ subject, payload }) };

/** A relay on a fresh connection and clock, started and through its first step, with nothing published yet. */
async function startRelay() {
  published.length = 0;
  const conn = new StreamingConnection();
  const clock = new FakeClock(0);
  const relay = new ContainerEventsRelay(conn, bus, 'node-a', clock, silentLogger(), 'gw');
  relay.start();
  await clock.step(0);
  return { conn, clock, relay };
}

describe('ContainerEventsRelay', () => {
  it('says "unsupported by this runtime" on Unimplemented, and asks again only after a long while', async () => {
    const { conn, clock, relay } = await startRelay();
    conn.opened[0]?.fail(new CriError('Unimplemented', 'unknown method GetContainerEvents for service runtime.v1.RuntimeService'));
    await clock.step(0);
    assert.equal(relay.state, 'unsupported');
    assert.match(relay.report().detail ?? '', /unsupported by this runtime/);
    const said = () => published.filter((p) => (p.payload as { type?: string }).type === 'kubelet.v1.container_events_status').map((p) => (p.payload as { state: string }).state);
    assert.deepEqual(said(), ['unsupported'], 'the state is published when it changes');
    await clock.step(30_000);
    assert.deepEqual(said(), ['unsupported', 'unsupported'], 'and repeated every 30s');
    assert.equal(relay.report().ok, true);
    await clock.step(UNSUPPORTED_RETRY_MS - 1 - 30_000);
    assert.equal(conn.opened.length, 1);
    await clock.step(1);
    assert.equal(conn.opened.length, 2);
    await relay.stop();
  });

  it('relays events to cri.<node>.events', async () => {
    const { conn, relay } = await startRelay();
    conn.opened[0]?.emit({ containerId: 'c1', containerEventType: 'CONTAINER_STARTED_EVENT', createdAt: '1', containersStatuses: [] });
    assert.equal(relay.state, 'streaming');
    const events = published.filter((p) => !(p.payload as { type?: string }).type);
    assert.deepEqual(events.map((p) => p.subject), ['cri.node-a.events']);
    const statuses = published.filter((p) => (p.payload as { type?: string }).type === 'kubelet.v1.container_events_status');
    assert.deepEqual(statuses.map((p) => (p.payload as { state: string }).state), ['streaming']);
    await relay.stop();
  });

  it('reconnects after other stream errors with a doubling backoff', async () => {
    const { conn, clock, relay } = await startRelay();
    conn.opened[0]?.fail(new CriError('Unavailable', 'runtime restarting'));
    await clock.step(999);
    assert.equal(conn.opened.length, 1);
    await clock.step(1);
    assert.equal(conn.opened.length, 2);
    assert.equal(relay.state, 'reconnecting');
    conn.opened[1]?.fail(new CriError('Unavailable', 'still restarting'));
    await clock.step(1999);
    assert.equal(conn.opened.length, 2);
    await clock.step(1);
    assert.equal(conn.opened.length, 3);
    await relay.stop();
  });

  it('counts a stream open for a second without an error as streaming, before any event (containerd sends nothing until one)', async () => {
    const { clock, relay } = await startRelay();
    await clock.step(STREAM_SETTLE_MS - 1);
    assert.equal(relay.state, 'starting');
    await clock.step(1);
    assert.equal(relay.state, 'streaming');
    assert.equal(relay.status().stream, 'gw-1');
    await relay.stop();
  });

  it('names every stream it opens anew, so that a PLEG can tell events may have been missed between two', async () => {
    const { conn, clock, relay } = await startRelay();
    await clock.step(STREAM_SETTLE_MS);
    assert.equal(relay.status().stream, 'gw-1');
    conn.opened[0]?.fail(new CriError('Unavailable', 'runtime restarting'));
    await clock.step(0);
    assert.equal(relay.state, 'reconnecting');
    await clock.step(1000);
    assert.equal(conn.opened.length, 2);
    await clock.step(STREAM_SETTLE_MS);
    assert.deepEqual([relay.state, relay.status().stream], ['streaming', 'gw-2']);
    await relay.stop();
  });

  it('does not call a stream that fails within its first second streaming', async () => {
    const { conn, clock, relay } = await startRelay();
    await clock.step(STREAM_SETTLE_MS / 2);
    conn.opened[0]?.fail(new CriError('Unavailable', 'connection refused'));
    await clock.step(STREAM_SETTLE_MS);
    assert.notEqual(relay.state, 'streaming');
    const said = published.filter((p) => (p.payload as { type?: string }).type === 'kubelet.v1.container_events_status').map((p) => (p.payload as { state: string }).state);
    assert.ok(!said.includes('streaming'), `published ${said.join(', ')}`);
    await relay.stop();
  });
});
