/**
 * The console's pod timeline and topology graph (issue 15; ours, upstream
 * has no console): the same views as `kubelet-split trace` and
 * `kubelet-split topology` (@app/nats buildTimeline, buildTopology), read
 * by status-manager through two narrow ports so that the page needs nothing
 * but status-manager.
 *
 *  - A pod's timeline: its name resolved to its UID from the node's pods
 *    (ConsolePods), its records read from KUBELET_TRACES (PodTraces).
 *  - The topology: NATS monitoring sampled on each request (NatsMonitoring);
 *    the rates are over the time since the previous request's sample, when
 *    that is recent (the page asks every few seconds), else 0.
 */
import { Clock } from '@app/clock';
import { buildTimeline, type Timeline, type TraceRecord } from '@app/tracing';
import { buildTopology, topologyEdges, topologyOfNode, type MonitoringSample, type Topology } from '@app/nats';
import { ConsolePods } from './console-feed.js';

/** Reads a pod's trace records (KUBELET_TRACES, `trace.*.*.<uid>`), only those sent by the service they claim. */
export abstract class PodTraces {
  /** Every record of the pod stored so far, in stream order; none for a pod with none. */
  abstract read(uid: string): Promise<TraceRecord[]>;
}

/** Reads the node's NATS monitoring: the account's connections and subscriptions, and its totals (over NATS). */
export abstract class NatsMonitoring {
  /** One reading, now. */
  abstract sample(): Promise<MonitoringSample>;
}

/** What GET /console/pods/<ns>/<name>/trace answers. */
export interface PodTimeline extends Timeline {
  namespace: string;
  name: string;
}

export class PodNotFoundError extends Error {}

export class ConsoleTimelines {
  constructor(
    private readonly pods: ConsolePods,
    private readonly traces: PodTraces,
  ) {}

  /** The pod's timeline; PodNotFoundError when the node has no such pod. */
  async timeline(namespace: string, name: string): Promise<PodTimeline> {
    const pod = (await this.pods.listPods()).items.find((p) => (p.metadata.namespace ?? 'default') === namespace && p.metadata.name === name);
    const uid = pod?.metadata.uid;
    if (!uid) throw new PodNotFoundError(`pods "${name}" not found in namespace "${namespace}"`);
    return { namespace, name, ...buildTimeline(uid, await this.traces.read(uid)) };
  }
}

/** One edge of the graph: a publisher instance to a subscriber instance, over a subject family. */
export interface TopologyEdge {
  from: string;
  to: string;
  family: string;
  msgs: number;
}

/** What GET /console/topology answers: this node's instances, and the edges between them. */
export interface TopologyGraph extends Topology {
  node: string;
  edges: TopologyEdge[];
}

export class ConsoleTopology {
  private previous: { at: number; sample: MonitoringSample } | undefined;

  constructor(
    private readonly monitoring: NatsMonitoring,
    private readonly clock: Clock,
    private readonly node: string,
    /** A previous sample older than this gives no rates. */
    private readonly rateWindowMs = 60_000,
  ) {}

  async graph(): Promise<TopologyGraph> {
    const now = await this.monitoring.sample();
    const at = this.clock.now();
    const before = this.previous && at - this.previous.at <= this.rateWindowMs ? this.previous.sample : now;
    this.previous = { at, sample: now };
    const t = topologyOfNode(buildTopology(before.connz, now.connz, now.totals), this.node);
    return { ...t, node: this.node, edges: topologyEdges(t) };
  }
}
