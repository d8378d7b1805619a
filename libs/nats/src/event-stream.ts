/**
 * KUBELET_EVENTS: every service's events (`kubelet.<node>.events.<uid>`,
 * recorder.Eventf), kept by JetStream so that the status manager's relay to
 * the apiserver (client-go's broadcaster recordToSink) loses none while no
 * status manager leads: each node's leader reads them through one durable
 * consumer, `status-manager_<node>`, and acknowledges an event once the
 * apiserver has it (or upstream's rules drop it). A service still publishes
 * with plain core NATS: the stream takes a copy of the subject, the status
 * managers' and the console's subscriptions hear it as before.
 *
 *   publish ─▶ KUBELET_EVENTS (an hour, 64 MiB, the oldest dropped first)
 *                 └─▶ durable consumer per node ─▶ the leader's poster ─▶ ack (or, stopped mid-way, nak)
 *
 * A message ID (Nats-Msg-Id) makes a publish idempotent within the stream's
 * duplicate window (2 min): the status manager's OOMKilled event, published
 * before the status that shows it is saved, is stored once however often a
 * restarted leader sees that status again.
 */
import { AckPolicy, DeliverPolicy, DiscardPolicy, RetentionPolicy, StorageType, jetstream, jetstreamManager } from '@nats-io/jetstream';
import { nanos, type NatsConnection } from '@nats-io/transport-node';
import { Subjects, nodeToken, type EventMessage } from '@app/contracts';
import { messageHeaders } from '@app/tracing';

export const EVENT_STREAM = 'KUBELET_EVENTS';
/** Every node's events (Subjects.events). */
export const EVENT_SUBJECTS = Subjects.events.pattern.replace('{node}', '*');
/** How long, and how much, the stream keeps: longer than any takeover, as upstream's queue of 1000 is bounded. */
export const EVENT_STREAM_LIMITS = { maxAgeMs: 3600_000, maxBytes: 64 * 1024 * 1024, duplicateWindowMs: 120_000 } as const;
/** How long the consumer waits for an ack before it hands the event out again (a poster retrying says it is still working). */
export const EVENT_ACK_WAIT_MS = 30_000;

/** The durable consumer of a node's events: one per node, read by that node's leading status manager. */
export function eventConsumerName(node: string): string {
  return `status-manager_${nodeToken(node)}`;
}

/** Creates KUBELET_EVENTS and the node's durable consumer when missing (every status manager at boot: idempotent). */
export async function ensureEventStream(nc: NatsConnection, node: string): Promise<void> {
  const jsm = await jetstreamManager(nc, { checkAPI: false });
  try {
    await jsm.streams.info(EVENT_STREAM);
  } catch (err) {
    if (!/not found/i.test((err as Error).message)) throw err;
    await jsm.streams.add({
      name: EVENT_STREAM,
      subjects: [EVENT_SUBJECTS],
      storage: StorageType.File,
      retention: RetentionPolicy.Limits,
      discard: DiscardPolicy.Old,
      max_age: nanos(EVENT_STREAM_LIMITS.maxAgeMs),
      max_bytes: EVENT_STREAM_LIMITS.maxBytes,
      duplicate_window: nanos(EVENT_STREAM_LIMITS.duplicateWindowMs),
    });
  }
  const name = eventConsumerName(node);
  try {
    await jsm.consumers.info(EVENT_STREAM, name);
  } catch (err) {
    if (!/not found/i.test((err as Error).message)) throw err;
    await jsm.consumers.add(EVENT_STREAM, {
      durable_name: name,
      filter_subject: Subjects.events.wildcard(node),
      // From its creation on: the node's first status manager makes it at boot, before it can have missed anything.
      deliver_policy: DeliverPolicy.New,
      ack_policy: AckPolicy.Explicit,
      ack_wait: nanos(EVENT_ACK_WAIT_MS),
      max_ack_pending: 1000,
    });
  }
}

/** One event handed out by the consumer. */
export interface DeliveredEvent {
  event: EventMessage;
  /** Its stream sequence: the same on every redelivery. */
  seq: number;
  /** Still being worked on: the ack wait starts again. */
  working(): void;
}

/** What a handler says of an event: done (acknowledged), or not (handed out again, to this leader or the next). */
export type EventOutcome = 'done' | 'again';

/**
 * Reads the node's durable consumer, one event at a time, until stop():
 * each is acknowledged once `handle` says done, handed out again otherwise.
 * A message that is not an event is acknowledged and dropped (logged by `onBad`).
 */
export class JetStreamEventConsumer {
  private stopped = false;
  private messages?: { stop(): void; close(): Promise<void | Error> };
  private readonly settled = new Set<number>();

  constructor(
    private readonly nc: NatsConnection,
    private readonly node: string,
    private readonly decode: (data: unknown) => EventMessage,
  ) {}

  async run(handle: (d: DeliveredEvent) => Promise<EventOutcome>, onBad: (err: Error) => void): Promise<void> {
    const js = jetstream(this.nc, { checkAPI: false });
    const consumer = await js.consumers.get(EVENT_STREAM, eventConsumerName(this.node));
    if (this.stopped) return;
    // One at a time: an event the poster retries (the apiserver down) says it is working; others pulled beside it would
    // be handed out again every ack wait, and counted again by the correlator.
    const messages = await consumer.consume({ max_messages: 1 });
    this.messages = messages;
    // Stopped while the consumer was being made: nothing is read.
    if (this.stopped) {
      messages.stop();
      return;
    }
    for await (const m of messages) {
      if (this.stopped) {
        m.nak();
        break;
      }
      // Settled here already (its ack lost, or handed out again meanwhile): acknowledged, not posted again.
      if (this.settled.has(m.seq)) {
        m.ack();
        continue;
      }
      let event: EventMessage;
      try {
        event = this.decode(m.json());
      } catch (err) {
        onBad(err as Error);
        m.ack();
        continue;
      }
      const outcome = await handle({ event, seq: m.seq, working: () => m.working() }).catch(() => 'again' as const);
      if (outcome === 'done') {
        m.ack();
        this.remember(m.seq);
      } else m.nak();
    }
  }

  stop(): void {
    this.stopped = true;
    this.messages?.stop();
  }

  /** The last SETTLED_KEPT settled sequence numbers. */
  private remember(seq: number): void {
    this.settled.add(seq);
    if (this.settled.size > SETTLED_KEPT) this.settled.delete(this.settled.values().next().value as number);
  }
}

/** How many settled events a consumer remembers, to acknowledge one handed out again without posting it twice. */
const SETTLED_KEPT = 1024;

/** Publishes `event` into KUBELET_EVENTS and resolves once the stream has it; `msgId` makes a second publish of it a no-op. */
export async function publishEventDurably(nc: NatsConnection, node: string, event: EventMessage, msgId: string): Promise<void> {
  const js = jetstream(nc, { checkAPI: false });
  const h = messageHeaders({ service: 'status-manager', ...(event.involvedObject.uid ? { podUid: event.involvedObject.uid } : {}) });
  await js.publish(Subjects.events.build(node, event.involvedObject.uid ?? nodeToken(node)), JSON.stringify(event), { msgID: msgId, headers: h, timeout: 5000 });
}
