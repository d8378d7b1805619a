import type { PodRecord, VersionedPodStatusRecord } from '@app/contracts';
import { JsonKvStore, podStatusStore, type JsonKv } from '@app/nats';
import type { PodManager } from '@app/pod-manager';
import { ProbedPodSource, type KeptPodStatus } from '../ports.js';

/** The podManager's pods (@app/pod-manager) and the status manager's `pod-status` bucket (`<node>.<uid>`), read only. */
export class KvProbedPodSource extends ProbedPodSource {
  private readonly statuses: JsonKvStore<VersionedPodStatusRecord>;

  constructor(
    private readonly pods: PodManager,
    statuses: JsonKv,
    node: string,
  ) {
    super();
    this.statuses = podStatusStore(statuses, node);
  }

  desiredPods(): Promise<PodRecord[]> {
    return this.pods.all();
  }

  async podStatuses(): Promise<Map<string, KeptPodStatus>> {
    return new Map([...(await this.statuses.entries())].map(([uid, r]) => [uid, { status: r.status, podIsFinished: r.podIsFinished === true }]));
  }
}
