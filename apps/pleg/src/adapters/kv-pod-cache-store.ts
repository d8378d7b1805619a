import type { PodCacheEntry, PodCacheGlobal } from '@app/contracts';
import { JsonKvStore, type JsonKv } from '@app/nats';
import type { LeaderFence } from '@app/leader-election';
import { PodCacheStore } from '../ports.js';

/**
 * The `pod-cache` bucket: `<node>.pod.<uid>` per pod (podCacheKey),
 * `<node>.global` for the relist time and the PLEG's sign of life (podCacheGlobalKey). Writes are the
 * leader's only: each is refused (NotLeaderError) once this instance may no
 * longer act as leader.
 */
export class KvPodCacheStore extends PodCacheStore {
  private readonly entries: JsonKvStore<PodCacheEntry>;
  private readonly node: JsonKvStore<PodCacheGlobal>;

  constructor(
    kv: JsonKv,
    node: string,
    private readonly fence: LeaderFence,
  ) {
    super();
    this.entries = new JsonKvStore(kv, node, 'pod');
    this.node = new JsonKvStore(kv, node);
  }
  async load(): Promise<{ entries: PodCacheEntry[]; global: number }> {
    const entries = await this.entries.values();
    const global = (await this.node.get('global'))?.timestamp ?? 0;
    return { entries, global };
  }
  async set(entry: PodCacheEntry): Promise<void> {
    this.fence.check('write the pod cache');
    return this.entries.put(entry.uid, entry);
  }
  async delete(uid: string): Promise<void> {
    this.fence.check('write the pod cache');
    return this.entries.delete(uid);
  }
  async updateGlobal(global: PodCacheGlobal): Promise<void> {
    this.fence.check('write the pod cache');
    return this.node.put('global', global);
  }
}
