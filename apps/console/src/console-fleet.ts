/**
 * The console's fleet page (issue 30; ours, upstream has none: the nearest
 * is `kubectl get nodes` beside `kubectl get pods -A -o wide`): every node
 * that answers on the hub, its Ready condition as the node itself computes
 * it, its pods and the services that answer, read through FleetReads at
 * each refresh of the page.
 *
 *  - A node is one linked to the hub (its leaf link in LEAFZ), asked by
 *    name; its services are the instances that answer
 *    `kubelet.<node>.service.<service>.info` within the bound. A node seen
 *    before, or linked, that answers nothing now (its leaf link cut, its
 *    NATS down, its services gone) stays in the table as Unknown, as the
 *    node lifecycle controller marks a node whose kubelet stopped posting
 *    (NodeStatusUnknown), with its pods as last read; once it answers
 *    again, the next refresh shows it as it says.
 *  - Ready is the Ready condition the node's leading node-status computed
 *    (Subjects.nodeConditions); a node whose node-status does not answer, or
 *    keeps no Node (no apiserver), is Unknown too, reachable.
 *  - The pods are the leading status manager's list (a standby's when no
 *    leader answered): READY as `kubectl get pods` counts it.
 *
 * Pure but for the memory of the nodes seen: fleetNodes() is the whole
 * decision; ConsoleFleet keeps what it returned for the next refresh.
 */
import { Clock } from '@app/clock';
import type { NodeCondition, NodeConditionsMessage, Pod, PodList, ServiceInfo } from '@app/contracts';
import { parseConnectionName } from '@app/nats';
import type { FleetAnswer, FleetReads } from './ports.js';

/** A pod as the fleet table shows it. */
export interface FleetPod {
  namespace: string;
  name: string;
  phase: string;
  /** Ready containers / containers, as `kubectl get pods` READY. */
  ready: string;
}

/** A row of the fleet table. */
export interface FleetNode {
  name: string;
  /** Whether anything on it answered this refresh. */
  reachable: boolean;
  /** Whether its leaf node is linked to the hub (LEAFZ), answering or not. */
  linked: boolean;
  /** The Ready condition's status: Unknown when the node did not say (or could not). */
  ready: 'True' | 'False' | 'Unknown';
  reason: string;
  message: string;
  /** The services that answered, with how many instances each; none when unreachable. */
  services: { service: string; instances: number }[];
  /** The pods as the node last said them (unreachable: as it said them when it last answered). */
  pods: FleetPod[];
  /** When it last answered (ms since the epoch, the console's clock; 0: never). */
  lastSeen: number;
}

/** What GET /console/fleet/nodes answers. */
export type FleetView =
  | { enabled: false; message: string }
  | { enabled: true; nodes: FleetNode[]; readAt: number; boundMs: number; error?: string };

/** What one refresh heard. */
export interface FleetAnswers {
  /** The nodes linked to the hub (LEAFZ). */
  linked: readonly string[];
  infos: readonly ServiceInfo[];
  pods: readonly FleetAnswer<PodList>[];
  conditions: readonly NodeConditionsMessage[];
}

/** READY: ready containers / containers (the page's pod-columns podReady, on this side). */
function podReady(p: Pod): string {
  const total = p.spec?.containers.length ?? 0;
  const ready = (p.status?.containerStatuses ?? []).filter((c) => c.ready).length;
  return `${ready}/${total}`;
}

function fleetPods(list: PodList): FleetPod[] {
  return list.items
    .map((p) => ({ namespace: p.metadata.namespace ?? 'default', name: p.metadata.name ?? '', phase: p.status?.phase ?? 'Pending', ready: podReady(p) }))
    .sort((a, b) => `${a.namespace}/${a.name}`.localeCompare(`${b.namespace}/${b.name}`));
}

/** The leading status manager's list for `node`, else any instance's of that node. */
function podsOf(node: string, infos: readonly ServiceInfo[], answers: readonly FleetAnswer<PodList>[]): PodList | undefined {
  const leader = infos.find((i) => i.node === node && i.service === 'status-manager' && i.leadership?.role === 'leader');
  const ofNode = answers.filter((a) => parseConnectionName(a.sender)?.node === node);
  return (ofNode.find((a) => leader !== undefined && a.sender === leader.connectionName) ?? ofNode[0])?.body;
}

/** The Ready condition as the node's leading node-status says it; Unknown with why when none says it. */
function readyOf(node: string, conditions: readonly NodeConditionsMessage[]): Pick<FleetNode, 'ready' | 'reason' | 'message'> {
  const ofNode = conditions.filter((c) => c.node === node);
  if (ofNode.length === 0) return { ready: 'Unknown', reason: 'NodeStatusNotAnswering', message: 'node-status did not answer for the Node\'s conditions' };
  const leading = ofNode.find((c) => c.leading);
  const ready: NodeCondition | undefined = leading?.conditions.find((c) => c.type === 'Ready');
  if (!leading) return { ready: 'Unknown', reason: 'NoLeader', message: 'no node-status instance leads: none keeps the Node' };
  if (!ready) return { ready: 'Unknown', reason: 'NoNodeStatus', message: 'node-status keeps no Node (no apiserver, or not registered yet)' };
  const status = ready.status === 'True' || ready.status === 'False' ? ready.status : 'Unknown';
  return { ready: status, reason: ready.reason ?? '', message: ready.message ?? '' };
}

