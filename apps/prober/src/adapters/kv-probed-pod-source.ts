import type { PodRecord, VersionedPodStatusRecord } from '@app/contracts';
import { JsonKvStore, desiredPodsStore, podStatusStore, type JsonKv } from '@app/nats';
import { ProbedPodSource, type KeptPodStatus } from '../ports.js';

/** The sync loop's `pods` bucket (`<node>.pod.<uid>`) and the status manager's `pod-status` bucket (`<node>.<uid>`), read only. */
export class KvProbedPodSource extends ProbedPodSource {
  private readonly pods: JsonKvStore<PodRecord>;
  private readonly statuses: JsonKvStore<VersionedPodStatusRecord>;

  constructor(pods: JsonKv, statuses: JsonKv, node: string) {
    super();
    this.pods = desiredPodsStore(pods, node);
    this.statuses = podStatusStore(statuses, node);
  }

  desiredPods(): Promise<PodRecord[]> {
    return this.pods.values();
  }

  async podStatuses(): Promise<Map<string, KeptPodStatus>> {
    return new Map([...(await this.statuses.entries())].map(([uid, r]) => [uid, { status: r.status, podIsFinished: r.podIsFinished === true }]));
  }
}
