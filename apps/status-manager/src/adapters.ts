/** The status manager's ports on KV. */
import type { PodRecord } from '@app/contracts';
import { kvKey, readEntries, readEntry, type KV } from '@app/nats';
import { DesiredPods, StatusStore } from './status-manager.js';
import type { StatusEntry } from './status-store.js';

export class KvStatusStore extends StatusStore {
  constructor(
    private readonly kv: KV,
    private readonly node: string,
  ) {
    super();
  }
  async load(): Promise<[string, StatusEntry][]> {
    return [...(await readEntries<StatusEntry>(this.kv, kvKey(this.node)))];
  }
  async put(uid: string, entry: StatusEntry): Promise<void> {
    await this.kv.put(kvKey(this.node, uid), JSON.stringify(entry));
  }
  async delete(uid: string): Promise<void> {
    await this.kv.delete(kvKey(this.node, uid));
  }
}

export class KvDesiredPods extends DesiredPods {
  constructor(
    private readonly kv: KV,
    private readonly node: string,
  ) {
    super();
  }
  async all(): Promise<PodRecord[]> {
    return [...(await readEntries<PodRecord>(this.kv, kvKey(this.node, 'pod'))).values()];
  }
  async get(uid: string): Promise<PodRecord | undefined> {
    return readEntry<PodRecord>(this.kv, kvKey(this.node, 'pod', uid));
  }
}
