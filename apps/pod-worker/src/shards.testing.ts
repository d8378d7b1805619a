/**
 * A LeaseStore for unit tests: the `leases` bucket in memory, with the
 * compare-and-set of JetStream KV (every write bumps one revision counter;
 * a put or release at a stale revision loses), shared by the replicas a test
 * runs, recording every call, and able to lose a race on demand.
 */
import { LeaseStore, type ShardLease } from './shards.js';

export class FakeLeaseStore extends LeaseStore {
  private readonly leases = new Map<number, { lease: ShardLease; revision: number }>();
  private revision = 0;
  /** Every call, as `get 0`, `put 1 @3 owner=a -> true`, `release 2 @5`. */
  readonly calls: string[] = [];
  private readonly raceLost = new Set<number>();

  get(shard: number): Promise<{ lease: ShardLease; revision: number } | undefined> {
    this.calls.push(`get ${shard}`);
    const l = this.leases.get(shard);
    return Promise.resolve(l ? { lease: { ...l.lease }, revision: l.revision } : undefined);
  }

  put(shard: number, lease: ShardLease, revision: number): Promise<boolean> {
    const current = this.leases.get(shard)?.revision ?? 0;
    let ok = current === revision;
    if (this.raceLost.delete(shard)) {
      // Another replica's write lands first: the revision moves under the caller.
      this.write(shard, { owner: 'racer', expiresAt: lease.expiresAt });
      ok = false;
    }
    if (ok) this.leases.set(shard, { lease: { ...lease }, revision: ++this.revision });
    this.calls.push(`put ${shard} @${revision} owner=${lease.owner} -> ${ok}`);
    return Promise.resolve(ok);
  }

  release(shard: number, revision: number): Promise<void> {
    this.calls.push(`release ${shard} @${revision}`);
    if (this.leases.get(shard)?.revision === revision) this.leases.delete(shard);
    return Promise.resolve();
  }

  /** Writes a lease behind the replicas' backs (another replica taking or renewing it). */
  write(shard: number, lease: ShardLease): void {
    this.leases.set(shard, { lease: { ...lease }, revision: ++this.revision });
  }

  /** The next put on `shard` loses the compare-and-set to another replica's write. */
  loseNextRace(shard: number): void {
    this.raceLost.add(shard);
  }

  /** The owner of each shard's lease (undefined when there is none), by shard. */
  owners(shards: number): (string | undefined)[] {
    return Array.from({ length: shards }, (_, s) => this.leases.get(s)?.lease.owner);
  }

  lease(shard: number): ShardLease | undefined {
    return this.leases.get(shard)?.lease;
  }
}

// The fake is a LeaseStore, checked by the compiler.
const _isPort: LeaseStore = new FakeLeaseStore();
void _isPort;
