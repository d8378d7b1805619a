import type { PodStatus, PodSyncStatusRecord, VersionedPodStatusRecord } from '@app/contracts';
import { JsonKvStore, podStatusStore, type JsonKv } from '@app/nats';
import { NodeState } from '../ports.js';

/** The `workers` and `pod-status` buckets, read only: `<node>.<uid>` in each. */
export class KvNodeState extends NodeState {
  private readonly workers: JsonKvStore<PodSyncStatusRecord>;
  private readonly statuses: JsonKvStore<VersionedPodStatusRecord>;

  constructor(workers: JsonKv, statuses: JsonKv, node: string) {
    super();
    this.workers = new JsonKvStore(workers, node);
    this.statuses = podStatusStore(statuses, node);
  }
  workerStates(): Promise<Map<string, PodSyncStatusRecord>> {
    return this.workers.entries();
  }
  async podStatuses(): Promise<Map<string, PodStatus>> {
    return new Map([...(await this.statuses.entries())].map(([uid, r]) => [uid, r.status]));
  }
}
