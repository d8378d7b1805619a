import type { PodCacheEntry, PodCacheGlobal } from '@app/contracts';
import { JsonKvStore, type JsonKv } from '@app/nats';
import { PodCacheStore } from '../ports.js';

/** The `pod-cache` bucket: `<node>.pod.<uid>` per pod (podCacheKey), `<node>.global` for the relist time (podCacheGlobalKey). */
export class KvPodCacheStore extends PodCacheStore {
  private readonly entries: JsonKvStore<PodCacheEntry>;
  private readonly node: JsonKvStore<PodCacheGlobal>;

  constructor(kv: JsonKv, node: string) {
    super();
    this.entries = new JsonKvStore(kv, node, 'pod');
    this.node = new JsonKvStore(kv, node);
  }
  async load(): Promise<{ entries: PodCacheEntry[]; global: number }> {
    const entries = await this.entries.values();
    const global = (await this.node.get('global'))?.timestamp ?? 0;
    return { entries, global };
  }
  set(entry: PodCacheEntry): Promise<void> {
    return this.entries.put(entry.uid, entry);
  }
  delete(uid: string): Promise<void> {
    return this.entries.delete(uid);
  }
  updateTime(timestamp: number, relistThresholdMs?: number): Promise<void> {
    return this.node.put('global', { timestamp, ...(relistThresholdMs !== undefined ? { relistThresholdMs } : {}) });
  }
}
