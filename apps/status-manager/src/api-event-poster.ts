/**
 * The node's events to the apiserver: client-go's event broadcaster
 * recording to a sink (k8s.io/client-go/tools/record/event.go
 * StartRecordingToSink, recordToSink, recordEvent), for every event the
 * status manager hears on `kubelet.<node>.events.<uid>`.
 *
 *   EventMessage ─▶ makeEvent (core/v1 Event) ─▶ queue (1000, then dropped) ─▶ one at a time:
 *     EventCorrelator ─▶ skipped (spam) | create | patch the count (created when it is gone)
 *     ─▶ written: the correlator learns its name and resourceVersion
 *     ─▶ the apiserver refused it (an HTTP error): dropped, as upstream does
 *     ─▶ the apiserver could not be reached: tried again 10 s later (the first
 *        wait randomized), 12 tries in all, then dropped
 *
 * Two doors: post() for an event heard once (queued in memory, as
 * upstream's broadcaster), and record() for an event handed out by the
 * node's durable consumer of KUBELET_EVENTS (libs/nats event-stream.ts),
 * which the module uses: the stream is the queue, and an event is
 * acknowledged only once it is written, refused or given up on, so none is
 * lost while no status manager leads or when one dies mid-way.
 *
 * Invariants:
 *  - Posting never blocks anything else: post() only queues; the queue is
 *    worked by its own loop, and a full queue drops the event.
 *  - Only the leader posts (start/stop follow the leadership; the sink's
 *    writes are fenced). record() says 'again' for an event it could not
 *    finish because this instance stopped leading: the next leader posts it.
 *  - An event's name comes from its time and its stream sequence, the same
 *    on every delivery: a second create of one already written (a leader
 *    killed between the write and the ack) is refused AlreadyExists and
 *    counts as written, so it is posted once.
 */
import { Clock } from '@app/clock';
import { isAlreadyExists, isNotFound, ApiError } from '@app/apiserver';
import type { Event, EventMessage, ObjectReference } from '@app/contracts';
import { rfc3339 } from '@app/kube';
import { NotLeaderError } from '@app/leader-election';
import type { Logger } from '@app/observability';
import { EventSink } from './api-ports.js';
import { EventCorrelator, eventName } from './event-correlator.js';

/** What became of an event: written or dropped as upstream drops it ('done'), or left for the next leader ('again'). */
export type RecordOutcome = 'done' | 'again';
/** recordEvent's answer: settled (written or to be dropped), to be tried again, or refused by the fence. */
type WriteResult = 'settled' | 'retry' | 'notLeader';

/** maxQueuedEvents */
const MAX_QUEUED_EVENTS = 1000;
/** maxTriesPerEvent */
const MAX_TRIES_PER_EVENT = 12;
/** defaultSleepDuration */
const SLEEP_MS = 10_000;

/**
 * recorder.makeEvent for an event as our services send it: a new core/v1
 * Event named `<object>.<time in ns, hex>` in the object's namespace
 * (default for the Node), the object referenced as ref.GetReference does
 * (a pod with apiVersion v1; the Node by its name as its UID, as the kubelet
 * refers to it), reportingComponent and reportingInstance from the source.
 */
export function makeEvent(msg: EventMessage, seq: number): Event {
  const at = Date.parse(msg.timestamp);
  const ms = Number.isNaN(at) ? 0 : at;
  const o = msg.involvedObject;
  const involvedObject: ObjectReference =
    o.kind === 'Node'
      ? { kind: 'Node', name: o.name, uid: o.uid ?? o.name }
      : { kind: o.kind, apiVersion: 'v1', name: o.name, ...(o.namespace ? { namespace: o.namespace } : {}), ...(o.uid ? { uid: o.uid } : {}), ...(o.fieldPath ? { fieldPath: o.fieldPath } : {}) };
  const t = rfc3339(ms);
  return {
    apiVersion: 'v1',
    kind: 'Event',
    metadata: { name: eventName(o.name, ms, seq % 1_000_000), namespace: o.namespace || 'default' },
    involvedObject,
    reason: msg.reason,
    message: msg.message,
    type: msg.eventType,
    source: { component: msg.source.component, host: msg.source.host },
    firstTimestamp: t,
    lastTimestamp: t,
    count: 1,
    reportingComponent: msg.source.component,
    reportingInstance: msg.source.host,
  };
}

export interface ApiEventPosterOptions {
  /** A number in [0, 1), for the first retry's wait (Math.random). */
  random?: () => number;
}

export class ApiEventPoster {
  private readonly queue: Event[] = [];
  private readonly correlator: EventCorrelator;
  private active = false;
  private working?: Promise<void>;
  private abort = new AbortController();
  private seq = 0;
  private dropped = 0;
  /** Events written (created or counted), for /readyz and tests. */
  written = 0;

