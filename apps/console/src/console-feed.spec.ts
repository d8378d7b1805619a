import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { FakeClock } from '@app/clock/testing';
import type { EventMessage, Pod, PodList } from '@app/contracts';
import { ConsoleFeed, ConsolePods, serverSentEvent, type ConsoleMessage } from './console-feed.js';

/** The status manager's side, by hand: a list to serve, and the listeners to call. */
class FakeConsolePods extends ConsolePods {
  pods: Pod[] = [];
  reads = 0;
  failWith: Error | undefined;
  readonly statusListeners = new Set<(uid: string) => void>();
  readonly eventListeners = new Set<(e: EventMessage) => void>();

  listPods(): Promise<PodList> {
    this.reads++;
    if (this.failWith) return Promise.reject(this.failWith);
    return Promise.resolve({ apiVersion: 'v1', kind: 'PodList', metadata: {}, items: structuredClone(this.pods) });
  }
  onStatusChanged(listener: (uid: string) => void): () => void {
    this.statusListeners.add(listener);
    return () => void this.statusListeners.delete(listener);
  }
  onEvent(listener: (e: EventMessage) => void): () => void {
    this.eventListeners.add(listener);
    return () => void this.eventListeners.delete(listener);
  }
  statusChanged(uid: string): void {
    for (const l of this.statusListeners) l(uid);
  }
}

const pod = (name: string, phase = 'Pending'): Pod => ({ metadata: { name, namespace: 'default', uid: `uid-${name}` }, spec: { containers: [] }, status: { phase } });
const names = (m: ConsoleMessage | undefined) => (m?.event === 'pods' ? m.data.items.map((p) => `${p.metadata.name ?? ''}:${p.status?.phase ?? ''}`) : m?.event);

function setup() {
  const clock = new FakeClock();
  const pods = new FakeConsolePods();
  const feed = new ConsoleFeed(pods, clock, { pollMs: 2000, debounceMs: 100 });
  const got: ConsoleMessage[] = [];
  return { clock, pods, feed, got, subscribe: () => feed.subscribe((m) => got.push(m)) };
}

describe('ConsoleFeed', () => {
  it('sends the pod list on connect', async () => {
    const { clock, pods, got, subscribe } = setup();
    pods.pods = [pod('web')];
    subscribe();
    await clock.step(0);
    assert.deepEqual(got.map(names), [['web:Pending']]);
  });

  it('a new status version sends the changed list after the debounce, one read for a burst', async () => {
    const { clock, pods, got, subscribe } = setup();
    pods.pods = [pod('web')];
    subscribe();
    await clock.step(0);
    const before = pods.reads;
    pods.pods = [pod('web', 'Running')];
    pods.statusChanged('uid-web');
    pods.statusChanged('uid-web');
    pods.statusChanged('uid-web');
    await clock.step(99);
    assert.equal(got.length, 1, 'not before the debounce');
    await clock.step(1);
    assert.equal(pods.reads - before, 1);
    assert.deepEqual(names(got.at(-1)), ['web:Running']);
  });

  it('the poll finds a pod no listener announced; an unchanged list is not sent again', async () => {
    const { clock, pods, got, subscribe } = setup();
    subscribe();
    await clock.step(0);
    assert.deepEqual(got.map(names), [[]]);
    await clock.step(2000);
    assert.equal(got.length, 1, 'nothing changed: nothing sent');
    pods.pods = [pod('late')];
    await clock.step(2000);
    assert.deepEqual(names(got.at(-1)), ['late:Pending']);
  });

  it('passes each event heard to the pages', async () => {
    const { clock, pods, got, subscribe } = setup();
    subscribe();
    await clock.step(0);
    const e = { type: 'Normal', reason: 'Started', message: 'Started container main', involvedObject: { kind: 'Pod', name: 'web', namespace: 'default' } } as unknown as EventMessage;
    for (const l of pods.eventListeners) l(e);
    assert.deepEqual(got.at(-1), { event: 'event', data: e });
  });

  it('a failed read is told to the pages, and the next read recovers', async () => {
    const { clock, pods, got, subscribe } = setup();
    pods.failWith = new Error('KV unavailable');
    subscribe();
    await clock.step(0);
    assert.equal(got.at(-1)?.event, 'error');
    pods.failWith = undefined;
    pods.pods = [pod('web')];
    await clock.step(2000);
    assert.deepEqual(names(got.at(-1)), ['web:Pending']);
  });

  it('a second page gets the last list at once; with no page open nothing is read or listened to', async () => {
    const { clock, pods, feed, got, subscribe } = setup();
    pods.pods = [pod('web')];
    const first = subscribe();
    await clock.step(0);
    const second: ConsoleMessage[] = [];
    const unsubscribe = feed.subscribe((m) => second.push(m));
    assert.deepEqual(second.map(names), [['web:Pending']]);
    first();
    unsubscribe();
    assert.equal(feed.open, 0);
    assert.equal(pods.statusListeners.size + pods.eventListeners.size, 0);
    assert.equal(clock.waiting, 0);
    const reads = pods.reads;
    await clock.step(10_000);
    assert.equal(pods.reads, reads);
    assert.equal(got.length, 1);
  });

  it('writes the text/event-stream format', () => {
    assert.equal(serverSentEvent({ event: 'error', data: { message: 'x' } }), 'event: error\ndata: {"message":"x"}\n\n');
  });
});
