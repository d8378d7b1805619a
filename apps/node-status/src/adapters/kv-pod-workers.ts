import type { PodSyncStatusRecord } from '@app/contracts';
import { JsonKvStore, type JsonKv } from '@app/nats';
import { PodWorkers } from '../ports.js';

/** The pod workers' `workers` bucket, read only: `<node>.<uid>`. */
export class KvPodWorkers extends PodWorkers {
  private readonly records: JsonKvStore<PodSyncStatusRecord>;

  constructor(kv: JsonKv, node: string) {
    super();
    this.records = new JsonKvStore<PodSyncStatusRecord>(kv, node);
  }

  get(uid: string): Promise<PodSyncStatusRecord | undefined> {
    return this.records.get(uid);
  }
}
