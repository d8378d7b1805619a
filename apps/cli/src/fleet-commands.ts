/**
 * What `trace --fleet`, `get pods --fleet` and `topology --fleet` ask the
 * fleet, through the FleetReader port (fleet-reader.ts reads it over the
 * hub; the spec's fake answers as told), and the errors that name what is
 * wrong: no node answered, the pod is on none of the nodes that did, a
 * node's JetStream domain is unreachable.
 */
import type { TraceRecord } from '@app/tracing';
import { FLEET_INFO_SUBJECT, FLEET_PODS_SUBJECT, buildFleetTopology, fleetNodes, findFleetPods, mergeFleetPods, serviceInfosOf, type FleetPods, type FleetTopology } from './fleet.js';
import { looksLikeUid, podRef } from './trace.js';

/** The fleet as the hub shows it to a fleet reader. Each request-many collects the replies for a bounded time (fleet-reader.ts). */
export abstract class FleetReader {
  /** Where the hub is (its client URLs), for the errors. */
  abstract readonly where: string;
  /** Every node's status manager's answer to `kubelet.*.service.status-manager.pods` (a PodList, or an error reply). */
  abstract podLists(): Promise<unknown[]>;
  /** Every service instance's answer to `kubelet.*.service.*.info` (a ServiceInfo). */
  abstract serviceInfos(): Promise<unknown[]>;
  /** Every hub server's answer to `$SYS.REQ.SERVER.PING.LEAFZ` (its leaf links, with their subscriptions). */
  abstract leafLinks(): Promise<unknown[]>;
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

function noNodeAnswered(reader: FleetReader, subject: string): Error {
  return new Error(`no node answered ${subject} on the hub at ${reader.where} (are the nodes' leaf links up? topology --fleet lists them; --nats is the hub's client URLs)`);
}

const nodeList = (nodes: readonly string[]) => (nodes.length > 0 ? ` (${nodes.join(', ')})` : '');

/** `get pods --fleet`: every node's pods; an error when no status manager answered. */
export async function fleetPods(reader: FleetReader): Promise<FleetPods> {
  const merged = mergeFleetPods(await reader.podLists());
  if (merged.answered === 0) throw noNodeAnswered(reader, FLEET_PODS_SUBJECT);
  return merged;
}

/** `topology --fleet`: every node's services and the hub's leaf links; an error when neither answered. */
export async function fleetTopology(reader: FleetReader): Promise<FleetTopology> {
  const [infos, leafz] = await Promise.all([reader.serviceInfos(), reader.leafLinks()]);
  const t = buildFleetTopology(infos, leafz);
  if (t.nodes.length === 0 && t.hubServers.length === 0) throw noNodeAnswered(reader, FLEET_INFO_SUBJECT);
  return t;
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
 * no status manager lists any more (a pod deleted, its records kept) is
 * looked for in every node's domain, the nodes being those whose services
 * answer.
 */
export async function fleetTrace(reader: FleetReader, arg: string, namespace: string): Promise<FleetTrace> {
  const [lists, infos] = await Promise.all([reader.podLists(), reader.serviceInfos()]);
  const pods = mergeFleetPods(lists);
  const nodes = fleetNodes(serviceInfosOf(infos), pods);
  const ref = looksLikeUid(arg) ? { uid: arg } : podRef(arg, namespace);
  if (pods.answered === 0 && ('name' in ref || nodes.length === 0)) throw noNodeAnswered(reader, FLEET_PODS_SUBJECT);
  const found = findFleetPods(pods.pods, ref);
  if (found.length > 1) throw new Error(`pods "${arg}" is on ${found.length} nodes (${found.map((p) => p.node).join(', ')}): give its UID`);
  const pod = found[0];
  if (pod?.pod.metadata.uid) {
    const { records, rejected } = await reader.podTrace(pod.pod.metadata.uid, pod.node);
    if (records.length === 0) throw new Error(`no trace records for pod ${pod.pod.metadata.uid} on node ${pod.node} (TRACING=off, or older than TRACE_MAX_AGE)`);
    return { uid: pod.pod.metadata.uid, node: pod.node, records, rejected };
  }
  if ('name' in ref) throw new Error(`pods "${ref.name}" not found in namespace "${ref.namespace}" on any of the ${pods.answered} node(s) that answered${nodeList(nodes)}`);
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
