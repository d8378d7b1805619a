/**
 * `kubelet-split trace POD`: one pod's timeline from its trace records
 * (docs/adr/0015-tracing.md), as a pure function of the records. Each hop
 * with its offset from the first, its duration, the service instance that
 * did it, the subject (or CRI method) and what it carried (a PLEG event, a
 * probe result, a status version); the total, and the slowest hop marked.
 */
import { MessageTypes } from '@app/contracts';
import type { TraceRecord } from '@app/nats';
import { TABLE_TABWRITER, tabwrite } from './tabwriter.js';

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
  const byStart = [...records].sort((a, b) => a.at - b.at);
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

export function formatMs(ms: number): string {
  if (ms < 1) return `${ms.toFixed(2)}ms`;
  if (ms < 1000) return `${ms.toFixed(1)}ms`;
  return `${(ms / 1000).toFixed(2)}s`;
}

/** One line of the table, for the full view and for --follow. */
export function timelineRow(h: TimelineHop, slowestSpanId: string | undefined): string {
  const target = h.kind === 'cri' ? (h.subject ?? '') : (h.subject ?? h.key ?? '');
  return [`+${formatMs(h.offsetMs)}`, formatMs(h.durationMs), h.instance, h.what, target, h.spanId === slowestSpanId ? '<- slowest' : ''].join('\t');
}

export const TIMELINE_HEADER = ['OFFSET', 'DURATION', 'INSTANCE', 'HOP', 'SUBJECT', ''].join('\t');

/** The timeline as a table, with the total and the slowest hop under it. */
export function printTimeline(t: Timeline): string {
  const rows = [TIMELINE_HEADER, ...t.hops.map((h) => timelineRow(h, t.slowestSpanId))];
  const slowest = t.hops.find((h) => h.spanId === t.slowestSpanId);
  const summary = [
    `pod ${t.podUid}: ${t.hops.length} hops in ${t.traceIds.length} trace${t.traceIds.length === 1 ? '' : 's'}, total ${formatMs(t.totalMs)}`,
    ...(slowest ? [`slowest: ${slowest.what} by ${slowest.instance}, ${formatMs(slowest.durationMs)}`] : []),
  ];
  return `${tabwrite(rows.join('\n'), TABLE_TABWRITER).replace(/ +$/gm, '')}\n${summary.join('\n')}\n`;
}

/** `-o json`. */
export function timelineJson(t: Timeline): string {
  return `${JSON.stringify(t, null, 2)}\n`;
}

const UID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** Whether the CLI's POD argument is a pod UID rather than a name. */
export function looksLikeUid(arg: string): boolean {
  return UID.test(arg);
}

/** `NAME` (in `namespace`), `NAMESPACE/NAME` or `pod/NAME`. */
export function podRef(arg: string, namespace: string): { namespace: string; name: string } {
  const bare = arg.replace(/^(pods?|po)\//, '');
  const slash = bare.indexOf('/');
  return slash > 0 ? { namespace: bare.slice(0, slash), name: bare.slice(slash + 1) } : { namespace, name: bare };
}
