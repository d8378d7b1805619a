/**
 * The CLI's fleet views (`--fleet`, docs/cli.md): what the nodes' answers to
 * a fleet reader say, merged, as pure functions of the replies. NATS has no
 * wildcard publish, so the fleet is found first: every hub server's leaf
 * links (`$SYS.REQ.SERVER.PING.LEAFZ`), each leaf's node told by the
 * JetStream domain of its `$JS.<domain>.API` interest (@app/nats
 * nodeDomain); then each node is asked on its own subjects (fleet-reader.ts):
 * its status manager's PodList (`kubelet.<node>.service.status-manager.pods`)
 * and each service's ServiceInfo (`kubelet.<node>.service.<service>.info`).
 * A reply that is not what its subject promises (an error reply, a foreign
 * shape) is counted, never trusted.
 */
import { Subjects, nodeFromToken, type Pod, type PodList, type ServiceInfo } from '@app/contracts';
import { HUB_LEAFZ_SUBJECT, leafNodeOf, nodeDomain } from '@app/nats';
import { TABLE_TABWRITER, tabwrite } from './tabwriter.js';

/** A node's status manager's pods (a fleet read: @app/nats fleetServiceReads). */
export const fleetPodsSubject = (node: string): string => Subjects.serviceCommand.build(node, 'status-manager', 'pods');
/** Every hub server's leaf connections. */
export const FLEET_LEAFZ_SUBJECT = HUB_LEAFZ_SUBJECT;

const isRecord = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/** An error reply's description (`{"error":{"code","description"}}`), or undefined for anything else. */
function errorReply(v: unknown): string | undefined {
  if (!isRecord(v) || !isRecord(v['error'])) return undefined;
  const e = v['error'];
  return `${typeof e['code'] === 'string' ? `${e['code']}: ` : ''}${typeof e['description'] === 'string' ? e['description'] : 'error'}`;
}

/** A pod of the fleet and the node that runs it (its spec.nodeName, as the node's status manager reports it). */
export interface FleetPod {
  node: string;
  pod: Pod;
}

/** The status managers' answers, merged. */
export interface FleetPods {
  /** Every pod once (by UID: a pod two replies carry is listed once), by node, namespace, name. */
  pods: FleetPod[];
  /** The nodes whose status manager answered with a PodList. */
  answered: string[];
  /** The nodes asked that did not (none answered, or not with a PodList). */
  silent: string[];
  /** What the other replies said (error replies, replies that are no PodList), by node. */
  errors: string[];
}

/** What one node's status manager answered (no reply: an empty list). */
export interface NodeReplies {
  node: string;
  replies: unknown[];
}

function isPodList(v: unknown): v is PodList {
  return isRecord(v) && Array.isArray(v['items']) && v['items'].every((p) => isRecord(p) && isRecord(p['metadata']) && isRecord(p['spec']));
}

const byNodeThenName = (a: FleetPod, b: FleetPod) =>
  a.node.localeCompare(b.node) || (a.pod.metadata.namespace ?? '').localeCompare(b.pod.metadata.namespace ?? '') || (a.pod.metadata.name ?? '').localeCompare(b.pod.metadata.name ?? '');

/** Merges each node's answers to `kubelet.<node>.service.status-manager.pods`; a pod's node is its spec.nodeName, else the node asked. */
export function mergeFleetPods(perNode: readonly NodeReplies[]): FleetPods {
  const seen = new Set<string>();
  const pods: FleetPod[] = [];
  const errors: string[] = [];
  const answered: string[] = [];
  const silent: string[] = [];
  for (const { node: asked, replies } of perNode) {
    let listed = false;
    for (const reply of replies) {
      if (!isPodList(reply)) {
        errors.push(`node ${asked}: ${errorReply(reply) ?? 'a reply that is no PodList'}`);
        continue;
      }
      listed = true;
      for (const pod of reply.items) {
        const node = pod.spec.nodeName || asked;
        const key = pod.metadata.uid ?? `${node}/${pod.metadata.namespace ?? ''}/${pod.metadata.name ?? ''}`;
        if (seen.has(key)) continue;
        seen.add(key);
        pods.push({ node, pod });
      }
    }
    (listed ? answered : silent).push(asked);
  }
  return { pods: pods.sort(byNodeThenName), answered: answered.sort(), silent: silent.sort(), errors };
}

