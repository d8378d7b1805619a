/**
 * client-go's EventCorrelator (k8s.io/client-go/tools/record/events_cache.go),
 * which the kubelet's event broadcaster runs on every event before it writes
 * it to the apiserver. Pure: a clock and in-memory LRU caches.
 *
 *   event ─▶ EventAggregate ─▶ eventObserve ─▶ spam filter ─▶ create, or patch the count
 *
 *  - Aggregation: a 10th event in 10 minutes that differs from the others
 *    of its source, object, type and reason only by its message becomes one
 *    event "(combined from similar events): <message>", counted from then on.
 *  - De-duplication: an event identical to one already written (source,
 *    object, type, reason, message) is the same Event object: a patch of its
 *    count, lastTimestamp and message.
 *  - Spam filter: a token bucket per source and object (and type): a burst
 *    of 25, then one event per 5 minutes; an event over it is dropped.
 */
import { Clock } from '@app/clock';
import type { Event, ObjectReference } from '@app/contracts';

export type CoreEvent = Event;

/** maxLruCacheEntries */
const LRU_CACHE_SIZE = 4096;
/** defaultAggregateMaxEvents, defaultAggregateIntervalInSeconds */
const AGGREGATE_MAX_EVENTS = 10;
const AGGREGATE_INTERVAL_MS = 600_000;
/** defaultSpamBurst, defaultSpamQPS */
const SPAM_BURST = 25;
const SPAM_QPS = 1 / 300;

/** A cache of at most `size` entries, the least recently used one dropped first (k8s.io/utils/lru). */
export class Lru<V> {
  private readonly map = new Map<string, V>();
  constructor(private readonly size: number) {}
  get(key: string): V | undefined {
    const v = this.map.get(key);
    if (v !== undefined) {
      this.map.delete(key);
      this.map.set(key, v);
    }
    return v;
  }
  add(key: string, value: V): void {
    this.map.delete(key);
    this.map.set(key, value);
    if (this.map.size > this.size) {
      const oldest = this.map.keys().next();
      if (!oldest.done) this.map.delete(oldest.value);
    }
  }
  get length(): number {
    return this.map.size;
  }
}

const ref = (e: CoreEvent): ObjectReference => e.involvedObject;

/** getEventKey: source, object, type, reason and message. */
export function eventKey(e: CoreEvent): string {
  const o = ref(e);
  return [e.source?.component, e.source?.host, o.kind, o.namespace, o.name, o.fieldPath, o.uid, o.apiVersion, e.type, e.reason, e.message].map((x) => x ?? '').join('');
}

/** getSpamKey: source, object and type. */
function spamKey(e: CoreEvent): string {
  const o = ref(e);
  return [e.source?.component, e.source?.host, o.kind, o.namespace, o.name, o.uid, o.apiVersion, e.type].map((x) => x ?? '').join('');
}

/** EventAggregatorByReasonFunc: the group (source, object, type, reason, reporting controller and instance) and the message. */
function aggregateKeys(e: CoreEvent): [string, string] {
  const o = ref(e);
  const group = [e.source?.component, e.source?.host, o.kind, o.namespace, o.name, o.uid, o.apiVersion, e.type, e.reason, e.reportingComponent, e.reportingInstance].map((x) => x ?? '').join('');
  return [group, e.message ?? ''];
}

/** flowcontrol's token bucket, passive: tokens refill at `qps` up to `burst`; a try takes one if there is one. */
class TokenBucket {
  private tokens: number;
  private last: number;
  constructor(
    private readonly qps: number,
    private readonly burst: number,
    now: number,
  ) {
    this.tokens = burst;
    this.last = now;
  }
  tryAccept(now: number): boolean {
    this.tokens = Math.min(this.burst, this.tokens + ((now - this.last) / 1000) * this.qps);
    this.last = now;
    if (this.tokens < 1) return false;
    this.tokens -= 1;
    return true;
  }
}

interface AggregateRecord {
  localKeys: Set<string>;
  lastTimestamp: number;
}

interface EventLog {
  count: number;
  firstTimestamp: string;
  name: string;
  resourceVersion: string;
}

export interface CorrelateResult {
  /** The event to write; absent when skipped. */
  event?: CoreEvent;
  /** Set when the event already exists: the strategic-merge patch of its count, lastTimestamp and message. */
  patch?: Record<string, unknown>;
  /** Dropped by the spam filter. */
  skip: boolean;
}

