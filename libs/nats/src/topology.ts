/**
 * The node's topology (`kubelet-split topology`, the console's graph): which service instance subscribes to which
 * subjects and publishes to which, from NATS monitoring, as a pure function
 * of two connz samples (what `/connz?subs=detail` shows, asked over NATS:
 * sampleMonitoring) and the account's totals.
 *
 * A connection is a service instance when its name is `<service>@<node>#<instance>`
 * (libs/nats connectionName). Each subscription subject is mapped back to a
 * subject family of libs/contracts Subjects (the most specific family whose
 * any-node subject covers it); a subject no family covers is UNDOCUMENTED.
 * NATS monitoring counts no publishes per subject, so what an instance
 * publishes is derived from the design's table (libs/nats NATS_ACCESS) and
 * marked `derived`; its message counts are the connection's own in/out
 * totals, and the rates come from the two samples.
 */
import { SERVICE_NAMES, type ServiceName } from '@app/contracts';
import { MONITORING_SUBJECTS, NATS_ACCESS, familySubject, type SubjectFamily } from './permissions.js';

/** What `/connz?subs=detail` gives (the fields used). */
export interface Connz {
  [field: string]: unknown;
  now: string;
  connections: ConnzConnection[];
}

export interface ConnzConnection {
  [field: string]: unknown;
  cid: number;
  name?: string;
  /** The NATS user it authenticated as (asked with `auth`). */
  authorized_user?: string;
  in_msgs: number;
  out_msgs: number;
  in_bytes: number;
  out_bytes: number;
  subscriptions_list_detail?: { subject: string; qgroup?: string; sid: string; msgs: number; cid?: number }[];
  subscriptions_list?: string[];
}

/** The account's subscription count and JetStream totals, when asked. */
export interface ServerTotals {
  subscriptions?: number;
  streams?: number;
  consumers?: number;
  messages?: number;
  bytes?: number;
}

/** The family a subject belongs to: a libs/contracts Subjects family, an instance's reply inbox, or UNDOCUMENTED. */
export type SubjectKind = SubjectFamily | 'serviceInfo' | 'serviceCommand' | 'inbox' | 'UNDOCUMENTED';

export interface Subscription {
  subject: string;
  family: SubjectKind;
  queue?: string;
  /** Messages delivered to this subscription so far. */
  msgs: number;
}

export interface Publication {
  subject: string;
  family: SubjectFamily;
  /** How: an event or command sent, a request asked, or the replies to a request served. */
  how: 'publishes' | 'requests' | 'replies';
  /** The only methods (last tokens) it may ask, when the design grants some of the family's subjects only. */
  only?: string[];
  /** Always true: NATS monitoring has no per-subject publish counts; this comes from NATS_ACCESS. */
  derived: true;
}

export interface InstanceTopology {
  service: string;
  node: string;
  instance: string;
  cid: number;
  /** The connection's name as NATS has it. */
  name: string;
  inMsgs: number;
  outMsgs: number;
  /** Messages per second between the two samples (in: from the client; out: to it). */
  inRate: number;
  outRate: number;
  subscribes: Subscription[];
  publishes: Publication[];
}

export interface Topology {
  instances: InstanceTopology[];
  /** Connections whose name is not `<service>@<node>#<instance>` (tools, the CLI). */
  others: { cid: number; name: string; subscriptions: number }[];
  /** Every (instance, subject) subscription no family covers. */
  undocumented: { instance: string; subject: string }[];
  /** Seconds between the two samples. */
  intervalSeconds: number;
  totals: ServerTotals;
}

