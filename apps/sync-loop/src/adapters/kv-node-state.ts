import type { Clock } from '@app/clock';
import type { PodStatus, PodSyncStatusRecord, VersionedPodStatusRecord } from '@app/contracts';
import { podStatusStore, podWorkersStore, type JsonKv, type JsonKvStore, type KvMirror } from '@app/nats';
import type { Logger } from '@app/observability';
import { NodeState, type NodeStateView } from '../ports.js';

export interface KvNodeStateDeps {
  /** The `workers` bucket (the pod workers' records). */
  workers: JsonKv;
  /** The `pod-status` bucket (the status manager's statuses). */
  statuses: JsonKv;
  /** The mirrors' clock and logger. */
  clock: Clock;
  logger: Logger;
}

/**
 * The `workers` and `pod-status` buckets, read only: `<node>.<uid>` in each.
 * Each is also kept in memory by one watch (KvMirror), started by start()
 * before the first pass reads it.
 */
export class KvNodeState extends NodeState {
  private readonly workers: JsonKvStore<PodSyncStatusRecord>;
  private readonly statuses: JsonKvStore<VersionedPodStatusRecord>;
  private readonly workersMirror: KvMirror<PodSyncStatusRecord>;
  private readonly statusesMirror: KvMirror<VersionedPodStatusRecord>;

  constructor(deps: KvNodeStateDeps, node: string) {
    super();
    const { clock, logger } = deps;
    this.workers = podWorkersStore(deps.workers, node);
    this.statuses = podStatusStore(deps.statuses, node);
    this.workersMirror = this.workers.mirror({ clock, logger, bucket: 'workers' });
    this.statusesMirror = this.statuses.mirror({ clock, logger, bucket: 'pod-status' });
  }

  /** Opens both watches; resolves once both mirrors hold what the buckets held. */
  async start(): Promise<void> {
    await Promise.all([this.workersMirror.start(), this.statusesMirror.start()]);
  }

  stop(): void {
    this.workersMirror.stop();
    this.statusesMirror.stop();
  }

  workerStates(): Promise<Map<string, PodSyncStatusRecord>> {
    return this.workers.entries();
  }
  async podStatuses(): Promise<Map<string, PodStatus>> {
    return new Map([...(await this.statuses.entries())].map(([uid, r]) => [uid, r.status]));
  }
  mirrored(): NodeStateView {
    return { workers: this.workersMirror.entries(), statuses: new Map([...this.statusesMirror.entries()].map(([uid, r]) => [uid, r.status])) };
  }
  async current(uids: readonly string[]): Promise<NodeStateView> {
    const [workers, statuses] = await Promise.all([Promise.all(uids.map((uid) => this.workers.get(uid))), Promise.all(uids.map((uid) => this.statuses.get(uid)))]);
    const out = { workers: new Map<string, PodSyncStatusRecord>(), statuses: new Map<string, PodStatus>() };
    uids.forEach((uid, i) => {
      const w = workers[i];
      const s = statuses[i];
      if (w) out.workers.set(uid, w);
      if (s) out.statuses.set(uid, s.status);
    });
    return out;
  }
}
