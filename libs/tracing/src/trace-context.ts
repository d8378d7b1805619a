/**
 * The trace a piece of work continues, carried across awaits by
 * AsyncLocalStorage: every place that receives a message (the Nest NATS
 * transport, the pod worker's work subscriptions, the CRI gateway's
 * responder) runs its handler inside `continueTrace(msg.headers, ...)`, and
 * `messageHeaders` stamps what the handler publishes or requests with a
 * child span of it. So one pod's flow keeps one W3C trace id from the
 * config source to the status manager, where each publish used to start a
 * new trace. See docs/adr/0015-tracing.md.
 *
 * A malformed `traceparent` is ignored (the work starts a new trace) with a
 * debug log: a peer's bad header must never fail the work it carries.
 */
import { AsyncLocalStorage } from 'node:async_hooks';
import type { MsgHdrs } from '@nats-io/transport-node';
import { CONTRACT_VERSION, parseContractVersion } from '@app/contracts';
import { Headers, nextSpan, readMeta, type TraceContext } from './headers.js';
import { NoTraceRecorder, type TraceHop, type TraceRecorder } from './trace-records.js';

/** What the current work knows of its cause. */
export interface ActiveTrace {
  /** This hop's span: the parent of whatever the work sends. */
  trace: TraceContext;
  /** The span of the message that caused this hop, when it carried one. */
  parentSpanId?: string;
  /** The pod the causing message was about (Kubelet-Pod-UID). */
  podUid?: string;
  /** The instance that sent the causing message (Kubelet-Sender: `<service>@<node>#<instance>`). */
  sender?: string;
}

const storage = new AsyncLocalStorage<ActiveTrace>();
let recorder: TraceRecorder = new NoTraceRecorder();

/** Where one module of a several-module process records (its recorder, once installed), and its contract witness. */
interface RecorderScope {
  recorder?: TraceRecorder;
  witness?: ContractWitness;
}

/**
 * What a service says and hears of contract versions (docs/adr/0034):
 * `version` goes in the Kubelet-Contract header of everything it sends and
 * replies, and `heard` is told the version of every message and reply it
 * receives that carries one. Process-wide like the recorder, or the
 * module's own inside withTraceRecorderScope.
 */
export interface ContractWitness {
  readonly version: number;
  heard(peer: { sender?: string; service?: string; version: number }, subject: string): void;
}
let witness: ContractWitness | undefined;

/** The contract witness of this process (or of the module whose scope this runs in). */
export function installContractWitness(w: ContractWitness): void {
  const scope = scopes.getStore();
  if (scope) scope.witness = w;
  else witness = w;
}

function activeWitness(): ContractWitness | undefined {
  const scope = scopes.getStore();
  return scope ? scope.witness : witness;
}

/** The contract version stamped on what is sent now: the witness's, else this build's. */
export function activeContractVersion(): number {
  return activeWitness()?.version ?? CONTRACT_VERSION;
}

/** Tells the witness the contract version a received message or reply carries (when it carries one). Never throws. */
export function heardFrom(headers: MsgHdrs | undefined, subject: string): void {
  try {
    const w = activeWitness();
    if (!w || !headers) return;
    const version = parseContractVersion(headers.get(Headers.contract) || undefined);
    if (version === undefined) return;
    const sender = headers.get(Headers.sender);
    const service = headers.get(Headers.service);
    w.heard({ version, ...(sender ? { sender } : {}), ...(service ? { service } : {}) }, subject);
  } catch {
    // a peer's headers never fail the work they carry
  }
}
const scopes = new AsyncLocalStorage<RecorderScope>();

/**
 * Where this process's hops are recorded (bootstrap installs the service's
 * recorder when TRACING=on). Process-wide like the context itself: the
 * hops are recorded by the library doors (transport, bus, CRI client), not
 * by domain code. Inside `withTraceRecorderScope` it is the scope's
 * recorder instead.
 */
export function installTraceRecorder(r: TraceRecorder): void {
  const scope = scopes.getStore();
  if (scope) scope.recorder = r;
  else recorder = r;
}

/**
 * Runs `fn` (a module's whole boot) in a scope of its own: the recorder it
 * installs records what runs in that scope, which is everything the boot
 * starts (connections, timers, HTTP servers carry the scope they were made
 * in). The one-process mode boots each module so, and each module's hops
 * carry its own instance name (docs/adr/0016-one-process-mode.md). A hop
 * made in a scope without a recorder is not recorded rather than recorded
 * under another module's name.
 */
export function withTraceRecorderScope<T>(fn: () => T): T {
  return scopes.run({}, fn);
}

function activeRecorder(): TraceRecorder | undefined {
  const scope = scopes.getStore();
  return scope ? scope.recorder : recorder;
}

/** The wall clock of a record and a monotonic clock for its duration. */
export function hopStart(): { at: number; t0: number } {
  return { at: Date.now(), t0: performance.now() };
}

