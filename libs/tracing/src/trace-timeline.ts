/**
 * A pod's timeline from its trace records (docs/adr/0015-tracing.md), as a
 * pure function of the records: each hop with its offset from the first,
 * its duration, the service instance that did it, the subject (or CRI
 * method) and what it carried (a PLEG event, a probe result, a status
 * version); the total, and the slowest hop marked. `kubelet-split trace`
 * prints it; the console draws it as a waterfall.
 */
import { MessageTypes } from '@app/contracts';
import type { TraceRecord } from './trace-records.js';

/** A hop on the timeline. */
export interface TimelineHop extends TraceRecord {
  /** Milliseconds from the first hop's start. */
  offsetMs: number;
  /** What the hop was, in a few words: `PLEG ContainerStarted`, `CRI RunPodSandbox`, `status v3`. */
  what: string;
}

export interface Timeline {
  podUid: string;
  /** The traces the pod's hops belong to (one per cause: its creation, a later update ...). */
  traceIds: string[];
  /** From the first hop's start to the last hop's end, milliseconds. */
  totalMs: number;
  /** The span of the longest hop. */
  slowestSpanId: string | undefined;
  hops: TimelineHop[];
}

/** What a hop was, for a reader of the timeline. */
export function describeHop(r: TraceRecord): string {
  const d = r.detail ?? {};
  const str = (k: string) => (d[k] === undefined ? '' : String(d[k]));
  if (r.kind === 'cri') return `CRI ${r.method ?? ''}${r.error ? ` (${r.error})` : ''}`;
  if (r.kind === 'kv.watch') return `KV watch ${r.bucket ?? ''} ${r.key ?? ''}${r.revision !== undefined ? ` @${r.revision}` : ''}${r.from ? ` (written by ${r.from})` : ''}`;
  if (r.kind === 'kv.put') return `KV put ${r.bucket ?? ''} ${r.key ?? ''}${r.revision !== undefined ? ` @${r.revision}` : ''}${d['version'] !== undefined ? ` status v${str('version')}` : ''}`;
  const verb = r.kind === 'handle' ? 'handled' : r.kind === 'request' ? 'asked' : 'sent';
  let what = verb;
  if (r.messageType === MessageTypes.podLifecycleEvent) what = `${verb} PLEG ${str('eventType')}`;
  else if (r.messageType === MessageTypes.probeResult) what = `${verb} probe ${str('probeType')} ${str('result')}`;
  else if (r.messageType) what = `${verb} ${r.messageType.replace(/^kubelet\.v\d+\./, '')}`;
  if (r.messageType === MessageTypes.workDone && d['error'] !== undefined) what += ` (${str('error')})`;
  return r.error ? `${what} (error: ${r.error})` : what;
}

/**
 * Orders the hops by start, a cause before what it caused when they start
 * in the same millisecond, and measures them.
 */
export function buildTimeline(podUid: string, records: readonly TraceRecord[]): Timeline {
  const byStart = linkWatches(records).sort((a, b) => a.at - b.at);
  const ordered = causalOrder(byStart);
  const first = ordered[0]?.at ?? 0;
  const end = ordered.reduce((m, r) => Math.max(m, r.at + r.durationMs), first);
  let slowest: TraceRecord | undefined;
  for (const r of ordered) if (!slowest || r.durationMs > slowest.durationMs) slowest = r;
  return {
    podUid,
    traceIds: [...new Set(ordered.map((r) => r.traceId))],
    totalMs: round(end - first),
    slowestSpanId: slowest?.spanId,
    hops: ordered.map((r) => ({ ...r, offsetMs: round(r.at - first), what: describeHop(r) })),
  };
}

const revisionOf = (r: TraceRecord) => `${r.bucket ?? ''}\u0000${r.key ?? ''}\u0000${r.revision ?? ''}`;

/**
 * A watcher's hop joins the trace of the write it saw: a KV entry carries
 * no headers, so the watcher recorded the bucket, key and revision, and the
 * `kv.put` hop of that revision becomes its parent (and its sender). A
 * watch whose write was not recorded (a loop outside any trace, or a write
 * older than the stream keeps) stays a root of its own.
 */
function linkWatches(records: readonly TraceRecord[]): TraceRecord[] {
  const puts = new Map<string, TraceRecord>();
  for (const r of records) if (r.kind === 'kv.put' && r.revision !== undefined) puts.set(revisionOf(r), r);
  return records.map((r) => {
    const put = r.kind === 'kv.watch' ? puts.get(revisionOf(r)) : undefined;
    return put ? { ...r, traceId: put.traceId, parentSpanId: put.spanId, from: put.instance } : r;
  });
}

/** Stable: a hop whose parent is listed after it (same start) moves right after the parent. */
function causalOrder(records: TraceRecord[]): TraceRecord[] {
  const out: TraceRecord[] = [];
  const placed = new Set<string>();
  const bySpan = new Map(records.map((r) => [r.spanId, r]));
  const place = (r: TraceRecord, seen: Set<string>) => {
    if (placed.has(r.spanId) || seen.has(r.spanId)) return;
    seen.add(r.spanId);
    const parent = r.parentSpanId ? bySpan.get(r.parentSpanId) : undefined;
    if (parent && parent.at <= r.at) place(parent, seen);
    placed.add(r.spanId);
    out.push(r);
  };
  for (const r of records) place(r, new Set());
  return out;
}

function round(ms: number): number {
  return Math.round(ms * 1000) / 1000;
}
