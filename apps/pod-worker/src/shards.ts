/**
 * Shard ownership for pod-worker replicas (DESIGN.md "Scaling"; ours, not
 * upstream's): pods are spread over a fixed number of shards by UID; each
 * shard is owned by one replica at a time through a lease in the `leases`
 * KV bucket, taken and renewed by compare-and-set.
 *
 * One round, every renewMs (and at the moment a lease it waits for
 * expires):
 *
 *   announce ──▶ renew ──▶ hand back the excess ──▶ take free shards
 *   (heartbeat)  (or lose)  (yield, then release)    (up to the fair share)
 *
 *  - Every replica announces itself with a heartbeat in `leases` that
 *    expires like a lease, so a replica holding nothing (just started or
 *    restarted) counts in the fair share and the others make room for it.
 *  - The fair share is exact: the live replicas sorted by name, the first
 *    `shards % n` of them get one more than `floor(shards / n)`.
 *  - Handing a shard back is ordered per pod: the replica stops taking
 *    updates for the shard's pods, waits for their steps in flight
 *    (`onYield`), and only then releases the lease; the new owner resumes
 *    the pods from their `workers` records. The lease is renewed while the
 *    replica waits, so the shard is never worked twice.
 *  - A lease that was lost (renewal lost the race, another owner, or not
 *    renewed before its own expiry, e.g. NATS was away) is given up at once
 *    (`onLose`): the shard may already be someone else's.
 *  - When a replica dies its leases expire and the others take the shards
 *    over; the new owner re-derives every pod of the shard (shard-work.ts).
 *    The round starts that resync (`onAcquire`) and does not wait for it:
 *    the resync waits for the steps in flight of the shard's pods (an image
 *    pull, a kill's grace period), and a round waiting for it would renew
 *    no lease meanwhile. Every shard a round takes is followed (its work
 *    subscription in place) before any of them is resynced.
 *  - A shard released is taken at once: every replica watches the shard
 *    leases and runs a round the moment one is released, and a replica
 *    whose shard's pods finished yielding after its round releases it then
 *    (a round at once), not a round later. Work sent to the shard meanwhile
 *    reaches no owner and is sent again by the sync loop until one accepts
 *    it (apps/sync-loop/src/work-delivery.ts).
 *  - Everything done in a shard's name is fenced by its lease, as a
 *    leader's writes are (libs/leader-election, docs/adr/0011): ShardFences
 *    gives the lease's revision while the lease, as this replica last wrote
 *    it, has more than a quarter of its duration left, and refuses from
 *    then on, even before a round has noticed: a replica whose event loop
 *    stalled past its lease (SIGSTOP, a suspended VM) finds, when it runs
 *    again, its writes, CRI calls and messages for the shard refused, while
 *    another replica may already own it.
 */
import { Clock, type Timer } from '@app/clock';
import { shardOf } from '@app/contracts';
import { LeaseFence, type LeaderFence } from '@app/leader-election';
import type { Logger } from '@app/observability';
import { LeaseStore } from './ports.js';

export interface ShardManagerOptions {
  shards: number;
  instance: string;
  leaseMs: number;
  renewMs: number;
}

/** What a ShardManager is built from: the leases, and what to do as this replica gains, loses or hands back a shard. */
export interface ShardManagerDeps {
  store: LeaseStore;
  clock: Clock;
  logger: Logger;
  options: ShardManagerOptions;
  /**
   * The shard is ours: follow its work before the first await (synchronously), then resync its pods. The round
   * does not wait for the promise (a resync can wait minutes for a pod's step in flight, and the leases must be
   * renewed meanwhile); a rejection is logged.
   */
  onAcquire: (shard: number) => Promise<void>;
  /** The lease is gone: stop working the shard at once. */
  onLose: (shard: number) => void;
  /** The shard is handed back: stop taking its updates and resolve once its pods' steps in flight are done; none: onLose. */
  onYield?: (shard: number) => Promise<void>;
  /** The fences of the shards, kept as the leases are taken, renewed and given up. */
  fences?: ShardFences;
}

