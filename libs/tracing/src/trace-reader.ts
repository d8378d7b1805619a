/**
 * Reads a pod's trace records from KUBELET_TRACES (an ordered consumer on
 * `trace.*.*.<uid>`, Subjects.trace.forPod): the CLI as the NATS admin user, the
 * console as its own user, the only service granted it (permissions.ts
 * traceRead). A record whose claimed sender is not the service its subject
 * names (sentByItsService) is dropped and counted: `rejected`.
 */
import { DeliverPolicy, jetstream, jetstreamManager } from '@nats-io/jetstream';
import type { NatsConnection } from '@nats-io/transport-node';
import { Subjects } from '@app/contracts';
import { TRACE_STREAM, parseTraceRecord, sentByItsService, type TraceRecord } from './trace-records.js';

const dec = new TextDecoder();

/** How many records the stream holds on `subject`, a filter (0 when there is no stream). */
async function countRecords(nc: NatsConnection, subject: string, domain: string | undefined): Promise<number> {
  const jsm = await jetstreamManager(nc, { checkAPI: false, ...(domain !== undefined ? { domain } : {}) });
  try {
    const info = await jsm.streams.info(TRACE_STREAM, { subjects_filter: subject });
    return Object.values(info.state.subjects ?? {}).reduce((a, b) => a + b, 0);
  } catch (err) {
    if (/not found/i.test((err as Error).message)) return 0;
    throw err;
  }
}

/** What a read went through: messages read, and records dropped because their sender is not the one they claim. */
export interface TraceReadCount {
  read: number;
  rejected: number;
}

/**
 * Every record on `subject`, in stream order; with `follow`, `onRecord`
 * then goes on getting new ones until `signal` aborts. `onRejected` hears
 * each record dropped because its subject's service is not its claimed sender.
 * `domain`: the JetStream domain whose stream is read (a fleet node's,
 * @app/nats nodeDomain, read from the hub); absent, the connection's own.
 */
export async function readTraceRecords(
  nc: NatsConnection,
  subject: string,
  onRecord: (r: TraceRecord) => void,
  opts: { follow: boolean; signal?: AbortSignal; onRejected?: (r: TraceRecord, subject: string) => void; domain?: string },
): Promise<TraceReadCount> {
  const stored = await countRecords(nc, subject, opts.domain);
  if (stored === 0 && !opts.follow) return { read: 0, rejected: 0 };
  const js = jetstream(nc, opts.domain !== undefined ? { domain: opts.domain } : {});
  const consumer = await js.consumers.get(TRACE_STREAM, { filter_subjects: subject, deliver_policy: DeliverPolicy.All });
  const messages = await consumer.consume();
  const stop = () => void messages.close();
  opts.signal?.addEventListener('abort', stop, { once: true });
  let read = 0;
  let rejected = 0;
  try {
    for await (const m of messages) {
      let value: unknown;
      try {
        value = JSON.parse(dec.decode(m.data));
      } catch {
        value = undefined;
      }
      const r = parseTraceRecord(value);
      if (r && sentByItsService(m.subject, r)) onRecord(r);
      else if (r) {
        rejected++;
        opts.onRejected?.(r, m.subject);
      }
      read++;
      if (!opts.follow && (read >= stored || m.info.pending === 0)) break;
    }
  } finally {
    opts.signal?.removeEventListener('abort', stop);
    await messages.close();
  }
  return { read, rejected };
}

/**
 * The pod's records stored so far, in stream order (none: an unknown pod, TRACING=off, or older than TRACE_MAX_AGE),
 * and how many were dropped for a sender that is not the one they claim. With `node`, only that node's records (a
 * service's user held to its node may read no others: the console's). With `domain`, the stream of that JetStream
 * domain (a fleet node's, read from the hub).
 */
export async function readPodTrace(nc: NatsConnection, uid: string, node?: string, domain?: string): Promise<{ records: TraceRecord[]; rejected: number }> {
  const records: TraceRecord[] = [];
  const { rejected } = await readTraceRecords(nc, Subjects.trace.forPod(uid, node), (r) => void records.push(r), { follow: false, ...(domain !== undefined ? { domain } : {}) });
  return { records, rejected };
}
