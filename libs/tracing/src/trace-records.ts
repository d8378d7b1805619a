/**
 * Trace records: one small JSON record per hop of a pod's flow (a message
 * handled, published or asked, a CRI call, a KV write), kept in the
 * JetStream stream KUBELET_TRACES under `trace.<node>.<service>.<uid>`
 * (@app/contracts Subjects.trace), bounded by
 * age and size, so `kubelet-split trace POD` can draw the pod's timeline
 * after any one service restarted. See docs/adr/0015-tracing.md.
 *
 * Recording is off the hot path: `record` only pushes onto a bounded buffer;
 * a timer publishes the buffer in batches with core NATS publishes (no ack
 * awaited). A full buffer drops the record and counts it; recording never
 * blocks or fails the work it describes.
 *
 * Who wrote a record: its subject names the publishing service, and NATS
 * lets each service's user publish only under its own name (libs/nats
 * permissions.ts); the record's `instance` is what the service claims. A
 * reader keeps a record only when the two agree (`sentByItsService`), so a
 * service broken into can add hops to a pod's timeline in its own name
 * only.
 */
import { DiscardPolicy, RetentionPolicy, StorageType, jetstreamManager } from '@nats-io/jetstream';
import { nanos } from '@nats-io/transport-node';
import type { NatsConnection } from '@nats-io/transport-node';
import { Subjects, type ServiceName } from '@app/contracts';

export const TRACE_STREAM = 'KUBELET_TRACES';
export const TRACE_RECORD_TYPE = 'kubelet.v1.trace_hop' as const;

/** Every node's, service's and pod's records: the stream's subjects. */
export const TRACE_SUBJECTS = Subjects.trace.pattern.replace('{node}', '*');

export type TraceHopKind = 'handle' | 'publish' | 'request' | 'cri' | 'kv.put' | 'kv.watch';

/** One hop, as stored. Fields are only added, never repurposed. */
export interface TraceRecord {
  type: typeof TRACE_RECORD_TYPE;
  traceId: string;
  spanId: string;
  /** The span this hop was caused by (absent: a root). */
  parentSpanId?: string;
  kind: TraceHopKind;
  podUid: string;
  /** The instance that did it: `<service>@<node>#<instance>`. */
  instance: string;
  /** When it started, epoch milliseconds. */
  at: number;
  durationMs: number;
  subject?: string;
  /** For a handled message: the instance that sent it. */
  from?: string;
  /** For a CRI call: the CRI method. */
  method?: string;
  /** The `type` of the message published (a PLEG event, a probe result, a status version ...). */
  messageType?: string;
  /** A few scalar facts of the message: the PLEG event type, the probe result, the status version. */
  detail?: Record<string, string | number | boolean>;
  /** For a KV write: where, and the revision a watcher of it sees; for a KV watch: the write it saw. */
  bucket?: string;
  key?: string;
  revision?: number;
  /** The error code or message the hop ended with. */
  error?: string;
}

export type TraceHop = Omit<TraceRecord, 'type' | 'instance'>;

/** Where hops go. The port the libraries record to; `NoTraceRecorder` when TRACING=off. */
export abstract class TraceRecorder {
  /** Takes one hop; never throws, never waits. */
  abstract record(hop: TraceHop): void;
  /** Publishes what is buffered (at shutdown). */
  abstract flush(): void;
}

export class NoTraceRecorder extends TraceRecorder {
  record(): void {}
  flush(): void {}
}

export interface TraceBufferOptions {
  node: string;
  /** The service recording: its records go under its own name (`trace.<node>.<service>.<uid>`). */
  service: ServiceName;
  /** `<service>@<node>#<instance>` (libs/nats connectionName). */
  instance: string;
  /** Records held at most; a record beyond is dropped and counted. */
  maxBuffered: number;
  /** How long a record waits at most before its batch is published. */
  flushMs: number;
  /** Counts a dropped record (a metric). */
  onDrop?: () => void;
}

const enc = new TextEncoder();

/** The recorder of a running service: a bounded buffer published in batches. */
export class JetStreamTraceRecorder extends TraceRecorder {
  private buffer: TraceRecord[] = [];
  private timer: ReturnType<typeof setTimeout> | undefined;
  /** Records dropped because the buffer was full, or because publishing failed. */
  dropped = 0;

  constructor(
    private readonly nc: Pick<NatsConnection, 'publish' | 'isClosed'>,
    private readonly opts: TraceBufferOptions,
  ) {
    super();
  }

  record(hop: TraceHop): void {
    if (this.buffer.length >= this.opts.maxBuffered) {
      this.drop(1);
      return;
    }
    this.buffer.push({ type: TRACE_RECORD_TYPE, instance: this.opts.instance, ...hop });
    // The timer is transport plumbing like nats.js's own flush, not domain time.
    this.timer ??= setTimeout(() => this.flush(), this.opts.flushMs);
    this.timer.unref?.();
  }