/**
 * The fence of each shard (and so of each pod, by its shard): the lease's
 * revision while this replica may still act in the shard's name (its lease,
 * as it last wrote it, has more than a quarter of its duration left), a
 * refusal (NotLeaderError) otherwise. Read by what acts for a pod: the
 * `workers` writes, the CRI calls that change the runtime, the status and
 * work-done messages (adapters/shard-fenced-*.ts). Kept by the ShardManager,
 * which has no other say in it: a replica that stalled past its lease is
 * refused the moment it runs again, before its next round notices.
 */
export class ShardFences {
  /** Each shard held: its lease (renewed in place) and the term it was taken in (one per take, never reused). */
  private readonly held = new Map<number, { lease: { revision: number; expiresAt: number }; term: number }>();
  private readonly fences = new Map<number, LeaderFence>();
  private terms = 0;

  constructor(private readonly deps: { clock: Clock; leaseMs: number; shardCount: number }) {}

  /** The shard is ours with this lease (renewals update `lease` in place): a new term begins. */
  hold(shard: number, lease: { revision: number; expiresAt: number }): void {
    this.held.set(shard, { lease, term: ++this.terms });
  }

  drop(shard: number): void {
    this.held.delete(shard);
  }

  /**
   * The term in which this replica holds the pod's shard now, if it does. A
   * step begun in one term is refused in any later one (stepFence): the
   * shard lost while the step was in flight and taken again since is not
   * the step's any more.
   */
  termOf(uid: string): number | undefined {
    return this.held.get(shardOf(uid, this.deps.shardCount))?.term;
  }

  /** The fence of a shard. */
  fence(shard: number): LeaderFence {
    let f = this.fences.get(shard);
    if (!f) this.fences.set(shard, (f = new LeaseFence(() => this.token(shard), `the owner of pod-worker shard ${shard}`)));
    return f;
  }

  /** The fence of the shard the pod `uid` belongs to. */
  forPod(uid: string): LeaderFence {
    return this.fence(shardOf(uid, this.deps.shardCount));
  }

  /** The fence of a step for the pod `uid` begun in `term`: it holds while the pod's shard's fence does, in that same term. */
  stepFence(uid: string, term: number | undefined): LeaderFence {
    const shard = shardOf(uid, this.deps.shardCount);
    return new LeaseFence(() => (term !== undefined && this.held.get(shard)?.term === term ? this.token(shard) : undefined), `the owner of pod-worker shard ${shard} since the step began`);
  }

  private token(shard: number): number | undefined {
    const l = this.held.get(shard)?.lease;
    return l && this.deps.clock.now() < l.expiresAt - this.deps.leaseMs / 4 ? l.revision : undefined;
  }
}

interface Owned {
  revision: number;
  /** Our lease's expiry as we last wrote it: past it, the shard may be someone else's. */
  expiresAt: number;
  /** Being handed back: resolves once the shard's pods have yielded. */
  yielding?: Promise<void>;
  yielded?: boolean;
}

/** The fair share of `me` among `replicas`: floor(shards / n), one more for the first `shards % n` by name. */
export function fairShare(shards: number, replicas: Iterable<string>, me: string): number {
  const sorted = [...new Set([...replicas, me])].sort();
  const rank = sorted.indexOf(me);
  return Math.floor(shards / sorted.length) + (rank < shards % sorted.length ? 1 : 0);
}

export class ShardManager {
  private readonly owned = new Map<number, Owned>();
  private timer?: Timer;
  private stopped = false;
  /** When the next foreign lease or heartbeat expires (a round then runs at once). */
  private wakeAt?: number;
  /** Rounds, releases and stop run one at a time. */
  private chain: Promise<unknown> = Promise.resolve();
  /** A round asked for at once (a lease released, a yield done) and not run yet. */
  private kicked = false;
  private stopWatch?: () => void;

  constructor(private readonly deps: ShardManagerDeps) {}

  /** The shards this replica works (those being handed back included). */
  get ownedShards(): number[] {
    return [...this.owned.keys()].sort((a, b) => a - b);
  }

