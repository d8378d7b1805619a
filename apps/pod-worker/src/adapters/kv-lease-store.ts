import { kvKey, type KV } from '@app/nats';
import { LeaseStore, type ShardLease } from '../ports.js';

/** The `leases` bucket: `<node>.pod-worker-shard.<shard>`, created and replaced by compare-and-set. */
export class KvLeaseStore extends LeaseStore {
  private readonly dec = new TextDecoder();
  constructor(
    private readonly kv: KV,
    private readonly node: string,
  ) {
    super();
  }
  private key(shard: number): string {
    return kvKey(this.node, 'pod-worker-shard', String(shard));
  }
  async get(shard: number) {
    const e = await this.kv.get(this.key(shard));
    if (!e || e.operation !== 'PUT' || e.value.length === 0) return e ? { lease: { owner: '', expiresAt: 0 }, revision: e.revision } : undefined;
    return { lease: JSON.parse(this.dec.decode(e.value)) as ShardLease, revision: e.revision };
  }
  async put(shard: number, lease: ShardLease, revision: number): Promise<boolean> {
    try {
      if (revision === 0) await this.kv.create(this.key(shard), JSON.stringify(lease));
      else await this.kv.update(this.key(shard), JSON.stringify(lease), revision);
      return true;
    } catch {
      return false;
    }
  }
  async release(shard: number, revision: number): Promise<void> {
    await this.kv.delete(this.key(shard), { previousSeq: revision }).catch(() => undefined);
  }
}
