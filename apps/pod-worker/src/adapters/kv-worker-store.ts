import type { PodSyncStatusRecord } from '@app/contracts';
import { JsonKvStore, type JsonKv } from '@app/nats';
import { WorkerStore, type WorkerRecords } from '../ports.js';

/** The `workers` bucket: `<node>.<uid>`. */
export class KvWorkerStore extends WorkerStore implements WorkerRecords {
  private readonly records: JsonKvStore<PodSyncStatusRecord>;

  constructor(kv: JsonKv, node: string) {
    super();
    this.records = new JsonKvStore(kv, node);
  }
  load(uid: string): Promise<PodSyncStatusRecord | undefined> {
    return this.records.get(uid);
  }
  save(uid: string, record: PodSyncStatusRecord): Promise<void> {
    return this.records.put(uid, record);
  }
  delete(uid: string): Promise<void> {
    return this.records.delete(uid);
  }
  all(): Promise<Map<string, PodSyncStatusRecord>> {
    return this.records.entries();
  }
}