  start(): void {
    // A lease released by another replica (or by this one) is taken by the replica under its share at once.
    this.stopWatch = this.deps.store.onRelease(() => this.kick());
    const loop = () => {
      if (this.stopped) return;
      void this.reconcile()
        .catch((err: unknown) => this.deps.logger.warn({ err: (err as Error).message }, 'shard lease round failed'))
        .finally(() => {
          if (this.stopped) return;
          const now = this.deps.clock.now();
          const next = this.wakeAt !== undefined && this.wakeAt > now ? Math.min(this.deps.options.renewMs, this.wakeAt - now) : this.deps.options.renewMs;
          this.timer = this.deps.clock.setTimer(next, loop);
        });
    };
    loop();
  }

  /**
   * Hands every shard back: each one's pods yield (their steps in flight
   * finish, within `timeoutMs`), then its lease is released so another
   * replica takes it at once. A shard whose pods did not yield in time keeps
   * its lease, which expires: no one works it twice.
   */
  async stop(timeoutMs = 10_000): Promise<void> {
    this.stopped = true;
    this.timer?.cancel();
    this.stopWatch?.();
    await this.exclusive(async () => {
      for (const [shard, o] of this.owned) o.yielding ??= this.startYield(shard, o);
      await this.waitForYields([...this.owned.values()], timeoutMs);
      const releases = [...this.owned].filter(([, o]) => o.yielded).map(([shard, o]) => this.deps.store.release(shard, o.revision));
      for (const shard of this.owned.keys()) this.deps.fences?.drop(shard);
      this.owned.clear();
      // Within a second: NATS may be gone, and then the leases simply expire.
      await this.within(1000, Promise.allSettled([...releases, this.deps.store.withdraw(this.deps.options.instance)]));
    });
  }

  /** One round: announce, renew, hand back the excess, take up to the fair share. */
  reconcile(): Promise<void> {
    return this.exclusive(() => this.round());
  }

  private async round(): Promise<void> {
    if (this.stopped) return;
    const { shards, instance, leaseMs } = this.deps.options;
    let now = this.deps.clock.now();
    for (const [shard, o] of [...this.owned]) if (o.expiresAt <= now) this.lose(shard, 'the lease expired before it was renewed');
    await this.deps.store.announce(instance, now + leaseMs);
    const [leases, replicas] = await Promise.all([Promise.all(Array.from({ length: shards }, (_, s) => this.deps.store.get(s))), this.deps.store.replicas()]);
    now = this.deps.clock.now();
    const live = new Set<string>([instance]);
    for (const r of replicas) if (r.expiresAt > now) live.add(r.owner);
    for (const l of leases) if (l?.lease.owner && l.lease.expiresAt > now) live.add(l.lease.owner);
    const target = fairShare(shards, live, instance);
    // The next foreign lease or heartbeat to expire changes the shares: the next round runs then.
    this.wakeAt = undefined;
    const expiries = [...leases.flatMap((l) => (l?.lease.owner && l.lease.owner !== instance ? [l.lease.expiresAt] : [])), ...replicas.filter((r) => r.owner !== instance).map((r) => r.expiresAt)];
    for (const t of expiries) if (t > now) this.wakeAt = Math.min(this.wakeAt ?? Infinity, t);

    // Renew what is ours (or notice we lost it), the shards being handed back included.
    for (const [shard, o] of [...this.owned]) {
      const current = leases[shard];
      if (!current || current.lease.owner !== instance || current.revision !== o.revision) {
        this.lose(shard, 'taken by another replica');
        continue;
      }
      const expiresAt = now + leaseMs;
      if (!(await this.deps.store.put(shard, { owner: instance, expiresAt }, o.revision))) {
        this.lose(shard, 'lease renewal lost the race');
        continue;
      }
      o.revision = (await this.deps.store.get(shard))?.revision ?? o.revision;
      o.expiresAt = expiresAt;
    }

    // Hand back the excess, highest shards first: each shard's pods yield, then its lease is released.
    const keeping = () => [...this.owned].filter(([, o]) => o.yielding === undefined).map(([s]) => s);
    for (let kept = keeping(); kept.length > target; kept = keeping()) {
      const shard = Math.max(...kept);
      const o = this.owned.get(shard);
      if (o) o.yielding = this.startYield(shard, o);
    }
    const yielding = [...this.owned.values()].filter((o) => o.yielding !== undefined);
    if (yielding.length > 0) await this.waitForYields(yielding, this.deps.options.renewMs);
    for (const [shard, o] of [...this.owned]) {
      if (!o.yielded) continue;
      this.owned.delete(shard);
      this.deps.fences?.drop(shard);
      await this.deps.store.release(shard, o.revision);
      this.deps.logger.info({ shard }, 'handed a pod-worker shard back');
    }

    // Take free or expired shards up to the fair share; then follow them all (each resyncs its pods after).
    const taken: number[] = [];
    for (let shard = 0; shard < shards && keeping().length < target; shard++) {
      if (this.owned.has(shard)) continue;
      const current = leases[shard];
      const free = !current || !current.lease.owner || current.lease.expiresAt <= now;
      if (!free) continue;
      const expiresAt = now + leaseMs;
      if (!(await this.deps.store.put(shard, { owner: instance, expiresAt }, current?.revision ?? 0))) continue;
      const revision = (await this.deps.store.get(shard))?.revision ?? 0;
      const o: Owned = { revision, expiresAt };
      this.owned.set(shard, o);
      this.deps.fences?.hold(shard, o);
      this.deps.logger.info({ shard, previousOwner: current?.lease.owner || undefined }, 'took pod-worker shard');
      taken.push(shard);
    }
    // Started, not awaited: a takeover's resync waits for the steps in flight of its pods (an image pull, a kill's grace
    // period), and a round that waited for it would renew no lease meanwhile. Each onAcquire follows its shard before
    // its first await, so every shard taken here is followed before any of them is resynced.
    for (const shard of taken) this.acquire(shard);
    // Heartbeats of replicas long gone are removed, so the bucket does not grow with restarts.
    for (const r of replicas) if (r.owner !== instance && r.expiresAt < now - leaseMs) await this.deps.store.withdraw(r.owner, r.revision);
  }