export function msSince(t0: number): number {
  return Math.max(0, Math.round((performance.now() - t0) * 1000) / 1000);
}

/**
 * Records a hop about a pod (a hop with no pod UID, here or in the current
 * context, is not recorded: records are kept per pod). Never throws.
 */
export function recordHop(hop: Omit<TraceHop, 'podUid' | 'traceId' | 'spanId'> & Partial<Pick<TraceHop, 'podUid' | 'traceId' | 'spanId'>>): void {
  try {
    const active = storage.getStore();
    const podUid = hop.podUid ?? active?.podUid;
    const traceId = hop.traceId ?? active?.trace.traceId;
    const spanId = hop.spanId ?? active?.trace.spanId;
    if (!podUid || !traceId || !spanId) return;
    activeRecorder()?.record({ ...hop, podUid, traceId, spanId });
  } catch {
    // a record is never worth failing the work
  }
}

/** The trace of the work running now, if any. */
export function currentTrace(): ActiveTrace | undefined {
  return storage.getStore();
}

/** Runs `fn` as a hop of `active` (a new trace when absent): what it sends continues that trace. */
export function runInTrace<T>(active: ActiveTrace | undefined, fn: () => T): T {
  return storage.run(active ?? { trace: nextSpan() }, fn);
}

/** The minimal logger continueTrace reports a malformed header to. */
export interface TraceLogger {
  debug(obj: object, msg: string): void;
}

/**
 * The hop a message with these headers starts: a child span of its
 * traceparent, with its pod UID and sender. A missing or malformed
 * traceparent starts a new trace; a malformed one is logged at debug.
 */
export function hopOf(headers: MsgHdrs | undefined, logger?: TraceLogger, subject?: string): ActiveTrace {
  const meta = readMeta(headers);
  const raw = headers?.get(Headers.traceparent);
  if (raw && !meta.trace) logger?.debug({ subject, traceparent: raw.slice(0, 100) }, 'ignored a malformed traceparent header; starting a new trace');
  const active: ActiveTrace = { trace: nextSpan(meta.trace) };
  if (meta.trace) active.parentSpanId = meta.trace.spanId;
  if (meta.podUid) active.podUid = meta.podUid;
  if (meta.sender) active.sender = meta.sender;
  return active;
}

/** A received message, as far as its trace goes. */
export interface TracedMessage {
  readonly subject: string;
  readonly headers?: MsgHdrs | undefined;
}

/**
 * Runs `fn` as the hop `msg` starts (hopOf). Never throws on bad headers:
 * a header block that does not even parse starts a new trace, logged at debug.
 */
export function continueTrace<T>(msg: TracedMessage, fn: () => T, logger?: TraceLogger): T {
  let active: ActiveTrace | undefined;
  try {
    active = hopOf(msg.headers, logger, msg.subject);
    heardFrom(msg.headers, msg.subject);
  } catch (err) {
    logger?.debug({ subject: msg.subject, err: (err as Error).message }, 'ignored unreadable trace headers; starting a new trace');
  }
  const hop = active ?? { trace: nextSpan() };
  const { at, t0 } = hopStart();
  const done = (error?: unknown) =>
    recordHop({
      kind: 'handle',
      traceId: hop.trace.traceId,
      spanId: hop.trace.spanId,
      ...(hop.parentSpanId ? { parentSpanId: hop.parentSpanId } : {}),
      ...(hop.podUid ? { podUid: hop.podUid } : {}),
      ...(hop.sender ? { from: hop.sender } : {}),
      subject: msg.subject,
      at,
      durationMs: msSince(t0),
      ...(error === undefined ? {} : { error: error instanceof Error ? error.message : typeof error === 'string' ? error : 'failed' }),
    });
  const out = runInTrace(hop, fn);
  if (out instanceof Promise) {
    void out.then(
      () => done(),
      (err: unknown) => done(err ?? 'failed'),
    );
  } else {
    done();
  }
  return out;
}

/** A KV entry a watcher received, as far as its trace goes. */
export interface WatchedKvEntry {
  readonly bucket: string;
  readonly key: string;
  readonly revision: number;
}

/**
 * Records that a watcher received `entry`, a write about `podUid`, and took
 * the time since `started` (hopStart()) to apply it. A KV entry carries no
 * headers, so the hop cannot continue the writer's trace here: it records
 * where it read (bucket, key, revision) and the timeline links it to the
 * `kv.put` hop of the same revision (trace-timeline.ts). Never throws.
 */
export function recordKvWatch(entry: WatchedKvEntry, podUid: string, started: { at: number; t0: number }): void {
  const span = nextSpan();
  recordHop({
    kind: 'kv.watch',
    podUid,
    traceId: span.traceId,
    spanId: span.spanId,
    bucket: entry.bucket,
    key: entry.key,
    revision: entry.revision,
    at: started.at,
    durationMs: msSince(started.t0),
  });
}
