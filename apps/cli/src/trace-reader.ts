/**
 * Reads a pod's trace records from KUBELET_TRACES (an ordered consumer on
 * `trace.<node>.<uid>`), as the NATS admin user: no service's user may read
 * them (libs/nats permissions.ts TRACE_PUBLISH).
 */
import { readFileSync } from 'node:fs';
import { DeliverPolicy, jetstream, jetstreamManager } from '@nats-io/jetstream';
import { connect, type NatsConnection } from '@nats-io/transport-node';
import { TRACE_STREAM, parseTraceRecord, type TraceRecord } from '@app/nats';

export interface TraceSource {
  servers: string[];
  user?: string;
  passwordFile?: string;
}

export async function connectForTraces(src: TraceSource): Promise<NatsConnection> {
  const password = src.passwordFile ? readFileSync(src.passwordFile, 'utf8').trim() : undefined;
  try {
    return await connect({ servers: src.servers, name: 'kubelet-split-cli', ...(password ? { user: src.user ?? 'admin', pass: password } : {}) });
  } catch (err) {
    throw new Error(`cannot reach NATS at ${src.servers.join(',')}: ${(err as Error).message} (--nats sets its URL, --nats-password-file the admin password)`);
  }
}

const dec = new TextDecoder();

/** `trace.*.<uid>`: the pod's records, whatever node wrote them. */
export function podTraceFilter(uid: string): string {
  return `trace.*.${uid}`;
}

/** How many records the stream holds on `subject`, a filter (0 when there is no stream). */
async function countRecords(nc: NatsConnection, subject: string): Promise<number> {
  const jsm = await jetstreamManager(nc, { checkAPI: false });
  try {
    const info = await jsm.streams.info(TRACE_STREAM, { subjects_filter: subject });
    return Object.values(info.state.subjects ?? {}).reduce((a, b) => a + b, 0);
  } catch (err) {
    if (/not found/i.test((err as Error).message)) return 0;
    throw err;
  }
}

/**
 * Every record on `subject`, in stream order; with `follow`, `onRecord`
 * then goes on getting new ones until `signal` aborts.
 */
export async function readTraceRecords(nc: NatsConnection, subject: string, onRecord: (r: TraceRecord) => void, opts: { follow: boolean; signal?: AbortSignal }): Promise<number> {
  const stored = await countRecords(nc, subject);
  if (stored === 0 && !opts.follow) return 0;
  const js = jetstream(nc);
  const consumer = await js.consumers.get(TRACE_STREAM, { filter_subjects: subject, deliver_policy: DeliverPolicy.All });
  const messages = await consumer.consume();
  const stop = () => void messages.close();
  opts.signal?.addEventListener('abort', stop, { once: true });
  let read = 0;
  try {
    for await (const m of messages) {
      let value: unknown;
      try {
        value = JSON.parse(dec.decode(m.data));
      } catch {
        value = undefined;
      }
      const r = parseTraceRecord(value);
      if (r) onRecord(r);
      read++;
      if (!opts.follow && (read >= stored || m.info.pending === 0)) break;
    }
  } finally {
    opts.signal?.removeEventListener('abort', stop);
    await messages.close();
  }
  return read;
}
