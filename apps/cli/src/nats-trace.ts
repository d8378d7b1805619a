/**
 * `kubelet-split trace POD --nats-trace`: what nats-server itself sees for
 * each hop of the pod's timeline, from the server's own message tracing
 * (nats-server 2.11 and later, ADR-41 of nats-io/nats-architecture-and-design:
 * server/msgtrace.go `MsgTraceEvent`). Pure functions here: which messages to
 * ask about (natsTraceProbes), how to read an event (parseMsgTraceEvent,
 * serverView) and how to print it; the sending is trace-command.ts's.
 *
 * A probe is a trace-only copy of a hop (`Nats-Trace-Only: true`): the server
 * routes it as it would the hop, reports each step to `Nats-Trace-Dest`, and
 * delivers nothing, stores nothing. So the view is the server's routing of
 * the hop's subject now (who subscribes, which queue group, which stream
 * would store it), sent from the CLI's admin connection, not a record of the
 * moment the hop happened (docs/adr/0015-tracing.md).
 */
import { Headers, formatTraceparent, type TimelineHop } from '@app/tracing';
import { formatMs } from './trace.js';
import { TABLE_TABWRITER, tabwrite } from './tabwriter.js';

/** The oldest nats-server with message tracing. */
export const MIN_TRACING_SERVER = '2.11.0';

/** The headers nats-server's message tracing reads (server/msgtrace.go). */
export const NatsTraceHeaders = {
  dest: 'Nats-Trace-Dest',
  only: 'Nats-Trace-Only',
} as const;

/** Whether a server of `version` (INFO's `version`, `2.14.9`) traces messages. */
export function serverTraces(version: string | undefined): boolean {
  const [maj = 0, min = 0] = (version ?? '').split(/[.-]/).map((n) => Number.parseInt(n, 10) || 0);
  const [wantMaj = 0, wantMin = 0] = MIN_TRACING_SERVER.split('.').map(Number);
  return maj > wantMaj || (maj === wantMaj && min >= wantMin);
}

/** One message to ask the server about: a subject of the timeline, with a hop's trace headers. */
export interface NatsTraceProbe {
  subject: string;
  headers: Record<string, string>;
  /** The hops (span ids) that sent or received on the subject. */
  spanIds: string[];
}

/** The subject a hop went over: its own, or `$KV.<bucket>.<key>` for a KV write. */
export function hopSubject(hop: Pick<TimelineHop, 'subject' | 'kind' | 'bucket' | 'key'>): string | undefined {
  if (hop.subject) return hop.subject;
  if (hop.kind === 'kv.put' && hop.bucket && hop.key) return `$KV.${hop.bucket}.${hop.key}`;
  return undefined;
}

/**
 * Subjects never probed: replies (`_INBOX...`), and the server's own APIs,
 * whose internal handlers a trace-only message still reaches
 * (server/client.go deliverMsg calls an internal subscription's callback):
 * a trace-only `$JS.API.STREAM.DELETE` would delete. `$KV.` is probed: the
 * stream that captures it skips storing a trace-only message.
 */
export function probeable(subject: string): boolean {
  return !/^(_INBOX|\$JS\.|\$JSC\.|\$SYS\.|\$NRG\.|\$SRV\.)/.test(subject);
}

/**
 * One probe per subject of the timeline (the server's routing depends on the
 * subject only), with the headers of its first hop: its `traceparent`, the
 * pod UID and the sending instance, as the hop carried them.
 */
export function natsTraceProbes(hops: readonly TimelineHop[]): NatsTraceProbe[] {
  const bySubject = new Map<string, NatsTraceProbe>();
  for (const hop of hops) {
    const subject = hopSubject(hop);
    if (!subject || !probeable(subject)) continue;
    const probe = bySubject.get(subject);
    if (probe) {
      probe.spanIds.push(hop.spanId);
      continue;
    }
    bySubject.set(subject, {
      subject,
      headers: {
        [Headers.traceparent]: formatTraceparent({ traceId: hop.traceId, spanId: hop.spanId, sampled: true }),
        [Headers.podUid]: hop.podUid,
        [Headers.sender]: hop.kind === 'handle' ? (hop.from ?? hop.instance) : hop.instance,
      },
      spanIds: [hop.spanId],
    });
  }
  return [...bySubject.values()];
}

/** The connection kinds of server/const.go (CLIENT, ROUTER ...), as the events number them. */
const CONNECTION_KINDS = ['client', 'route', 'gateway', 'system', 'leafnode', 'jetstream', 'account'] as const;

function kindName(kind: unknown): string {
  return typeof kind === 'number' ? (CONNECTION_KINDS[kind] ?? `kind ${kind}`) : 'client';
}

/** One step of a MsgTraceEvent (`in`, `sm`, `se`, `si`, `js`, `eg`), as the server writes it. */
interface RawStep {
  type?: unknown;
  ts?: unknown;
  kind?: unknown;
  cid?: unknown;
  name?: unknown;
  acc?: unknown;
  subj?: unknown;
  sub?: unknown;
  queue?: unknown;
  error?: unknown;
  stream?: unknown;
  subject?: unknown;
  nointerest?: unknown;
  to?: unknown;
  from?: unknown;
  hop?: unknown;
}

/** A connection a message came in on or would go out to. */
export interface TraceConnection {
  /** The connection name: `<service>@<node>#<instance>` for a service, `kubelet-split-cli` for this CLI. */
  name: string;
  cid: number;
  kind: string;
  account: string;
}

