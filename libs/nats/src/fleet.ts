/**
 * The fleet's NATS fabric (docs/adr/0038-fleet-nats-fabric.md): who may do
 * what on the hub cluster that the nodes' leaf nodes connect to.
 *
 *  - Every node runs its own nats-server, a leaf node of the hub with its own
 *    JetStream domain (`nodeDomain`): its buckets and streams live there, and
 *    its services are the node's users of that server (natsAuthorization for
 *    the one node), as on a node alone.
 *  - The leaf connects to the hub as `leaf@<node>` (leafUserName), in the
 *    hub's one account. Its permissions (leafPermissions, from the leaf's side
 *    as nats-server reads them) let the hub send it only the requests of the
 *    fleet readers for that node (its service info, its status manager's pods
 *    and events, its JetStream domain's API) and let it send the hub only the
 *    answers to the fleet readers' inbox. No other node's subject crosses
 *    the link either way, and none of the node's own traffic (CRI calls,
 *    work, KV writes) is ever announced to the hub.
 *  - Fleet-wide reading is the `fleet` role (FLEET_READER_USER, its inbox
 *    FLEET_INBOX_PREFIX): read-only requests to every node (fleetReaderPermissions),
 *    and the hub's leaf links ($SYS.REQ.SERVER.PING.LEAFZ, imported from the
 *    system account). It cannot write a key, publish work, call the CRI, or
 *    create anything but the trace stream's ephemeral consumers.
 */
import { Subjects, nodeFromToken, nodeToken } from '@app/contracts';
import type { SubjectPermission } from './permissions.js';

/** The fleet reader's user name on the hub (trace, topology --fleet, get pods --fleet, the console's fleet page). */
export const FLEET_READER_USER = 'fleet' as const;
/** Replies to the fleet reader come here; only it may subscribe, and leaf nodes may publish only here. */
export const FLEET_INBOX_PREFIX = '_INBOX_fleet' as const;
/** The hub's JetStream domain (the nodes' are their names: nodeDomain). */
export const HUB_DOMAIN = 'hub' as const;
/** The request a fleet reader sends for every hub server's leaf connections (a system service the hub's account imports). */
export const HUB_LEAFZ_SUBJECT = '$SYS.REQ.SERVER.PING.LEAFZ' as const;
/** The trace stream (@app/tracing TRACE_STREAM), the one stream a fleet reader reads. */
const TRACE_STREAM = 'KUBELET_TRACES';

/** A node's JetStream domain: its node token (`$JS.<domain>.API` reaches the node's JetStream from the hub). */
export function nodeDomain(node: string): string {
  return nodeToken(node);
}

/** The user a node's leaf node connects to the hub as. */
export function leafUserName(node: string): string {
  return `leaf@${nodeToken(node)}`;
}

/** The JetStream API requests a fleet reader makes of `domain` (`*`: every node): the trace stream's reads only. */
function traceReads(domain: string): string[] {
  const api = `$JS.${domain}.API`;
  return [
    `${api}.INFO`,
    `${api}.STREAM.INFO.${TRACE_STREAM}`,
    `${api}.CONSUMER.CREATE.${TRACE_STREAM}.>`,
    `${api}.CONSUMER.INFO.${TRACE_STREAM}.>`,
    `${api}.CONSUMER.MSG.NEXT.${TRACE_STREAM}.>`,
    `${api}.CONSUMER.DELETE.${TRACE_STREAM}.>`,
  ];
}

/** What a fleet reader asks of a node's services, by name: who is there, the status manager's pods and events, the Node's conditions. */
export type FleetServiceRead = 'serviceInfo' | 'pods' | 'podEvents' | 'nodeConditions';

/** The subject of one of the fleet reader's requests for `node` (`*`: every node's, a request-many on the hub). */
export function fleetReadSubject(read: FleetServiceRead, node: string): string {
  const n = node === '*' ? '*' : nodeToken(node);
  const on = (pattern: string) => pattern.replace('{node}', n);
  switch (read) {
    case 'serviceInfo':
      return on(Subjects.serviceInfo.pattern).replace('{service}', '*');
    case 'pods':
      return on(Subjects.serviceCommand.pattern('pods')).replace('{service}', 'status-manager');
    case 'podEvents':
      return on(Subjects.podEvents.pattern);
    case 'nodeConditions':
      return on(Subjects.nodeConditions.pattern);
  }
}

/** The requests a fleet reader makes of a node's services (`*`: every node's): each of FleetServiceRead. */
export function fleetServiceReads(node: string): string[] {
  return (['serviceInfo', 'pods', 'podEvents', 'nodeConditions'] as const).map((read) => fleetReadSubject(read, node));
}

/** The fleet reader's permissions on the hub. */
export function fleetReaderPermissions(): { publish: SubjectPermission; subscribe: SubjectPermission } {
  return {
    publish: { allow: [...fleetServiceReads('*'), ...traceReads('*'), HUB_LEAFZ_SUBJECT], deny: [] },
    subscribe: { allow: [`${FLEET_INBOX_PREFIX}.>`], deny: [] },
  };
}

/**
 * A node's leaf connection on the hub, from the leaf's side: `subscribe` is
 * what the hub may send it (the fleet readers' requests for this node),
 * `publish` what it may send the hub (answers to the fleet readers).
 */
export function leafPermissions(node: string): { publish: SubjectPermission; subscribe: SubjectPermission } {
  return {
    publish: { allow: [`${FLEET_INBOX_PREFIX}.>`], deny: [] },
    subscribe: { allow: [...fleetServiceReads(node), `$JS.${nodeDomain(node)}.API.>`], deny: [] },
  };
}

/**
 * The node behind a leaf link, from the interest it sends the hub (LEAFZ with
 * `subscriptions`: `subscriptions_list`): the node token of its
 * `$JS.<domain>.API.>` (nodeDomain) or `kubelet.<node>.service.` subjects
 * (leafPermissions lets nothing else cross). Undefined when it sends neither.
 */
export function leafNodeOf(subscriptions: unknown): string | undefined {
  if (!Array.isArray(subscriptions)) return undefined;
  for (const s of subscriptions) {
    if (typeof s !== 'string') continue;
    const m = /^\$JS\.([^.*>]+)\.API\./.exec(s) ?? /^kubelet\.([^.*>]+)\.service\./.exec(s);
    if (m?.[1]) return nodeFromToken(m[1]);
  }
  return undefined;
}
