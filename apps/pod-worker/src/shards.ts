/**
 * Shard ownership for pod-worker replicas (DESIGN.md "Scaling"): pods are
 * spread over a fixed number of shards by UID; each shard is owned by one
 * replica at a time through a lease in the `leases` KV bucket, taken and
 * renewed by compare-and-set. A replica takes free or expired shards up to
 * its fair share, gives back what is over it, and renews its leases well
 * inside their lifetime; when a replica dies its leases expire and the
 * others take the shards over (and resync their pods).
 */
import { Clock, type Timer } from '@app/clock';
import type { Logger } from '@app/observability';
import { LeaseStore } from './ports.js';

export interface ShardManagerOptions {
  shards: number;
  instance: string;
  leaseMs: number;
  renewMs: number;
}

export class ShardManager {
  private readonly owned = new Map<number, number>(); // shard -> revision
  private timer?: Timer;
  private stopped = false;

  constructor(
    private readonly store: LeaseStore,
    private readonly clock: Clock,
    private readonly logger: Logger,
    private readonly options: ShardManagerOptions,
    private readonly onAcquire: (shard: number) => Promise<void>,
    private readonly onLose: (shard: number) => void,
  ) {}

  get ownedShards(): number[] {
    return [...this.owned.keys()].sort((a, b) => a - b);
  }

  start(): void {
    const loop = () => {
      if (this.stopped) return;
      void this.reconcile()
        .catch((err: unknown) => this.logger.warn({ err: (err as Error).message }, 'shard lease round failed'))
        .finally(() => {
          if (!this.stopped) this.timer = this.clock.setTimer(this.options.renewMs, loop);
        });
    };
    loop();
  }

  /** Gives every lease back (within a second: NATS may be gone), so another replica takes the shards at once. */
  async stop(): Promise<void> {
    this.stopped = true;
    this.timer?.cancel();
    const releases = [...this.owned].map(([shard, revision]) => {
      this.onLose(shard);
      return this.store.release(shard, revision);
    });
    this.owned.clear();
    await Promise.race([Promise.allSettled(releases), new Promise((r) => setTimeout(r, 1000).unref())]);
  }

  /** One round: renew, count the live owners, take up to the fair share, give back the excess. */
  async reconcile(): Promise<void> {
    const now = this.clock.now();
    const { shards, instance, leaseMs } = this.options;
    const leases = await Promise.all(Array.from({ length: shards }, (_, s) => this.store.get(s)));
    const owners = new Set<string>([instance]);
    for (const l of leases) if (l && l.lease.owner && l.lease.expiresAt > now) owners.add(l.lease.owner);
    const fairShare = Math.ceil(shards / owners.size);

    // Renew what is ours (or notice we lost it).
    for (const [shard, revision] of [...this.owned]) {
      const current = leases[shard];
      if (!current || current.lease.owner !== instance || current.revision !== revision) {
        this.lose(shard, 'taken by another replica');
        continue;
      }
      const ok = await this.store.put(shard, { owner: instance, expiresAt: now + leaseMs }, revision);
      if (!ok) this.lose(shard, 'lease renewal lost the race');
      else this.owned.set(shard, (await this.store.get(shard))?.revision ?? revision);
    }
    // Give back the excess, highest shards first.
    while (this.owned.size > fairShare) {
      const shard = Math.max(...this.owned.keys());
      const revision = this.owned.get(shard) ?? 0;
      this.lose(shard, 'over the fair share');
      await this.store.release(shard, revision);
    }
    // Take free or expired shards up to the fair share.
    for (let shard = 0; shard < shards && this.owned.size < fairShare; shard++) {
      if (this.owned.has(shard)) continue;
      const current = leases[shard];
      const free = !current || !current.lease.owner || current.lease.expiresAt <= now;
      if (!free) continue;
      const ok = await this.store.put(shard, { owner: instance, expiresAt: now + leaseMs }, current?.revision ?? 0);
      if (!ok) continue;
      const revision = (await this.store.get(shard))?.revision ?? 0;
      this.owned.set(shard, revision);
      this.logger.info({ shard, previousOwner: current?.lease.owner || undefined }, 'took pod-worker shard');
      await this.onAcquire(shard);
    }
  }

  private lose(shard: number, why: string): void {
    this.owned.delete(shard);
    this.logger.info({ shard, why }, 'gave up pod-worker shard');
    this.onLose(shard);
  }
}
