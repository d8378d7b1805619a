import type { VersionedPodStatusRecord } from '@app/contracts';
import { JsonKvStore, podStatusStore, type JsonKv } from '@app/nats';
import { PodStatusProvider, type KeptPodStatus } from '../ports.js';

/** The status manager's `pod-status` bucket, `<node>.<uid>`, read only. */
export class KvPodStatusProvider extends PodStatusProvider {
  private readonly statuses: JsonKvStore<VersionedPodStatusRecord>;

  constructor(kv: JsonKv, node: string) {
    super();
    this.statuses = podStatusStore(kv, node);
  }

  async getPodStatus(uid: string): Promise<KeptPodStatus | undefined> {
    const r = await this.statuses.get(uid);
    return r && { status: r.status, podIsFinished: r.podIsFinished === true };
  }
}
