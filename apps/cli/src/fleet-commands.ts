/**
 * What `trace --fleet`, `get pods --fleet` and `topology --fleet` ask the
 * fleet, through the FleetReader port (fleet-reader.ts reads it over the
 * hub; the spec's fake answers as told), and the errors that name what is
 * wrong: no leaf node on the hub, no node answered, the pod is on none of
 * the nodes that did, a node's JetStream domain is unreachable.
 *
 * Each command finds the nodes first (the hub's leaf links, fleetNodesOf;
 * and the nodes named with --node), then asks them all at once.
 */
import { SERVICE_NAMES } from '@app/contracts';
import type { TraceRecord } from '@app/tracing';
import { FLEET_LEAFZ_SUBJECT, buildFleetTopology, findFleetPods, fleetNodesOf, mergeFleetPods, type FleetPods, type FleetTopology } from './fleet.js';
import { looksLikeUid, podRef } from './trace.js';

/** The fleet as the hub shows it to a fleet reader. Each request-many collects the replies for a bounded time (fleet-reader.ts). */
export abstract class FleetReader {
  /** Where the hub is (its client URLs), for the errors. */
  abstract readonly where: string;
  /** Every hub server's answer to `$SYS.REQ.SERVER.PING.LEAFZ` (its leaf links, with their subscriptions). */
  abstract leafLinks(): Promise<unknown[]>;
  /** `node`'s status manager's answers to `kubelet.<node>.service.status-manager.pods` (a PodList, or an error reply; none: []). */
  abstract podLists(node: string): Promise<unknown[]>;
  /** The answers of `node`'s service instances to `kubelet.<node>.service.<service>.info`, for every service `services` names. */
  abstract serviceInfos(node: string, services: readonly string[]): Promise<unknown[]>;
  /** The pod's trace records in `node`'s JetStream domain; throws DomainUnreachableError when the domain does not answer. */
  abstract podTrace(uid: string, node: string): Promise<{ records: TraceRecord[]; rejected: number }>;
}

/** A node's JetStream domain did not answer from the hub (its leaf link down, or no JetStream there). */
export class DomainUnreachableError extends Error {
  constructor(
    readonly node: string,
    readonly domain: string,
    why: string,
  ) {
    super(`node ${node}'s JetStream domain "${domain}" is unreachable from the hub: ${why}`);
  }
}

const nodeList = (nodes: readonly string[]) => (nodes.length > 0 ? ` (${nodes.join(', ')})` : '');

/** The nodes to ask: behind the hub's leaf links, and those `named`; an error when there are none. */
async function findNodes(reader: FleetReader, named: readonly string[]): Promise<{ nodes: string[]; leafz: unknown[] }> {
  const leafz = await reader.leafLinks();
  const nodes = fleetNodesOf(leafz, named);
  if (nodes.length === 0) {
    const servers = leafz.length;
    throw new Error(
      servers === 0
        ? `no hub server answered ${FLEET_LEAFZ_SUBJECT} at ${reader.where} (is --nats the hub's client URLs, and the user the fleet reader?)`
        : `no node is linked to the hub at ${reader.where}: ${servers} hub server(s) answered, none lists a leaf link with a JetStream domain (--node names a node to ask anyway)`,
    );
  }
  return { nodes, leafz };
}

/** Every node's status manager's pods, asked at once. */
async function podsOf(reader: FleetReader, nodes: readonly string[]): Promise<FleetPods> {
  return mergeFleetPods(await Promise.all(nodes.map(async (node) => ({ node, replies: await reader.podLists(node) }))));
}

function noStatusManager(reader: FleetReader, nodes: readonly string[]): Error {
  return new Error(`no node answered: none of the ${nodes.length} node(s) linked to the hub at ${reader.where}${nodeList(nodes)} answered kubelet.<node>.service.status-manager.pods (is its status manager running?)`);
}

/** `get pods --fleet`: every node's pods; an error when no status manager answered. */
export async function fleetPods(reader: FleetReader, named: readonly string[] = []): Promise<FleetPods> {
  const { nodes } = await findNodes(reader, named);
  const merged = await podsOf(reader, nodes);
  if (merged.answered.length === 0) throw noStatusManager(reader, nodes);
  return merged;
}

/** `topology --fleet`: every node's services and the hub's leaf links. */
export async function fleetTopology(reader: FleetReader, named: readonly string[] = []): Promise<FleetTopology> {
  const { nodes, leafz } = await findNodes(reader, named);
  const infos = (await Promise.all(nodes.map((node) => reader.serviceInfos(node, SERVICE_NAMES)))).flat();
  return buildFleetTopology(infos, leafz);
}

/** A pod's trace as read from its node's domain. */
export interface FleetTrace {
  uid: string;
  node: string;
  records: TraceRecord[];
  rejected: number;
}

/**
 * `trace POD --fleet`: the node that runs the pod (its spec.nodeName in the
 * status managers' answers), then its records in that node's domain. A UID
 * no status manager lists (a pod deleted, its records kept) is looked for
 * in every node's domain in turn.
 */
export async function fleetTrace(reader: FleetReader, arg: string, namespace: string, named: readonly string[] = []): Promise<FleetTrace> {
  const { nodes } = await findNodes(reader, named);
  const pods = await podsOf(reader, nodes);
  const ref = looksLikeUid(arg) ? { uid: arg } : podRef(arg, namespace);
  if (pods.answered.length === 0 && 'name' in ref) throw noStatusManager(reader, nodes);
  const found = findFleetPods(pods.pods, ref);
  if (found.length > 1) throw new Error(`pods "${arg}" is on ${found.length} nodes (${found.map((p) => p.node).join(', ')}): give its UID`);
  const pod = found[0];
  if (pod?.pod.metadata.uid) {
    const { records, rejected } = await reader.podTrace(pod.pod.metadata.uid, pod.node);
    if (records.length === 0) throw new Error(`no trace records for pod ${pod.pod.metadata.uid} on node ${pod.node} (TRACING=off, or older than TRACE_MAX_AGE)`);
    return { uid: pod.pod.metadata.uid, node: pod.node, records, rejected };
  }
  if ('name' in ref) {
    const silent = pods.silent.length > 0 ? `; ${pods.silent.length} did not answer (${pods.silent.join(', ')})` : '';
    throw new Error(`pods "${ref.name}" not found in namespace "${ref.namespace}" on any of the ${pods.answered.length} node(s) that answered${nodeList(pods.answered)}${silent}`);
  }
  // A UID: every node's domain, in turn.
  const unreachable: string[] = [];
  for (const node of nodes) {
    try {
      const { records, rejected } = await reader.podTrace(ref.uid, node);
      if (records.length > 0) return { uid: ref.uid, node, records, rejected };
    } catch (err) {
      if (!(err instanceof DomainUnreachableError)) throw err;
      unreachable.push(err.message);
    }
  }
  throw new Error(
    [`no trace records for pod ${ref.uid} on any of ${nodes.length} node(s)${nodeList(nodes)} (unknown pod, TRACING=off, or older than TRACE_MAX_AGE)`, ...unreachable].join('\n  '),
  );
}