/** What nats-server saw of one message. */
export interface ServerView {
  server: string;
  version: string;
  subject: string;
  ingress: TraceConnection & { error?: string };
  /** Each subscriber it would be delivered to (one per queue group). */
  egress: (TraceConnection & { subscription: string; queue?: string; error?: string })[];
  /** The JetStream streams that would store it. */
  streams: { stream: string; subject: string; noInterest: boolean; error?: string }[];
  /** Subject mappings, stream exports and service imports it went through (accounts crossed). */
  crossings: string[];
}

const str = (v: unknown): string => (typeof v === 'string' ? v : '');
const num = (v: unknown): number => (typeof v === 'number' ? v : 0);

/**
 * A trace event as the server published it, or undefined when `value` is not
 * one (no `events` with an `in` step first).
 */
export function serverView(value: unknown): ServerView | undefined {
  if (typeof value !== 'object' || value === null) return undefined;
  const v = value as { server?: { name?: unknown; ver?: unknown }; events?: unknown };
  if (!Array.isArray(v.events)) return undefined;
  const steps = v.events.filter((e): e is RawStep => typeof e === 'object' && e !== null);
  const first = steps[0];
  if (str(first?.type) !== 'in') return undefined;
  const ingressAccount = str(first?.acc);
  const view: ServerView = {
    server: str(v.server?.name),
    version: str(v.server?.ver),
    subject: str(first?.subj),
    ingress: { name: str(first?.name), cid: num(first?.cid), kind: kindName(first?.kind), account: ingressAccount, ...(str(first?.error) ? { error: str(first?.error) } : {}) },
    egress: [],
    streams: [],
    crossings: [],
  };
  for (const s of steps.slice(1)) {
    const type = str(s.type);
    if (type === 'eg') {
      view.egress.push({
        name: str(s.name),
        cid: num(s.cid),
        kind: kindName(s.kind),
        // The server names the account of an egress only when it differs from the ingress's.
        account: str(s.acc) || ingressAccount,
        subscription: str(s.sub),
        ...(str(s.queue) ? { queue: str(s.queue) } : {}),
        ...(str(s.error) ? { error: str(s.error) } : {}),
      });
    } else if (type === 'js') {
      view.streams.push({ stream: str(s.stream), subject: str(s.subject), noInterest: s.nointerest === true, ...(str(s.error) ? { error: str(s.error) } : {}) });
    } else if (type === 'sm') {
      view.crossings.push(`mapped to ${str(s.to)}`);
    } else if (type === 'se') {
      view.crossings.push(`exported to account ${str(s.acc)} as ${str(s.to)}`);
    } else if (type === 'si') {
      view.crossings.push(`imported by account ${str(s.acc)}: ${str(s.from)} -> ${str(s.to)}`);
    }
  }
  return view;
}

/** One hop of the timeline with what the server saw of its subject (undefined: no event came back). */
export interface HopServerView {
  offsetMs: number;
  instance: string;
  what: string;
  subject: string;
  server?: ServerView;
}

/** The timeline's hops that went over a subject, each with the server's view of it. */
export function joinServerViews(hops: readonly TimelineHop[], views: ReadonlyMap<string, ServerView>): HopServerView[] {
  const out: HopServerView[] = [];
  for (const hop of hops) {
    const subject = hopSubject(hop);
    if (!subject || !probeable(subject)) continue;
    const server = views.get(subject);
    out.push({ offsetMs: hop.offsetMs, instance: hop.instance, what: hop.what, subject, ...(server ? { server } : {}) });
  }
  return out;
}

function describeConnection(c: TraceConnection): string {
  return `${c.name || `cid ${c.cid}`} (${c.kind === 'client' ? '' : `${c.kind}, `}account ${c.account})`;
}

/** Where the message would go, in a few words: the subscribers, the streams, or nobody. */
export function describeDelivery(v: ServerView): string {
  const parts = [
    ...v.egress.map((e) => `${describeConnection(e)} on ${e.subscription}${e.queue ? ` [queue ${e.queue}]` : ''}${e.error ? ` (error: ${e.error})` : ''}`),
    ...v.streams.map((s) => `stream ${s.stream}${s.noInterest ? ' (no interest)' : ''}${s.error ? ` (error: ${s.error})` : ''}`),
    ...v.crossings,
  ];
  return parts.length > 0 ? parts.join('; ') : 'no subscriber';
}

export const SERVER_VIEW_HEADER = 'OFFSET\tINSTANCE\tWHAT\tSUBJECT\tIN\tTO';

/** The table of `trace --nats-trace`: each hop, the connection the server saw it come in on, and where it would go. */
export function printServerViews(rows: readonly HopServerView[], serverLine: string): string {
  const lines = [SERVER_VIEW_HEADER];
  for (const r of rows) {
    const into = r.server ? describeConnection(r.server.ingress) + (r.server.ingress.error ? ` (error: ${r.server.ingress.error})` : '') : '-';
    const to = r.server ? describeDelivery(r.server) : 'no trace event from the server';
    lines.push([`+${formatMs(r.offsetMs)}`, r.instance, r.what, r.subject, into, to].join('\t'));
  }
  return `${serverLine}\n${tabwrite(lines.join('\n'), TABLE_TABWRITER).replace(/ +$/gm, '')}\n`;
}
