import type { PodSyncStatusRecord } from '@app/contracts';
import { podWorkersStore, type JsonKv, type JsonKvStore } from '@app/nats';
import { PodWorkers } from '../ports.js';

/** The pod workers' `workers` bucket, read only: `<node>.<uid>`. */
export class KvPodWorkers extends PodWorkers {
  private readonly records: JsonKvStore<PodSyncStatusRecord>;

  constructor(kv: JsonKv, node: string) {
    super();
    this.records = podWorkersStore(kv, node);
  }

  get(uid: string): Promise<PodSyncStatusRecord | undefined> {
    return this.records.get(uid);
  }
}