  flush(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
    const batch = this.buffer;
    this.buffer = [];
    if (batch.length === 0) return;
    if (this.nc.isClosed()) return this.drop(batch.length);
    for (const [i, r] of batch.entries()) {
      let subject: string;
      try {
        subject = Subjects.trace.build(this.opts.node, this.opts.service, r.podUid);
      } catch {
        // A pod UID no subject token can carry (it came in a header): that record only.
        this.drop(1);
        continue;
      }
      try {
        this.nc.publish(subject, enc.encode(JSON.stringify(r)));
      } catch {
        this.drop(batch.length - i);
        return;
      }
    }
  }

  private drop(n: number): void {
    this.dropped += n;
    for (let i = 0; i < n; i++) this.opts.onDrop?.();
  }
}

/** Reads a stored record; undefined for anything else. */
export function parseTraceRecord(v: unknown): TraceRecord | undefined {
  if (typeof v !== 'object' || v === null) return undefined;
  const r = v as Partial<TraceRecord>;
  if (r.type !== TRACE_RECORD_TYPE || typeof r.traceId !== 'string' || typeof r.spanId !== 'string' || typeof r.podUid !== 'string') return undefined;
  if (typeof r.at !== 'number' || typeof r.durationMs !== 'number' || typeof r.kind !== 'string' || typeof r.instance !== 'string') return undefined;
  return r as TraceRecord;
}

/**
 * Whether a stored record was published by the service it claims to be from:
 * the subject's node and service (what NATS let its publisher use) are those
 * of the record's `instance` (`<service>@<node>#<instance>`), and its pod is the
 * subject's.
 */
export function sentByItsService(subject: string, r: TraceRecord): boolean {
  const s = Subjects.trace.parse(subject);
  const m = /^([^@#]+)@([^@#]+)#[^@#]+$/.exec(r.instance);
  return s !== undefined && m !== null && m[1] === s.service && m[2] === s.node && r.podUid === s.uid;
}

/** The scalar fields of a message worth a timeline's line: the PLEG event, the probe result, the status version ... */
const DETAIL_FIELDS = ['op', 'source', 'eventType', 'data', 'probeType', 'containerName', 'result', 'version', 'phase', 'verb', 'reason', 'requeueAfterMs', 'error'] as const;

/** `type` and the few facts of a message a trace record keeps. */
export function messageFacts(payload: unknown): Pick<TraceRecord, 'messageType' | 'detail'> {
  if (typeof payload !== 'object' || payload === null) return {};
  const p = payload as Record<string, unknown>;
  const out: Pick<TraceRecord, 'messageType' | 'detail'> = {};
  if (typeof p['type'] === 'string') out.messageType = p['type'];
  const detail: Record<string, string | number | boolean> = {};
  for (const f of DETAIL_FIELDS) {
    const v = p[f];
    if (typeof v === 'number' || typeof v === 'boolean') detail[f] = v;
    else if (typeof v === 'string') detail[f] = v.length > 120 ? `${v.slice(0, 117)}...` : v;
  }
  // A status command carries the pod's status in args: its phase is what a timeline reader looks for.
  const args = p['args'];
  const status = typeof args === 'object' && args !== null ? (args as Record<string, unknown>)['status'] : undefined;
  const phase = typeof status === 'object' && status !== null ? (status as Record<string, unknown>)['phase'] : undefined;
  if (typeof phase === 'string') detail['phase'] = phase;
  if (Object.keys(detail).length > 0) out.detail = detail;
  return out;
}

export interface TraceStreamLimits {
  /** How long a record is kept, milliseconds. */
  maxAgeMs: number;
  /** The most bytes the stream keeps; the oldest records go first. */
  maxBytes: number;
}

/**
 * Creates KUBELET_TRACES, or brings its limits to `limits` (and its subjects to TRACE_SUBJECTS): every service
 * calls it at boot when TRACING=on, so whichever starts first makes it.
 */
export async function ensureTraceStream(nc: NatsConnection, limits: TraceStreamLimits): Promise<void> {
  const jsm = await jetstreamManager(nc, { checkAPI: false });
  const want = { max_age: nanos(limits.maxAgeMs), max_bytes: limits.maxBytes };
  try {
    const info = await jsm.streams.info(TRACE_STREAM);
    // A stream made before records carried their service (`trace.*.*`) takes the new subjects; its old records age out.
    const subjectsDiffer = info.config.subjects.length !== 1 || info.config.subjects[0] !== TRACE_SUBJECTS;
    if (subjectsDiffer || info.config.max_age !== want.max_age || info.config.max_bytes !== want.max_bytes) {
      await jsm.streams.update(TRACE_STREAM, { ...info.config, ...want, subjects: [TRACE_SUBJECTS] });
    }
  } catch (err) {
    if (!/not found/i.test((err as Error).message)) throw err;
    await jsm.streams.add({
      name: TRACE_STREAM,
      subjects: [TRACE_SUBJECTS],
      storage: StorageType.File,
      retention: RetentionPolicy.Limits,
      discard: DiscardPolicy.Old,
      ...want,
    });
  }
}
