import type { PodRecord, WorkQueueRecord } from '@app/contracts';
import { JsonKvStore, desiredPodsStore, type JsonKv } from '@app/nats';
import { PodStore } from '../ports.js';

/** The `pods` bucket: the podManager at `<node>.pod.<uid>`, the work queue at `<node>.queue.<uid>`. */
export class KvPodStore extends PodStore {
  private readonly pods: JsonKvStore<PodRecord>;
  private readonly queue: JsonKvStore<WorkQueueRecord>;

  constructor(kv: JsonKv, node: string) {
    super();
    this.pods = desiredPodsStore(kv, node);
    this.queue = new JsonKvStore(kv, node, 'queue');
  }
  loadPods(): Promise<PodRecord[]> {
    return this.pods.values();
  }
  putPod(record: PodRecord): Promise<void> {
    return this.pods.put(record.pod.metadata.uid ?? '', record);
  }
  deletePod(uid: string): Promise<void> {
    return this.pods.delete(uid);
  }
  async loadQueue(): Promise<Map<string, number>> {
    return new Map([...(await this.queue.entries())].map(([uid, r]) => [uid, r.dueAt]));
  }
  putQueue(uid: string, dueAt: number): Promise<void> {
    return this.queue.put(uid, { dueAt });
  }
  deleteQueue(uid: string): Promise<void> {
    return this.queue.delete(uid);
  }
}