/** The ServiceInfo replies among `replies` (others dropped). */
export function serviceInfosOf(replies: readonly unknown[]): ServiceInfo[] {
  return replies.filter(
    (r): r is ServiceInfo => isRecord(r) && r['type'] === 'kubelet.v1.service_info' && typeof r['node'] === 'string' && typeof r['service'] === 'string' && typeof r['instance'] === 'string',
  );
}

/** The pod `ref` names among the fleet's pods: by UID, or by namespace and name. */
export function findFleetPods(pods: readonly FleetPod[], ref: { uid: string } | { namespace: string; name: string }): FleetPod[] {
  return pods.filter((p) => ('uid' in ref ? p.pod.metadata.uid === ref.uid : p.pod.metadata.namespace === ref.namespace && p.pod.metadata.name === ref.name));
}

/** `get pods --fleet`'s filter: one namespace (or all) and, with a name, that pod only. */
export function selectFleetPods(pods: readonly FleetPod[], opts: { namespace: string; allNamespaces: boolean; name?: string }): FleetPod[] {
  return pods.filter((p) => (opts.allNamespaces || p.pod.metadata.namespace === opts.namespace) && (opts.name === undefined || p.pod.metadata.name === opts.name));
}

/** One leaf connection of one hub server (LEAFZ's `data.leafs[]`). */
export interface LeafLinkRow {
  hubServer: string;
  /** The leaf node's server name. */
  name: string;
  account: string;
  ip: string;
  port: number;
  rtt: string;
  inMsgs: number;
  outMsgs: number;
  /** The leaf's JetStream domain, from the `$JS.<domain>.API` interest it sends the hub; undefined when it sends none. */
  domain: string | undefined;
  /** The node whose domain that is (one of the nodes whose services answered); undefined when none is. */
  node: string | undefined;
}

/** One node of the fleet: its service instances and its leaf link. */
export interface FleetNodeRow {
  node: string;
  domain: string;
  services: { service: string; instance: string; version: string; role: string }[];
  /** The hub servers its leaf node is connected to (none: no link seen). */
  leafLinks: string[];
}

export interface FleetTopology {
  nodes: FleetNodeRow[];
  leafs: LeafLinkRow[];
  /** The hub servers that answered LEAFZ. */
  hubServers: string[];
  /** What does not add up: a node whose services answer without a leaf link, a leaf link no node's services answer behind. */
  notes: string[];
}

const num = (v: unknown): number => (typeof v === 'number' ? v : 0);
const str = (v: unknown): string => (typeof v === 'string' ? v : '');

/** The leaf's JetStream domain: its node's (@app/nats leafNodeOf, nodeDomain). */
function leafDomain(subscriptions: unknown): string | undefined {
  const node = leafNodeOf(subscriptions);
  return node === undefined ? undefined : nodeDomain(node);
}

/** The leaf links the LEAFZ replies list (`{server:{name}, data:{leafs:[…]}}`, asked with subscriptions), by hub server. */
export function leafLinksOf(replies: readonly unknown[]): { hubServers: string[]; leafs: Omit<LeafLinkRow, 'node'>[] } {
  const hubServers: string[] = [];
  const leafs: Omit<LeafLinkRow, 'node'>[] = [];
  for (const r of replies) {
    if (!isRecord(r) || !isRecord(r['server']) || !isRecord(r['data'])) continue;
    const hubServer = str(r['server']['name']);
    hubServers.push(hubServer);
    const list = r['data']['leafs'];
    for (const l of Array.isArray(list) ? list : []) {
      if (!isRecord(l)) continue;
      leafs.push({ hubServer, name: str(l['name']), account: str(l['account']), ip: str(l['ip']), port: num(l['port']), rtt: str(l['rtt']), inMsgs: num(l['in_msgs']), outMsgs: num(l['out_msgs']), domain: leafDomain(l['subscriptions_list']) });
    }
  }
  const sort = <T extends { hubServer: string; name: string }>(xs: T[]) => xs.sort((a, b) => a.hubServer.localeCompare(b.hubServer) || a.name.localeCompare(b.name));
  return { hubServers: hubServers.sort(), leafs: sort(leafs) };
}

