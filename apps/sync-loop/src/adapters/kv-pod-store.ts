import type { PodRecord, WorkQueueRecord } from '@app/contracts';
import { JsonKvStore, type JsonKv } from '@app/nats';
import type { LeaderFence } from '@app/leader-election';
import { podManagerStore } from '@app/pod-manager';
import { PodStore } from '../ports.js';

/**
 * The `pods` bucket: the podManager at `<node>.pod.<uid>` (@app/pod-manager), the work queue at
 * `<node>.queue.<uid>`. Writes are the leader's only: each is refused
 * (NotLeaderError) once this instance may no longer act as leader.
 */
export class KvPodStore extends PodStore {
  private readonly pods: JsonKvStore<PodRecord>;
  private readonly queue: JsonKvStore<WorkQueueRecord>;

  constructor(
    kv: JsonKv,
    node: string,
    private readonly fence: LeaderFence,
  ) {
    super();
    this.pods = podManagerStore(kv, node);
    this.queue = new JsonKvStore(kv, node, 'queue');
  }
  loadPods(): Promise<PodRecord[]> {
    return this.pods.values();
  }
  async putPod(record: PodRecord): Promise<void> {
    this.fence.check('write the pods bucket');
    return this.pods.put(record.pod.metadata.uid ?? '', record);
  }
  async deletePod(uid: string): Promise<void> {
    this.fence.check('write the pods bucket');
    return this.pods.delete(uid);
  }
  async loadQueue(): Promise<Map<string, number>> {
    return new Map([...(await this.queue.entries())].map(([uid, r]) => [uid, r.dueAt]));
  }
  async putQueue(uid: string, dueAt: number): Promise<void> {
    this.fence.check('write the pods bucket');
    return this.queue.put(uid, { dueAt });
  }
  async deleteQueue(uid: string): Promise<void> {
    this.fence.check('write the pods bucket');
    return this.queue.delete(uid);
  }
}
