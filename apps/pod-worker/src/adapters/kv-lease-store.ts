import { kvKey, kvSnapshot, type KV } from '@app/nats';
import { LeaseStore, type ReplicaHeartbeat, type ShardLease } from '../ports.js';

/**
 * The `leases` bucket: shard leases at `<node>.pod-worker-shard.<shard>`,
 * created and replaced by compare-and-set, and each replica's heartbeat at
 * `<node>.pod-worker-replica.<owner>` (the owner's name escaped into a key
 * token; the value carries it as it is).
 */
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
  private replicaKey(owner: string): string {
    return kvKey(this.node, 'pod-worker-replica', replicaToken(owner));
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
  async announce(owner: string, expiresAt: number): Promise<void> {
    await this.kv.put(this.replicaKey(owner), JSON.stringify({ owner, expiresAt }));
  }
  async replicas(): Promise<ReplicaHeartbeat[]> {
    const out: ReplicaHeartbeat[] = [];
    for (const e of await kvSnapshot(this.kv, `${kvKey(this.node, 'pod-worker-replica')}.>`)) {
      if (e.value.length === 0) continue;
      const { owner, expiresAt } = JSON.parse(this.dec.decode(e.value)) as { owner: string; expiresAt: number };
      out.push({ owner, expiresAt, revision: e.revision });
    }
    return out;
  }
  async withdraw(owner: string, revision?: number): Promise<void> {
    await this.kv.delete(this.replicaKey(owner), revision !== undefined ? { previousSeq: revision } : {}).catch(() => undefined);
  }
  /** A watch of the shard leases' updates (no history): each delete or purge is a release. Opened again a second after it ends or fails. */
  onRelease(listener: () => void): () => void {
    let stopped = false;
    let watch: { stop(): void } | undefined;
    let retry: ReturnType<typeof setTimeout> | undefined;
    const open = async () => {
      try {
        const w = await this.kv.watch({ key: `${kvKey(this.node, 'pod-worker-shard')}.*`, include: 'updates' });
        watch = w;
        if (stopped) w.stop();
        for await (const e of w) if (e.operation === 'DEL' || e.operation === 'PURGE') listener();
      } catch {
        // NATS away: the rounds go on on their timer; the watch is opened again below.
      }
      if (!stopped) retry = setTimeout(() => void open(), 1000);
    };
    void open();
    return () => {
      stopped = true;
      watch?.stop();
      if (retry) clearTimeout(retry);
    };
  }
}

/** A replica's name as one KV key token: characters a key cannot hold become `=<hex>`. */
export function replicaToken(owner: string): string {
  return owner.replace(/[^-\w]/g, (c) => `=${c.charCodeAt(0).toString(16)}`);
}
