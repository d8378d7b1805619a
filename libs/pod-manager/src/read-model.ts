/**
 * The node's pods as the kubelet's `/pods` serves them: each desired pod
 * (the `pods` bucket) with its latest versioned status (the `pod-status`
 * bucket, written by the status manager). One rule (podWithStatus), used by
 * the status manager for what it holds in memory and by every other reader
 * (the kubelet server's read port, its log and stats routes, the console)
 * through PodReadModel, which reads both buckets from watched mirrors: any
 * instance, leader or standby, serves reads without loading, replacing or
 * writing any state of its own.
 */
import type { Clock } from '@app/clock';
import type { Pod, PodList, PodRecord, PodStatus, VersionedPodStatusRecord } from '@app/contracts';
import { podStatusStore, type JsonKv, type KvMirror } from '@app/nats';
import type { Logger } from '@app/observability';
import { podManagerMirror } from './pod-manager.js';

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

  constructor(deps: { pods: JsonKv; podStatus: JsonKv; node: string; clock: Clock; logger: Pick<Logger, 'info' | 'warn'> }) {
    super();
    this.pods = podManagerMirror(deps.pods, deps.node, { clock: deps.clock, logger: deps.logger });
    this.statuses = podStatusStore(deps.podStatus, deps.node).mirror({ clock: deps.clock, logger: deps.logger, bucket: 'pod-status' });
  }

  /** Opens both watches; resolves once both have their initial values (a failure is retried, never thrown). */
  async start(): Promise<void> {
    await Promise.all([this.pods.start(), this.statuses.start()]);
  }

  stop(): void {
    this.pods.stop();
    this.statuses.stop();
  }

  get ready(): boolean {
    return this.pods.ready && this.statuses.ready;
  }

  async listPods(): Promise<PodList> {
    await this.start();
    const statuses = this.statuses.entries();
    return podList([...this.pods.entries().values()], (uid) => statuses.get(uid)?.status);
  }

  async getPod(namespace: string, name: string): Promise<Pod | undefined> {
    return (await this.listPods()).items.find((p) => p.metadata.namespace === namespace && p.metadata.name === name);
  }

  onChange(listener: (uid: string | undefined) => void): () => void {
    const stops = [this.pods.onChange(listener), this.statuses.onChange(listener)];
    return () => stops.forEach((s) => s());
  }
}