  constructor(
    private readonly sink: EventSink,
    private readonly clock: Clock,
    private readonly logger: Logger,
    private readonly options: ApiEventPosterOptions = {},
  ) {
    this.correlator = new EventCorrelator(clock);
  }

  get queued(): number {
    return this.queue.length;
  }

  start(): void {
    if (this.active) return;
    this.active = true;
    this.abort = new AbortController();
  }

  /** Stop posting at once; what is queued is dropped. */
  stop(): void {
    this.active = false;
    this.abort.abort();
    this.queue.length = 0;
  }

  /** An event heard: queued for the apiserver (dropped when not leading, or when the queue is full). */
  post(msg: EventMessage): void {
    if (!this.active) return;
    if (this.queue.length >= MAX_QUEUED_EVENTS) {
      if (this.dropped++ % 100 === 0) this.logger.error({ reason: msg.reason, object: msg.involvedObject.name, dropped: this.dropped }, 'too many queued events: event dropped');
      return;
    }
    this.queue.push(makeEvent(msg, this.seq++));
    this.working ??= this.work().finally(() => (this.working = undefined));
  }

  /**
   * An event handed out by the durable consumer, `seq` its stream sequence
   * (its name's nanoseconds): correlated and written as recordToSink does,
   * `working` called before each wait between tries.
   */
  async record(msg: EventMessage, seq: number, working?: () => void): Promise<RecordOutcome> {
    if (!this.active) return 'again';
    return (await this.recordToSink(makeEvent(msg, seq), working)) ? 'done' : 'again';
  }

  /** Resolves once the queue is worked off (tests). */
  async idle(): Promise<void> {
    while (this.working) await this.working;
  }

  private async work(): Promise<void> {
    for (let event = this.queue.shift(); event && this.active; event = this.queue.shift()) {
      try {
        await this.recordToSink(event);
      } catch (err) {
        this.logger.error({ err: (err as Error).message }, 'event not recorded');
      }
    }
  }

  /**
   * recordToSink: correlated, then written, tried again while the apiserver cannot be reached. True when the event
   * is settled (written, skipped, refused, or given up on after its tries); false when this instance stopped leading
   * first.
   */
  private async recordToSink(event: Event, working?: () => void): Promise<boolean> {
    const result = this.correlator.correlate(event);
    if (result.skip || !result.event) return true;
    const signal = this.abort.signal;
    for (let tries = 1; ; tries++) {
      const written = await this.recordEvent(result.event, result.patch);
      if (written === 'settled') return true;
      if (written === 'notLeader') return false;
      if (tries >= MAX_TRIES_PER_EVENT) {
        this.logger.error({ reason: event.reason, object: event.involvedObject.name }, 'unable to write event (retry limit exceeded!)');
        return true;
      }
      // Randomize the first sleep so that various clients won't all be synced up if the apiserver goes down.
      const delay = tries === 1 ? Math.floor(SLEEP_MS * (this.options.random ?? Math.random)()) : SLEEP_MS;
      working?.();
      try {
        await this.clock.sleep(delay, signal);
      } catch {
        return false; // stopped
      }
      if (!this.active) return false;
    }
  }

  /** recordEvent: whether the event is settled (written or to be dropped), to be tried again, or refused by the fence. */
  private async recordEvent(event: Event, patch: Record<string, unknown> | undefined): Promise<WriteResult> {
    const update = (event.count ?? 1) > 1 && patch !== undefined;
    try {
      let stored: Event | undefined;
      if (update) {
        try {
          stored = await this.sink.patch(event, patch);
        } catch (err) {
          // The event may have been removed (expired): create it again.
          if (!isNotFound(err)) throw err;
        }
      }
      stored ??= await this.sink.create({ ...event, metadata: { ...event.metadata, resourceVersion: undefined } });
      this.correlator.updateState(stored);
      this.written++;
      return 'settled';
    } catch (err) {
      if (err instanceof NotLeaderError) return 'notLeader';
      if (err instanceof ApiError && err.code !== 0) {
        // The apiserver refused it: something about the event is wrong, and it would be the next time too.
        if (isAlreadyExists(err)) this.logger.debug({ event: event.metadata.name, err: err.message }, 'server rejected event (will not retry!)');
        else this.logger.error({ event: event.metadata.name, reason: event.reason, err: err.message }, 'server rejected event (will not retry!)');
        return 'settled';
      }
      this.logger.warn({ event: event.metadata.name, reason: event.reason, err: (err as Error).message }, 'unable to write event (may retry after sleeping)');
      return 'retry';
    }
  }
}