/**
 * The nodes to ask: one per JetStream domain the leaf links carry (a node's
 * domain is its node token: nodeFromToken gives its name back), and the
 * nodes named with --node, once each, sorted.
 */
export function fleetNodesOf(leafzReplies: readonly unknown[], named: readonly string[] = []): string[] {
  const domains = leafLinksOf(leafzReplies).leafs.flatMap((l) => (l.domain !== undefined ? [l.domain] : []));
  const nodes = new Map<string, string>();
  for (const d of domains) nodes.set(d, nodeFromToken(d));
  for (const n of named) nodes.set(nodeDomain(n), n);
  return [...nodes.values()].sort();
}

/**
 * The fleet as its services and the hub see it. A leaf link belongs to the
 * node whose JetStream domain (nodeDomain) it carries; a node whose services
 * answered but that has no link, and a link behind which no service
 * answered, are each said in `notes`.
 */
export function buildFleetTopology(infoReplies: readonly unknown[], leafzReplies: readonly unknown[]): FleetTopology {
  const infos = serviceInfosOf(infoReplies);
  const { hubServers, leafs: links } = leafLinksOf(leafzReplies);
  const answering = [...new Set(infos.map((i) => i.node))].sort();
  const byDomain = new Map(answering.map((n) => [nodeDomain(n), n]));
  const leafs: LeafLinkRow[] = links.map((l) => ({ ...l, node: l.domain !== undefined ? byDomain.get(l.domain) : undefined }));
  const nodes: FleetNodeRow[] = answering.map((node) => ({
    node,
    domain: nodeDomain(node),
    services: infos
      .filter((i) => i.node === node)
      .map((i) => ({ service: i.service, instance: i.instance, version: i.version, role: i.leadership?.role ?? '-' }))
      .sort((a, b) => a.service.localeCompare(b.service) || a.instance.localeCompare(b.instance)),
    leafLinks: leafs.filter((l) => l.node === node).map((l) => l.hubServer),
  }));
  const notes: string[] = [];
  for (const n of nodes) if (n.leafLinks.length === 0) notes.push(`node ${n.node}: its services answer, but no hub server lists a leaf link with its JetStream domain "${n.domain}"`);
  for (const n of nodes) if (n.leafLinks.length > 1) notes.push(`node ${n.node}: ${n.leafLinks.length} leaf links (${n.leafLinks.join(', ')})`);
  for (const l of leafs) {
    if (l.node === undefined) {
      notes.push(`leaf link ${l.name || '(unnamed)'} on ${l.hubServer}${l.domain !== undefined ? ` (JetStream domain "${l.domain}")` : ' (no JetStream domain)'}: no service of its node answered`);
    }
  }
  return { nodes, leafs, hubServers, notes };
}

/** `topology --fleet`'s table: a row per service instance of each node, then a row per leaf link, then what does not add up. */
export function printFleetTopology(t: FleetTopology): string {
  const services = ['NODE\tDOMAIN\tSERVICE\tINSTANCE\tVERSION\tROLE\tLEAF LINK'];
  for (const n of t.nodes) {
    for (const s of n.services) services.push([n.node, n.domain, s.service, s.instance, s.version || '-', s.role, n.leafLinks.join(',') || '<none>'].join('\t'));
  }
  const leafs = ['HUB SERVER\tLEAF\tNODE\tACCOUNT\tADDRESS\tRTT\tIN MSGS\tOUT MSGS'];
  for (const l of t.leafs) leafs.push([l.hubServer, l.name, l.node ?? '<none>', l.account, `${l.ip}:${l.port}`, l.rtt, l.inMsgs, l.outMsgs].join('\t'));
  const summary = `${t.nodes.length} node${t.nodes.length === 1 ? '' : 's'}, ${t.leafs.length} leaf link${t.leafs.length === 1 ? '' : 's'}, ${t.hubServers.length} hub server${t.hubServers.length === 1 ? '' : 's'} answered (${t.hubServers.join(', ')})`;
  return `${tabwrite(`${services.join('\n')}\n`, TABLE_TABWRITER)}\n${tabwrite(`${leafs.join('\n')}\n`, TABLE_TABWRITER)}\n${[summary, ...t.notes].join('\n')}\n`;
}
