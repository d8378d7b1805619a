/**
 * `kubelet-split trace POD`: one pod's timeline (@app/nats buildTimeline,
 * shared with the console) printed as a table or JSON.
 */
import type { Timeline, TimelineHop } from '@app/tracing';
import { TABLE_TABWRITER, tabwrite } from './tabwriter.js';

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

/** The timeline as a table, with the total and the slowest hop under it; `node`: the node it was read from (--fleet). */
export function printTimeline(t: Timeline, node?: string): string {
  const rows = [TIMELINE_HEADER, ...t.hops.map((h) => timelineRow(h, t.slowestSpanId))];
  const slowest = t.hops.find((h) => h.spanId === t.slowestSpanId);
  const summary = [
    `pod ${t.podUid}${node !== undefined ? ` on node ${node}` : ''}: ${t.hops.length} hops in ${t.traceIds.length} trace${t.traceIds.length === 1 ? '' : 's'}, total ${formatMs(t.totalMs)}`,
    ...(slowest ? [`slowest: ${slowest.what} by ${slowest.instance}, ${formatMs(slowest.durationMs)}`] : []),
  ];
  return `${tabwrite(rows.join('\n'), TABLE_TABWRITER).replace(/ +$/gm, '')}\n${summary.join('\n')}\n`;
}

/**
 * `-o json`. With --fleet (`node`: the node it was read from), also `uid`
 * (the pod's, as `podUid`) and each hop's `service` (its instance's), what
 * a reader of many nodes' timelines groups by.
 */
export function timelineJson(t: Timeline, node?: string): string {
  const fleet = () => ({ node, uid: t.podUid, ...t, hops: t.hops.map((h) => ({ service: h.instance.split('@')[0] ?? '', ...h })) });
  return `${JSON.stringify(node !== undefined ? fleet() : t, null, 2)}\n`;
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