export class EventCorrelator {
  private readonly aggregates = new Lru<AggregateRecord>(LRU_CACHE_SIZE);
  private readonly observed = new Lru<EventLog>(LRU_CACHE_SIZE);
  private readonly spam = new Lru<TokenBucket>(LRU_CACHE_SIZE);

  constructor(private readonly clock: Clock) {}

  /** EventCorrelate: what to write for `event` (not changed). */
  correlate(event: CoreEvent): CorrelateResult {
    const [aggregated, key] = this.aggregate(event);
    const [observed, patch] = this.observe(aggregated, key);
    if (this.filter(observed)) return { skip: true };
    return { event: observed, ...(patch ? { patch } : {}), skip: false };
  }

  /** UpdateState: the event as the apiserver stored it (its name and resourceVersion, for the next patch). */
  updateState(event: CoreEvent): void {
    this.observed.add(eventKey(event), { count: event.count ?? 1, firstTimestamp: event.firstTimestamp ?? '', name: event.metadata.name ?? '', resourceVersion: event.metadata.resourceVersion ?? '' });
  }

  /** EventAggregate: the event, or the aggregate it becomes, and its cache key. */
  private aggregate(event: CoreEvent): [CoreEvent, string] {
    const now = this.clock.now();
    const full = eventKey(event);
    const [group, local] = aggregateKeys(event);
    let record = this.aggregates.get(group);
    if (!record || now - record.lastTimestamp > AGGREGATE_INTERVAL_MS) record = { localKeys: new Set(), lastTimestamp: 0 };
    record.localKeys.add(local);
    record.lastTimestamp = now;
    this.aggregates.add(group, record);
    if (record.localKeys.size < AGGREGATE_MAX_EVENTS) return [event, full];

    // Do not grow the set any larger than max.
    const any = record.localKeys.values().next();
    if (!any.done) record.localKeys.delete(any.value);
    const t = new Date(now).toISOString();
    const aggregate: CoreEvent = {
      apiVersion: 'v1',
      kind: 'Event',
      metadata: { name: eventName(event.involvedObject.name ?? '', now), namespace: event.metadata.namespace ?? 'default' },
      count: 1,
      firstTimestamp: t,
      involvedObject: event.involvedObject,
      lastTimestamp: t,
      message: `(combined from similar events): ${event.message ?? ''}`,
      type: event.type ?? 'Normal',
      reason: event.reason ?? '',
      source: event.source ?? {},
    };
    return [aggregate, group];
  }

  /** eventObserve: an event seen before under `key` becomes a count patch of the one written then. */
  private observe(event: CoreEvent, key: string): [CoreEvent, Record<string, unknown> | undefined] {
    const out = structuredClone(event);
    const last = this.observed.get(key);
    let patch: Record<string, unknown> | undefined;
    if (last && last.count > 0) {
      out.metadata = { ...out.metadata, name: last.name, resourceVersion: last.resourceVersion };
      out.firstTimestamp = last.firstTimestamp;
      out.count = last.count + 1;
      // CreateTwoWayMergePatch of the event against itself with count 0, lastTimestamp at the epoch and no message.
      patch = { count: out.count, lastTimestamp: out.lastTimestamp ?? null, ...(out.message ? { message: out.message } : {}) };
    }
    this.observed.add(key, { count: out.count ?? 1, firstTimestamp: out.firstTimestamp ?? '', name: out.metadata.name ?? '', resourceVersion: out.metadata.resourceVersion ?? '' });
    return [out, patch];
  }

  /** EventSourceObjectSpamFilter.Filter: true when the event is over its source and object's budget. */
  private filter(event: CoreEvent): boolean {
    const now = this.clock.now();
    const key = spamKey(event);
    const bucket = this.spam.get(key) ?? new TokenBucket(SPAM_QPS, SPAM_BURST, now);
    const filtered = !bucket.tryAccept(now);
    this.spam.add(key, bucket);
    return filtered;
  }
}

/** util.GenerateEventName: `<object name>.<the time in nanoseconds, hex>`. */
export function eventName(objectName: string, ms: number, nanos = 0): string {
  return `${objectName}.${(BigInt(ms) * 1_000_000n + BigInt(nanos)).toString(16)}`;
}