/** `<service>@<node>#<instance>` back to its parts. */
export function parseConnectionName(name: string | undefined): { service: string; node: string; instance: string } | undefined {
  const m = /^([^@#]+)@([^@#]+)#([^@#]+)$/.exec(name ?? '');
  return m ? { service: m[1] ?? '', node: m[2] ?? '', instance: m[3] ?? '' } : undefined;
}

/** Every family of the design's table; a family added to libs/contracts without a line here is a compile error. */
const FAMILY_SET: Record<SubjectFamily, true> = { podUpdate: true, sourcesReady: true, sourcesSnapshot: true, pleg: true, plegInspect: true, probeResult: true, work: true, workDone: true, status: true, prober: true, events: true, criRuntime: true, criImage: true, criEvents: true, criEventsStatus: true, apiObject: true, serviceAccountToken: true, serviceList: true, podResync: true, podEvents: true, nodeConditions: true, trace: true };
const FAMILIES = Object.keys(FAMILY_SET) as SubjectFamily[];

/** Each family's any-node subject (libs/nats familySubject, from the contracts' patterns). */
const FAMILY_SUBJECTS: readonly { family: SubjectKind; subject: string }[] = [
  ...FAMILIES.map((family) => ({ family, subject: familySubject(family) })),
  { family: 'serviceInfo', subject: 'kubelet.*.service.*.info' },
  { family: 'serviceCommand', subject: 'kubelet.*.service.*.*' },
];

/** Whether every subject `sub` matches is matched by `wildcard` (both NATS subjects, maybe with `*` and `>`). */
export function covers(wildcard: string, sub: string): boolean {
  const w = wildcard.split('.');
  const s = sub.split('.');
  for (let i = 0; i < w.length; i++) {
    if (w[i] === '>') return s.length > i;
    if (i >= s.length) return false;
    if (s[i] === '>') return false;
    if (w[i] !== '*' && w[i] !== s[i]) return false;
  }
  return w.length === s.length;
}

const literalTokens = (subject: string) => subject.split('.').filter((t) => t !== '*' && t !== '>').length;

/** The family of a subscription subject: the most specific that covers it; a reply inbox is `inbox`. */
export function classifySubject(subject: string): SubjectKind {
  if (/^_INBOX(_[^.]+)?\./.test(subject)) return 'inbox';
  const matching = FAMILY_SUBJECTS.filter((f) => covers(f.subject, subject));
  if (matching.length === 0) return 'UNDOCUMENTED';
  return matching.reduce((best, f) => (literalTokens(f.subject) > literalTokens(best.subject) ? f : best)).family;
}

const onNode = (subject: string, node: string) => subject.replace(/^(kubelet|cri)\.\*\./, `$1.${node.replaceAll('.', '_')}.`);

/** What a service publishes according to the design (NATS_ACCESS): its events and commands, its requests, its replies. */
export function designedPublications(service: string, node: string): Publication[] {
  if (!(SERVICE_NAMES as readonly string[]).includes(service)) return [];
  const access = NATS_ACCESS[service as ServiceName];
  const out: Publication[] = access.publishes.map((family) => ({ subject: onNode(familySubject(family), node), family, how: 'publishes', derived: true }));
  for (const r of access.requests) {
    if (typeof r === 'string') out.push({ subject: onNode(familySubject(r), node), family: r, how: 'requests', derived: true });
    else out.push({ subject: `${onNode(familySubject(r.family), node)} (${r.only.length} methods)`, family: r.family, how: 'requests', only: [...r.only], derived: true });
  }
  for (const family of access.serves) out.push({ subject: `${onNode(familySubject(family), node)} (replies to the asker's inbox)`, family, how: 'replies', derived: true });
  return out;
}

/** The topology from two /connz samples (`before` may be the same as `after`: rates are then 0). */
export function buildTopology(before: Connz, after: Connz, totals: ServerTotals = {}): Topology {
  const dt = Math.max(0, (Date.parse(after.now) - Date.parse(before.now)) / 1000);
  const earlier = new Map(before.connections.map((c) => [c.cid, c]));
  const instances: InstanceTopology[] = [];
  const others: Topology['others'] = [];
  for (const c of after.connections) {
    const id = parseConnectionName(c.name);
    const subs: { subject: string; qgroup?: string; msgs: number }[] = c.subscriptions_list_detail ?? (c.subscriptions_list ?? []).map((subject) => ({ subject, msgs: 0 }));
    if (!id) {
      others.push({ cid: c.cid, name: c.name ?? '', subscriptions: subs.length });
      continue;
    }
    const prev = earlier.get(c.cid);
    const rate = (now: number, then: number | undefined) => (dt > 0 && then !== undefined ? Math.max(0, now - then) / dt : 0);
    instances.push({
      ...id,
      cid: c.cid,
      name: c.name ?? '',
      inMsgs: c.in_msgs,
      outMsgs: c.out_msgs,
      inRate: rate(c.in_msgs, prev?.in_msgs),
      outRate: rate(c.out_msgs, prev?.out_msgs),
      subscribes: subs
        .map((s) => ({ subject: s.subject, family: classifySubject(s.subject), ...(s.qgroup ? { queue: s.qgroup } : {}), msgs: s.msgs }))
        .sort((a, b) => a.subject.localeCompare(b.subject)),
      publishes: designedPublications(id.service, id.node),
    });
  }
  instances.sort((a, b) => serviceOrder(a.service) - serviceOrder(b.service) || a.node.localeCompare(b.node) || a.instance.localeCompare(b.instance) || a.cid - b.cid);
  const undocumented = instances.flatMap((i) => i.subscribes.filter((s) => s.family === 'UNDOCUMENTED').map((s) => ({ instance: i.name, subject: s.subject })));
  return { instances, others, undocumented, intervalSeconds: dt, totals };
}

function serviceOrder(service: string): number {
  const i = (SERVICE_NAMES as readonly string[]).indexOf(service);
  return i < 0 ? SERVICE_NAMES.length : i;
}

export const instanceLabel = (i: Pick<InstanceTopology, 'service' | 'instance' | 'node'>) => `${i.service}#${i.instance}`;

/** Edges publisher -> subscriber: an instance's designed publications to every instance (same node) subscribing to that family. */
export function topologyEdges(t: Topology): { from: string; to: string; family: string; msgs: number }[] {
  const edges = new Map<string, { from: string; to: string; family: string; msgs: number }>();
  for (const from of t.instances) {
    for (const p of from.publishes) {
      for (const to of t.instances) {
        if (to === from || to.node !== from.node) continue;
        const subs = to.subscribes.filter((s) => s.family === p.family);
        if (subs.length === 0) continue;
        const key = `${instanceLabel(from)}|${instanceLabel(to)}|${p.family}`;
        edges.set(key, { from: instanceLabel(from), to: instanceLabel(to), family: p.family, msgs: subs.reduce((n, s) => n + s.msgs, 0) });
      }
    }
  }
  return [...edges.values()];
}

const mermaidId = (label: string) => label.replace(/[^A-Za-z0-9]/g, '_');

/** Mermaid flowchart text: one node per instance, one edge per (publisher, subscriber, family) with the subscriber's message count. */
export function printTopologyMermaid(t: Topology): string {
  const lines = ['flowchart LR'];
  for (const i of t.instances) lines.push(`  ${mermaidId(instanceLabel(i))}["${instanceLabel(i)}<br/>${i.node}"]`);
  for (const e of topologyEdges(t)) lines.push(`  ${mermaidId(e.from)} -->|"${e.family} (${e.msgs})"| ${mermaidId(e.to)}`);
  return `${lines.join('\n')}\n`;
}

/** Graphviz dot text, the same graph. */
export function printTopologyDot(t: Topology): string {
  const q = (s: string) => JSON.stringify(s);
  const lines = ['digraph topology {', '  rankdir=LR;', '  node [shape=box];'];
  for (const i of t.instances) lines.push(`  ${q(instanceLabel(i))} [label=${q(`${instanceLabel(i)}\n${i.node}`)}];`);
  for (const e of topologyEdges(t)) lines.push(`  ${q(e.from)} -> ${q(e.to)} [label=${q(`${e.family} (${e.msgs})`)}];`);
  lines.push('}');
  return `${lines.join('\n')}\n`;
}

/** One reading of NATS monitoring: the account's connections with their subscriptions, and the totals. */
export interface MonitoringSample {
  connz: Connz;
  totals: ServerTotals;
}

/** What sampleMonitoring needs of a NATS connection: a request and its answer's text (permissions.ts MONITORING_READ). */
export interface MonitoringRequester {
  request(subject: string, payload: string, opts: { timeout: number }): Promise<{ string(): string }>;
}

/**
 * Reads NATS monitoring once, over NATS, as an authenticated user: the
 * account's connections with their subscriptions (`$SYS.REQ.ACCOUNT.PING.CONNZ`,
 * what `/connz?subs=detail` shows, answered by nats-server for the asker's
 * own account only), its subscription count (`.STATZ`) and its JetStream
 * totals (`$JS.API.INFO`). nats-server serves these to every account
 * without a system account being configured; the monitoring HTTP port, which
 * has no authentication, stays off (docs/adr/0029). On a cluster the first
 * server's answer is taken.
 */
export async function sampleMonitoring(nc: MonitoringRequester, timeoutMs = 10_000): Promise<MonitoringSample> {
  const ask = async <T>(subject: string, body: unknown): Promise<T> => {
    let text: string;
    try {
      text = (await nc.request(subject, JSON.stringify(body), { timeout: timeoutMs })).string();
    } catch (err) {
      throw new Error(`NATS monitoring: ${subject}: ${(err as Error).message} (the NATS user must be granted it: permissions.ts readsMonitoring)`);
    }
    const reply = JSON.parse(text) as { data?: T; error?: { description?: string; code?: number } } & T;
    if (reply.error) throw new Error(`NATS monitoring: ${subject}: ${reply.error.description ?? JSON.stringify(reply.error)}`);
    return (subject.startsWith('$SYS.') ? reply.data : reply) as T;
  };
  const connz = await ask<Connz>(MONITORING_SUBJECTS.connz, { subscriptions_detail: true, auth: true, limit: 10_000 });
  const statz = await ask<{ account_statz?: { num_subscriptions?: number }[] }>(MONITORING_SUBJECTS.statz, {});
  const js = await ask<{ streams?: number; consumers?: number; memory?: number; storage?: number }>(MONITORING_SUBJECTS.jetstream, {});
  const subscriptions = statz.account_statz?.[0]?.num_subscriptions;
  const totals: ServerTotals = {
    ...(subscriptions !== undefined ? { subscriptions } : {}),
    ...(js.streams !== undefined ? { streams: js.streams } : {}),
    ...(js.consumers !== undefined ? { consumers: js.consumers } : {}),
    ...(js.memory !== undefined || js.storage !== undefined ? { bytes: (js.memory ?? 0) + (js.storage ?? 0) } : {}),
  };
  return { connz: { ...connz, connections: connz.connections ?? [] }, totals };
}

/** Two samples `intervalMs` apart (`wait` sleeps between them), as a Topology with rates. */
export async function fetchTopology(nc: MonitoringRequester, intervalMs: number, wait: (ms: number) => Promise<void>): Promise<Topology> {
  const before = await sampleMonitoring(nc);
  if (intervalMs <= 0) return buildTopology(before.connz, before.connz, before.totals);
  await wait(intervalMs);
  const after = await sampleMonitoring(nc);
  return buildTopology(before.connz, after.connz, after.totals);
}

/** Only `node`'s instances (and their undocumented subscriptions). */
export function topologyOfNode(t: Topology, node: string): Topology {
  const instances = t.instances.filter((i) => i.node === node);
  return { ...t, instances, undocumented: t.undocumented.filter((u) => instances.some((i) => i.name === u.instance)) };
}
