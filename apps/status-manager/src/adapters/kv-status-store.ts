import { JsonKvStore, type JsonKv } from '@app/nats';
import { StatusStore } from '../ports.js';
import type { StatusEntry } from '../status-store.js';

/** The `pod-status` bucket: `<node>.<uid>`. */
export class KvStatusStore extends StatusStore {
  private readonly statuses: JsonKvStore<StatusEntry>;

  constructor(kv: JsonKv, node: string) {
    super();
    this.statuses = new JsonKvStore(kv, node);
  }
  async load(): Promise<[string, StatusEntry][]> {
    return [...(await this.statuses.entries())];
  }
  put(uid: string, entry: StatusEntry): Promise<void> {
    return this.statuses.put(uid, entry);
  }
  delete(uid: string): Promise<void> {
    return this.statuses.delete(uid);
  }
}