  /** The shard is ours: its work followed now, its pods resynced in the background (a failure logged; housekeeping repairs them). */
  private acquire(shard: number): void {
    let resync: Promise<void>;
    try {
      resync = this.deps.onAcquire(shard);
    } catch (err) {
      resync = Promise.reject(err instanceof Error ? err : new Error(String(err)));
    }
    resync.catch((err: unknown) => this.deps.logger.warn({ shard, err: (err as Error).message }, 'resyncing the pods of a shard taken failed'));
  }

  /** A round now (after the one running, if any); asked again before it ran, still one. */
  private kick(): void {
    if (this.stopped || this.kicked) return;
    this.kicked = true;
    void this.exclusive(async () => {
      this.kicked = false;
      await this.round();
    }).catch((err: unknown) => this.deps.logger.warn({ err: (err as Error).message }, 'shard lease round failed'));
  }

  private startYield(shard: number, o: Owned): Promise<void> {
    this.deps.logger.info({ shard }, 'handing a pod-worker shard back: its pods finish their steps first');
    const yielding = this.deps.onYield ? this.deps.onYield(shard) : Promise.resolve(this.deps.onLose(shard));
    return yielding
      .catch((err: unknown) => this.deps.logger.warn({ shard, err: (err as Error).message }, 'a shard\'s pods did not yield cleanly'))
      .then(() => {
        o.yielded = true;
        // Yielded after the round that started it stopped waiting: released now, not at the next round.
        if (this.owned.get(shard) === o) this.kick();
      });
  }

  /** Waits until every one of `owned` has yielded, or `ms` passed (the rest yield in the background). */
  private waitForYields(owned: Owned[], ms: number): Promise<void> {
    return this.within(ms, Promise.all(owned.map((o) => o.yielding ?? Promise.resolve())));
  }

  /** Waits for `p`, or `ms` at most. */
  private async within(ms: number, p: Promise<unknown>): Promise<void> {
    let timer: Timer | undefined;
    const timeout = new Promise<void>((r) => (timer = this.deps.clock.setTimer(ms, r)));
    await Promise.race([p, timeout]);
    timer?.cancel();
  }

  private lose(shard: number, why: string): void {
    this.owned.delete(shard);
    this.deps.fences?.drop(shard);
    this.deps.logger.info({ shard, why }, 'gave up pod-worker shard');
    this.deps.onLose(shard);
  }

  private exclusive<T>(fn: () => Promise<T>): Promise<T> {
    const run = this.chain.then(fn, fn);
    this.chain = run.catch(() => undefined);
    return run;
  }
}
