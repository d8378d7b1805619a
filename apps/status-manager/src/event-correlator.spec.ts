import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { FakeClock } from '@app/clock/testing';
import type { Event } from '@app/contracts';
import { EventCorrelator, Lru, eventName } from './event-correlator.js';

function event(reason: string, message: string, extra: { name?: string; type?: string; uid?: string } = {}): Event {
  const t = '2026-01-01T00:00:00Z';
  return {
    apiVersion: 'v1',
    kind: 'Event',
    metadata: { name: eventName(extra.name ?? 'web', 1), namespace: 'default' },
    involvedObject: { kind: 'Pod', apiVersion: 'v1', namespace: 'default', name: extra.name ?? 'web', uid: extra.uid ?? 'u1' },
    reason,
    message,
    type: extra.type ?? 'Normal',
    source: { component: 'kubelet', host: 'node-a' },
    firstTimestamp: t,
    lastTimestamp: t,
    count: 1,
    reportingComponent: 'kubelet',
    reportingInstance: 'node-a',
  };
}

/** What the apiserver gives back for a written event: it, with a resourceVersion. */
const stored = (e: Event, rv: string): Event => ({ ...e, metadata: { ...e.metadata, resourceVersion: rv } });

describe('EventCorrelator (client-go events_cache.go)', () => {
  it('an identical event is the same Event, its count patched (eventObserve)', async () => {
    const clock = new FakeClock();
    const c = new EventCorrelator(clock);
    const first = c.correlate(event('Started', 'Started container app'));
    assert.equal(first.skip, false);
    assert.equal(first.patch, undefined);
    assert.equal(first.event?.count, 1);
    c.updateState(stored(first.event, '7'));
    await clock.step(5_000);
    const later = { ...event('Started', 'Started container app'), metadata: { name: 'web.other', namespace: 'default' }, lastTimestamp: '2026-01-01T00:00:05Z' };
    const second = c.correlate(later);
    assert.equal(second.event?.metadata.name, first.event?.metadata.name, 'the name of the event written first');
    assert.equal(second.event?.metadata.resourceVersion, '7');
    assert.equal(second.event?.count, 2);
    assert.equal(second.event?.firstTimestamp, '2026-01-01T00:00:00Z');
    assert.deepEqual(second.patch, { count: 2, lastTimestamp: '2026-01-01T00:00:05Z', message: 'Started container app' });
    const third = c.correlate(later);
    assert.equal(third.event?.count, 3);
  });

  it('events that differ only in message are combined from the 10th in 10 minutes (EventAggregate)', async () => {
    const clock = new FakeClock();
    const c = new EventCorrelator(clock);
    const messages: string[] = [];
    for (let i = 1; i <= 12; i++) {
      const r = c.correlate(event('Unhealthy', `Readiness probe failed: attempt ${i}`));
      messages.push(`${r.event?.message ?? ''} x${r.event?.count ?? 0}`);
      if (r.event) c.updateState(stored(r.event, String(i)));
      await clock.step(1_000);
    }
    assert.deepEqual(messages.slice(0, 9), Array.from({ length: 9 }, (_, i) => `Readiness probe failed: attempt ${i + 1} x1`));
    assert.deepEqual(messages.slice(9), [
      '(combined from similar events): Readiness probe failed: attempt 10 x1',
      '(combined from similar events): Readiness probe failed: attempt 10 x2',
      '(combined from similar events): Readiness probe failed: attempt 10 x3',
    ].map((m, i) => (i === 0 ? m : m.replace('attempt 10', `attempt ${10 + i}`))));
  });

  it('similar events further apart than 10 minutes are not combined', async () => {
    const clock = new FakeClock();
    const c = new EventCorrelator(clock);
    for (let i = 1; i <= 12; i++) {
      const r = c.correlate(event('Unhealthy', `attempt ${i}`));
      assert.equal(r.event?.message, `attempt ${i}`);
      await clock.step(601_000);
    }
  });

  it('a source may send 25 events about an object, then one per 5 minutes (the spam filter)', async () => {
    const clock = new FakeClock();
    const c = new EventCorrelator(clock);
    const sent = (reason: string, name = 'web') => !c.correlate(event(reason, reason, { name, uid: name })).skip;
    // Different reasons: neither combined nor deduplicated, only the budget counts.
    for (let i = 0; i < 25; i++) assert.equal(sent(`R${i}`), true, `event ${i + 1}`);
    assert.equal(sent('R25'), false, 'the 26th is dropped');
    assert.equal(sent('x', 'other'), true, 'another object has its own budget');
    await clock.step(299_000);
    assert.equal(sent('R26'), false);
    await clock.step(1_000);
    assert.equal(sent('R27'), true, 'one token back after 5 minutes');
    assert.equal(sent('R28'), false);
  });

  it('a Warning has its own budget (the type is part of the key)', () => {
    const c = new EventCorrelator(new FakeClock());
    for (let i = 0; i < 25; i++) c.correlate(event(`R${i}`, `R${i}`));
    assert.equal(c.correlate(event('BackOff', 'Back-off restarting failed container', { type: 'Warning' })).skip, false);
  });
});

describe('Lru', () => {
  it('drops the least recently used entry beyond its size', () => {
    const lru = new Lru<number>(2);
    lru.add('a', 1);
    lru.add('b', 2);
    lru.get('a');
    lru.add('c', 3);
    assert.equal(lru.get('b'), undefined);
    assert.equal(lru.get('a'), 1);
    assert.equal(lru.length, 2);
  });
});

describe('eventName (util.GenerateEventName)', () => {
  it('is the object name and the time in nanoseconds, hexadecimal', () => {
    assert.equal(eventName('web', Date.UTC(2026, 0, 1)), `web.${(BigInt(Date.UTC(2026, 0, 1)) * 1_000_000n).toString(16)}`);
    assert.notEqual(eventName('web', 5, 1), eventName('web', 5, 2));
  });
});