/**
 * The table after one refresh: the nodes that answered, as they answered,
 * and the nodes `previous` had that did not, as Unknown (unreachable).
 * Sorted by name.
 */
export function fleetNodes(answers: FleetAnswers, previous: readonly FleetNode[], now: number, boundMs: number): FleetNode[] {
  const answering = new Set<string>([
    ...answers.infos.map((i) => i.node),
    ...answers.conditions.map((c) => c.node),
    ...answers.pods.flatMap((a) => parseConnectionName(a.sender)?.node ?? []),
  ]);
  const linked = new Set(answers.linked);
  const before = new Map(previous.map((p) => [p.name, p]));
  const rows = new Map<string, FleetNode>();
  for (const name of answering) {
    const counts = new Map<string, number>();
    for (const i of answers.infos) if (i.node === name) counts.set(i.service, (counts.get(i.service) ?? 0) + 1);
    const pods = podsOf(name, answers.infos, answers.pods);
    rows.set(name, {
      name,
      reachable: true,
      linked: true,
      ...readyOf(name, answers.conditions),
      services: [...counts].map(([service, instances]) => ({ service, instances })).sort((a, b) => a.service.localeCompare(b.service)),
      // No status manager answered: the pods as it last said them.
      pods: pods ? fleetPods(pods) : (before.get(name)?.pods ?? []),
      lastSeen: now,
    });
  }
  // Seen before or linked, and silent now: Unknown, with the pods as last read.
  for (const name of new Set([...before.keys(), ...linked])) {
    if (rows.has(name)) continue;
    const p = before.get(name);
    rows.set(name, {
      name,
      reachable: false,
      linked: linked.has(name),
      ready: 'Unknown',
      reason: 'NodeStatusUnknown',
      message: linked.has(name)
        ? `linked to the hub, but nothing on the node answered within ${boundMs} ms`
        : `no answer from the node within ${boundMs} ms (its link to the hub cut, or its NATS down)`,
      services: [],
      pods: p?.pods ?? [],
      lastSeen: p?.lastSeen ?? 0,
    });
  }
  return [...rows.values()].sort((a, b) => a.name.localeCompare(b.name));
}

/** The fleet page's reads: one refresh at a time (a page asking during one gets its result), the nodes remembered between. */
export class ConsoleFleet {
  private nodes: FleetNode[] = [];
  private inFlight: Promise<FleetView> | undefined;

  constructor(
    /** Undefined: FLEET_NATS_URL is unset. */
    private readonly reads: FleetReads | undefined,
    private readonly clock: Clock,
  ) {}

  view(): Promise<FleetView> {
    if (!this.reads) return Promise.resolve({ enabled: false, message: FLEET_OFF });
    this.inFlight ??= this.refresh(this.reads).finally(() => (this.inFlight = undefined));
    return this.inFlight;
  }

  private async refresh(reads: FleetReads): Promise<FleetView> {
    let answers: FleetAnswers;
    try {
      answers = await readFleet(reads);
    } catch (err) {
      // The hub itself cannot be asked: every node is unreachable from here.
      const now = this.clock.now();
      this.nodes = fleetNodes({ linked: [], infos: [], pods: [], conditions: [] }, this.nodes, now, reads.boundMs);
      return { enabled: true, nodes: this.nodes, readAt: now, boundMs: reads.boundMs, error: `reading the fleet from the hub: ${(err as Error).message}` };
    }
    const now = this.clock.now();
    this.nodes = fleetNodes(answers, this.nodes, now, reads.boundMs);
    return { enabled: true, nodes: this.nodes, readAt: now, boundMs: reads.boundMs };
  }
}

/** One refresh: the linked nodes, then each one's services, pods and conditions, all at once. */
async function readFleet(reads: FleetReads): Promise<FleetAnswers> {
  const linked = await reads.linkedNodes();
  const each = await Promise.all(linked.map((node) => Promise.all([reads.serviceInfos(node), reads.podLists(node), reads.nodeConditions(node)])));
  return { linked, infos: each.flatMap((e) => e[0]), pods: each.flatMap((e) => e[1]), conditions: each.flatMap((e) => e[2]) };
}

/** What the page says when the fleet page is off. */
export const FLEET_OFF =
  "The fleet page is off: set FLEET_NATS_URL to the hub's URLs (comma-separated) and FLEET_NATS_PASSWORD_FILE to a file holding the fleet reader's password (user fleet) in the console's environment, then restart it (docs/configuration.md, docs/fleet.md).";
