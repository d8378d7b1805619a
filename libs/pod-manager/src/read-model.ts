/**
 * The node's pods as the kubelet's `/pods` serves them: each desired pod
 * (the `pods` bucket) with its latest versioned status (the `pod-status`
 * bucket, written by the status manager). One rule (podWithStatus), used by
 * the status manager for what it holds in memory and by every other reader
 * (the kubelet server's read port, its log and stats routes, the console)
 * through PodReadModel, which reads both buckets from watched mirrors: any
 * instance, leader or standby, serves reads without loading, replacing or
 * writing any state of its own. Given the `probe-results` bucket too, each
 * status has the prober's readiness and startup results laid on it as the
 * status manager lays them (withContainerProbeResult): a result saved while
 * no status manager led (it was down, or is still taking over) is in
 * `/pods` at once, as the status manager will store it.
 */
import type { Clock } from '@app/clock';
import type { Pod, PodList, PodRecord, PodSpec, PodStatus, ProbeResultRecord, VersionedPodStatusRecord } from '@app/contracts';
import { updateLastTransitionTimes, withContainerProbeResult } from '@app/kube';
import { podStatusStore, probeResultsStore, type JsonKv, type KvMirror } from '@app/nats';
import type { Logger } from '@app/observability';
import { podManagerMirror } from './pod-manager.js';

/**
 * `status` with every readiness and startup result of the pod laid on it (only Success counts), each as the status
 * manager's SetContainerReadiness and SetContainerStartup would; a changed condition's lastTransitionTime is `now`.
 */
export function withProbeResults(status: PodStatus, spec: PodSpec, results: readonly ProbeResultRecord[], now: number): PodStatus {
  let out = status;
  for (const r of results) {
    if (r.probeType === 'liveness') continue;
    out = withContainerProbeResult(out, spec, r.containerId, r.probeType, r.result === 'Success') ?? out;
  }
  if (out !== status) updateLastTransitionTimes(out.conditions, status.conditions, now);
  return out;
}

/** A desired pod with its status: the stored one, else Failed for a rejected pod, else Pending. */
export function podWithStatus(record: PodRecord, status: PodStatus | undefined): Pod {
  const s: PodStatus = status ?? (record.rejection ? { phase: 'Failed', reason: record.rejection.reason, message: `Pod was rejected: ${record.rejection.message}` } : { phase: 'Pending', ...record.pod.status });
  return { apiVersion: 'v1', kind: 'Pod', ...record.pod, status: s };
}

/** The v1 PodList of `records`, each with its status by UID, in namespace/name order. */
export function podList(records: readonly PodRecord[], statusOf: (uid: string) => PodStatus | undefined): PodList {
  const items = records.map((r) => podWithStatus(r, statusOf(r.pod.metadata.uid ?? ''))).sort((a, b) => `${a.metadata.namespace ?? ''}/${a.metadata.name ?? ''}`.localeCompare(`${b.metadata.namespace ?? ''}/${b.metadata.name ?? ''}`));
  return { apiVersion: 'v1', kind: 'PodList', metadata: {}, items };
}

/** What a reader of the node's pods needs: `/pods`, one pod, and a sign when either bucket changed. */
export abstract class PodReadModel {
  /** The kubelet's `/pods`: every desired pod with its spec and latest status. */
  abstract listPods(): Promise<PodList>;
  /** One pod of `/pods` by namespace and name. */
  abstract getPod(namespace: string, name: string): Promise<Pod | undefined>;
  /** Calls `listener` with a pod UID when its record or status changed (undefined: any may have). Returns the unsubscribe. */
  abstract onChange(listener: (uid: string | undefined) => void): () => void;
}

/** PodReadModel over mirrors of the `pods` and `pod-status` buckets; start() before reading. */
export class KvPodReadModel extends PodReadModel {
  private readonly pods: KvMirror<PodRecord>;
  private readonly statuses: KvMirror<VersionedPodStatusRecord>;
  private readonly probeResults?: KvMirror<ProbeResultRecord>;
  private readonly clock: Clock;

  constructor(deps: { pods: JsonKv; podStatus: JsonKv; probeResults?: JsonKv; node: string; clock: Clock; logger: Pick<Logger, 'info' | 'warn'> }) {
    super();
    this.clock = deps.clock;
    this.pods = podManagerMirror(deps.pods, deps.node, { clock: deps.clock, logger: deps.logger });
    this.statuses = podStatusStore(deps.podStatus, deps.node).mirror({ clock: deps.clock, logger: deps.logger, bucket: 'pod-status' });
    if (deps.probeResults) this.probeResults = probeResultsStore(deps.probeResults, deps.node).mirror({ clock: deps.clock, logger: deps.logger, bucket: 'probe-results' });
  }

  private get mirrors(): KvMirror<unknown>[] {
    return [this.pods, this.statuses, ...(this.probeResults ? [this.probeResults] : [])];
  }

  /** Opens the watches; resolves once each has its initial values (a failure is retried, never thrown). */
  async start(): Promise<void> {
    await Promise.all(this.mirrors.map((m) => m.start()));
  }

  stop(): void {
    for (const m of this.mirrors) m.stop();
  }

  get ready(): boolean {
    return this.mirrors.every((m) => m.ready);
  }

  async listPods(): Promise<PodList> {
    await this.start();
    const statuses = this.statuses.entries();
    const results = new Map<string, ProbeResultRecord[]>();
    for (const r of this.probeResults?.entries().values() ?? []) results.set(r.podUid, [...(results.get(r.podUid) ?? []), r]);
    const records = [...this.pods.entries().values()];
    const specOf = new Map(records.map((r) => [r.pod.metadata.uid ?? '', r.pod.spec]));
    const now = this.clock.now();
    return podList(records, (uid) => {
      const status = statuses.get(uid)?.status;
      const spec = specOf.get(uid);
      return status && spec ? withProbeResults(status, spec, results.get(uid) ?? [], now) : status;
    });
  }

  async getPod(namespace: string, name: string): Promise<Pod | undefined> {
    return (await this.listPods()).items.find((p) => p.metadata.namespace === namespace && p.metadata.name === name);
  }

  onChange(listener: (uid: string | undefined) => void): () => void {
    const stops = this.mirrors.map((m) => m.onChange(listener));
    return () => stops.forEach((s) => s());
  }
}
