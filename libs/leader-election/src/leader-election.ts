/**
 * Leader election for the single-active services (sync-loop, pleg,
 * status-manager; DESIGN.md "Scaling"), after client-go's
 * tools/leaderelection (leaderelection.go: acquire, renew,
 * tryAcquireOrRenew, release), on one key of the `leases` KV bucket,
 * `<node>.leader.<service>`, instead of a coordination.k8s.io Lease. Every
 * write to the key is a compare-and-set on its revision.
 *
 *            key absent or released; or its revision unchanged for the
 *            holder's leaseDurationMs by OUR clock; or it names this incarnation
 *   standby ──────────────────────────── CAS ───────────────────────────▶ leader
 *      ▲                                                                    │ renew (CAS) every retryPeriod
 *      │  no successful renewal for renewDeadline, or the CAS lost:         │
 *      └──────────────── step down (stop acting), campaign again ◀──────────┘
 *   stop() (SIGTERM): stop acting, then delete the key: a standby leads at its next try.
 *
 * Invariants:
 *  - A candidate is one process start (an incarnation), not an INSTANCE_ID:
 *    a process restarted under the dead leader's INSTANCE_ID finds a record
 *    of another incarnation and waits for it to expire like any standby, so
 *    the standby that was running (and heard what the leader missed) takes
 *    over first; client-go's identities are made unique per process
 *    (hostname + "_" + a UUID) for the same reason.
 *  - Times in the record are for people; a standby compares revisions only,
 *    and counts the lease duration from when IT saw the revision change, on
 *    its own clock: two processes' clocks are never compared.
 *  - renewDeadline < leaseDuration: a leader that has not renewed stops
 *    acting at (start of its last successful renewal + renewDeadline), before
 *    a standby, which saw that renewal only after it was written, can take
 *    over at (then + leaseDuration): the deposed leader stops before the new
 *    one starts, as long as the two clocks' rates differ by less than
 *    (leaseDuration - renewDeadline) / leaseDuration.
 *  - The fencing token of a term is the revision of the write that won it:
 *    KV revisions only grow, so a later term has a higher token. It stays
 *    the same through the term's renewals. `fencingToken` is undefined the
 *    moment this replica may no longer act, even before the step-down timer
 *    has run (a blocked event loop cannot stretch a term).
 * See docs/adr/0011-leader-election.md for what the fence does and does not guarantee.
 */
import { randomUUID } from 'node:crypto';
import { Clock, type Timer } from '@app/clock';
import type { LeadershipInfo } from '@app/contracts';
import type { Logger } from '@app/observability';
import { kvKey } from '@app/nats';

/** The lease's value, as client-go's LeaderElectionRecord. */
export interface LeaderElectionRecord {
  /** The holder's INSTANCE_ID; '' never appears (a released lease is deleted). */
  holderIdentity: string;
  /** The holder's process start (LeaderElectionOptions.incarnation); absent in records of earlier versions, which no live process wrote. */
  holderIncarnation?: string;
  /** How long the holder promises to hold without renewing: a standby waits this long after it last saw the revision change. */
  leaseDurationMs: number;
  acquireTime: string;
  renewTime: string;
  /** How many times the lease changed hands. */
  leaderTransitions: number;
}

/** The lease as read: `record` is absent when the key was released (deleted). */
export interface LeaderLeaseSnapshot {
  record?: LeaderElectionRecord;
  revision: number;
}

/** One service's leader lease; the KV adapter is KvLeaderLeaseStore. */
export abstract class LeaderLeaseStore {
  /** The lease now, or undefined when the key was never written. */
  abstract get(): Promise<LeaderLeaseSnapshot | undefined>;
  /**
   * Writes `record` if the key is still at `revision` (0: the key must not
   * exist, or be deleted). Resolves the new revision, or undefined when
   * another write came first; rejects when the store cannot be reached.
   */
  abstract put(record: LeaderElectionRecord, revision: number): Promise<number | undefined>;
  /** Deletes the lease if it is still at `revision`. */
  abstract release(revision: number): Promise<void>;
}

/** The `leases` key of a service's leader: `<node>.leader.<service>`. */
export function leaderLeaseKey(node: string, service: string): string {
  return kvKey(node, 'leader', service);
}

/** A write refused because this replica is not the leader (any more), or not the holder of the lease that fences it (`holder`). */
export class NotLeaderError extends Error {
  constructor(what: string, holder = 'the leader') {
    super(`not ${holder}: refused to ${what}`);
    this.name = 'NotLeaderError';
  }
}

/**
 * What an adapter that writes on the leader's behalf checks first (the KV
 * stores, the work dispatcher): the term's fencing token, or a refusal.
 */
export abstract class LeaderFence {
  /** The current term's fencing token while this replica may act as leader; undefined otherwise. */
  abstract get fencingToken(): number | undefined;

  /** Who may write while the fence holds, for the refusal's message. */
  protected readonly holder: string = 'the leader';

  /** The fencing token, or throws NotLeaderError: call it right before a write the leader makes. */
  check(what: string): number {
    const token = this.fencingToken;
    if (token === undefined) throw new NotLeaderError(what, this.holder);
    return token;
  }
}

/**
 * A fence over a lease that is not a leader's: the token is read when
 * asked (a pod-worker shard's lease revision while its owner may still act
 * on it, undefined from then on; apps/pod-worker/src/shards.ts).
 */
export class LeaseFence extends LeaderFence {
  constructor(
    private readonly token: () => number | undefined,
    protected override readonly holder: string,
  ) {
    super();
  }

  get fencingToken(): number | undefined {
    return this.token();
  }
}

export type LeaderRole = LeadershipInfo['role'];

/** What `/readyz` and `/info` say of the election. */
export type LeadershipStatus = LeadershipInfo;

/** Called as leadership comes and goes; both may be async, errors are logged. */
export interface LeadershipListener {
  /** This replica leads, with fencing token `token`: restore and start acting. */
  onStartedLeading(token: number): void | Promise<void>;
  /** This replica must stop acting at once (it may still be starting: check for that). */
  onStoppedLeading(reason: string): void | Promise<void>;
}

export interface LeaderElectionOptions {
  /** This replica (INSTANCE_ID), the record's holderIdentity; unique among the live replicas. */
  identity: string;
  /** This process start: a restarted process is a new candidate (default: a random one per elector). */
  incarnation?: string;
  /** LeaseDuration: how long a standby waits after the lease last changed. */
  leaseDurationMs: number;
  /** RenewDeadline: how long a leader keeps acting without a successful renewal (< leaseDurationMs). */
  renewDeadlineMs: number;
  /** RetryPeriod: how often a leader renews and a standby looks (< renewDeadlineMs). */
  retryPeriodMs: number;
}

/** client-go's defaults are 15s/10s/2s; a node-local stack wants a standby leading within 5s. */
export const DEFAULT_LEADER_ELECTION = { leaseDurationMs: 4000, renewDeadlineMs: 3000, retryPeriodMs: 500 } as const;

/** Why options are unsafe, or undefined when they are fine. */
export function leaderElectionProblem(o: Omit<LeaderElectionOptions, 'identity'>): string | undefined {
  if (o.renewDeadlineMs >= o.leaseDurationMs) return `the renew deadline (${o.renewDeadlineMs}ms) must be shorter than the lease duration (${o.leaseDurationMs}ms), or a deposed leader may still act when a standby takes over`;
  if (o.retryPeriodMs >= o.renewDeadlineMs) return `the retry period (${o.retryPeriodMs}ms) must be shorter than the renew deadline (${o.renewDeadlineMs}ms), or a leader steps down before its first retry`;
  if (o.retryPeriodMs <= 0) return 'the retry period must be positive';
  return undefined;
}

interface Term {
  token: number;
  revision: number;
  record: LeaderElectionRecord;
  /** When the last successful write of this term started, by our clock. */
  renewedAt: number;
}

export class LeaderElector extends LeaderFence {
  private term?: Term;
  /** The lease as we last saw it change, and when (our clock). */
  private observed?: { revision: number; holder?: string; ours: boolean; leaseDurationMs: number; at: number };
  private readonly listeners: LeadershipListener[] = [];
  private nextTry?: Timer;
  private deadline?: Timer;
  private inflight?: Promise<void>;
  private started = false;
  private stopped = false;
  private since: number;
  /** This candidate: one process start. */
  readonly incarnation: string;

  constructor(
    private readonly store: LeaderLeaseStore,
    private readonly clock: Clock,
    private readonly logger: Logger,
    private readonly options: LeaderElectionOptions,
  ) {
    super();
    const problem = leaderElectionProblem(options);
    if (problem) throw new Error(problem);
    this.since = clock.now();
    this.incarnation = options.incarnation ?? randomUUID();
  }

  get fencingToken(): number | undefined {
    const t = this.term;
    return t && this.clock.now() < t.renewedAt + this.options.renewDeadlineMs ? t.token : undefined;
  }

  get isLeader(): boolean {
    return this.fencingToken !== undefined;
  }

  status(): LeadershipStatus {
    const token = this.fencingToken;
    const leader = token !== undefined ? this.options.identity : this.observed?.holder;
    return {
      role: token !== undefined ? 'leader' : 'standby',
      identity: this.options.identity,
      ...(leader ? { leader } : {}),
      ...(token !== undefined ? { token } : {}),
      since: new Date(this.since).toISOString(),
    };
  }

  /** Registers a listener; register before start(). */
  subscribe(listener: LeadershipListener): void {
    this.listeners.push(listener);
  }

  /** Starts campaigning (at once). */
  start(): void {
    if (this.started || this.stopped) return;
    this.started = true;
    this.schedule(0);
  }

  /**
   * Stops campaigning; a leader stops acting (its listeners are awaited, up
   * to `waitMs`) and then deletes the lease, so that a standby takes over at
   * its next try instead of after a lease duration.
   */
  async stop(waitMs = 2000): Promise<void> {
    if (this.stopped) return;
    this.stopped = true;
    this.nextTry?.cancel();
    await this.within(waitMs, this.inflight);
    const term = this.term;
    if (!term) return;
    this.endTerm();
    await this.within(waitMs, this.notify((l) => l.onStoppedLeading('shutting down')));
    try {
      await this.within(waitMs, this.store.release(term.revision));
      this.logger.info({ token: term.token }, 'released the leader lease');
    } catch (err) {
      this.logger.warn({ err: (err as Error).message }, 'could not release the leader lease; a standby takes over when it expires');
    }
  }

  private schedule(ms: number): void {
    this.nextTry?.cancel();
    if (this.stopped) return;
    this.nextTry = this.clock.setTimer(ms, () => void this.tryOnce());
  }

  private async tryOnce(): Promise<void> {
    if (this.stopped || this.inflight) return;
    const attempt = (this.term ? this.renew(this.term) : this.campaign()).catch((err: unknown) => {
      this.logger.warn({ err: (err as Error).message }, 'leader election round failed');
    });
    this.inflight = attempt;
    await attempt;
    this.inflight = undefined;
    if (!this.stopped) this.schedule(this.nextDelay());
  }

  /** A leader renews every retry period; a standby looks every retry period, or at the moment the lease it saw expires. */
  private nextDelay(): number {
    const { retryPeriodMs } = this.options;
    const o = this.observed;
    if (this.term || !o || !o.holder || o.ours) return retryPeriodMs;
    // Past the expiry this round has tried already (and lost, or could not reach the store): wait a retry period.
    const untilExpiry = o.at + o.leaseDurationMs - this.clock.now();
    return untilExpiry > 0 ? Math.min(retryPeriodMs, untilExpiry) : retryPeriodMs;
  }

  private async renew(term: Term): Promise<void> {
    const startedAt = this.clock.now();
    const record: LeaderElectionRecord = { ...term.record, renewTime: new Date(startedAt).toISOString() };
    let revision: number | undefined;
    try {
      revision = await this.store.put(record, term.revision);
    } catch (err) {
      // Try again at the next retry; the deadline timer steps down if this lasts.
      this.logger.warn({ err: (err as Error).message }, 'could not renew the leader lease');
      return;
    }
    if (this.term !== term) return; // stepped down meanwhile: the next campaign sees the lease as it is
    if (revision === undefined) {
      this.stepDown('the leader lease was taken by another replica');
      return;
    }
    term.revision = revision;
    term.record = record;
    term.renewedAt = startedAt;
    this.observed = { revision, holder: record.holderIdentity, ours: true, leaseDurationMs: record.leaseDurationMs, at: this.clock.now() };
    this.armDeadline(term);
  }

  /** Whether `record` was written by this incarnation (a record of the same INSTANCE_ID from an earlier process is not). */
  private isOurs(record: LeaderElectionRecord): boolean {
    return record.holderIdentity === this.options.identity && record.holderIncarnation === this.incarnation;
  }

  private async campaign(): Promise<void> {
    const snap = await this.store.get();
    const seenAt = this.clock.now();
    const record = snap?.record;
    if (!snap || !record) {
      await this.acquire(snap?.revision ?? 0, undefined);
      return;
    }
    const ours = this.isOurs(record);
    if (this.observed?.revision !== snap.revision) {
      if (this.observed?.holder !== record.holderIdentity) this.logger.info({ leader: record.holderIdentity, incarnation: record.holderIncarnation }, 'leader seen');
      this.observed = { revision: snap.revision, holder: record.holderIdentity, ours, leaseDurationMs: record.leaseDurationMs, at: seenAt };
    }
    const expired = seenAt >= this.observed.at + record.leaseDurationMs;
    if (ours || expired) await this.acquire(snap.revision, record);
  }

  private async acquire(revision: number, previous: LeaderElectionRecord | undefined): Promise<void> {
    const startedAt = this.clock.now();
    const at = new Date(startedAt).toISOString();
    const transitions = previous ? previous.leaderTransitions + (this.isOurs(previous) ? 0 : 1) : 0;
    const record: LeaderElectionRecord = { holderIdentity: this.options.identity, holderIncarnation: this.incarnation, leaseDurationMs: this.options.leaseDurationMs, acquireTime: at, renewTime: at, leaderTransitions: transitions };
    const won = await this.store.put(record, revision);
    if (won === undefined) return; // another replica wrote first; the next look sees it
    if (this.stopped) {
      await this.store.release(won);
      return;
    }
    this.observed = { revision: won, holder: record.holderIdentity, ours: true, leaseDurationMs: record.leaseDurationMs, at: this.clock.now() };
    const term: Term = { token: won, revision: won, record, renewedAt: startedAt };
    this.term = term;
    this.since = this.clock.now();
    this.armDeadline(term);
    this.logger.info({ token: won, previous: previous?.holderIdentity, transitions }, 'became the leader');
    void this.notify((l) => l.onStartedLeading(won));
  }

  private armDeadline(term: Term): void {
    this.deadline?.cancel();
    this.deadline = this.clock.setTimer(term.renewedAt + this.options.renewDeadlineMs - this.clock.now(), () => {
      if (this.term === term) this.stepDown(`no successful renewal within the renew deadline (${this.options.renewDeadlineMs}ms)`);
    });
  }

  private stepDown(reason: string): void {
    this.endTerm();
    this.logger.warn({ reason }, 'stopped leading');
    void this.notify((l) => l.onStoppedLeading(reason));
  }

  private endTerm(): void {
    this.term = undefined;
    this.deadline?.cancel();
    this.since = this.clock.now();
  }

  private async notify(call: (l: LeadershipListener) => void | Promise<void>): Promise<void> {
    await Promise.all(
      this.listeners.map(async (l) => {
        try {
          await call(l);
        } catch (err) {
          this.logger.error({ err: (err as Error).message }, 'leadership listener failed');
        }
      }),
    );
  }

  /** Waits for `p` at most `ms`; its rejection is passed on. */
  private async within(ms: number, p: Promise<unknown> | undefined): Promise<void> {
    if (!p) return;
    let timer: Timer | undefined;
    await Promise.race([p, new Promise<void>((resolve) => (timer = this.clock.setTimer(ms, resolve)))]).finally(() => timer?.cancel());
  }
}

/**
 * The receiving end of the fence (the pod worker's work subscription): a
 * message whose fencing token is lower than the highest seen comes from a
 * leader that was deposed and has not noticed yet, and is dropped. Messages
 * without a token are let through (a sender that is not elected). A lower
 * token long after the highest was last seen cannot be a deposed leader's
 * (it stops within its renew deadline), but a `leases` bucket that was
 * deleted and made again, whose revisions start over: it is accepted and
 * becomes the new highest.
 */
export class FencingTokenFilter {
  private highest = 0;
  private highestSeenAt = 0;

  constructor(
    private readonly clock: Clock,
    /** How long after the highest token was last seen a lower one is still refused. */
    private readonly staleAfterMs = 30_000,
  ) {}

  /** Whether to act on a message carrying `token`. */
  accept(token: number | undefined): { ok: true } | { ok: false; highest: number } {
    if (token === undefined) return { ok: true };
    const now = this.clock.now();
    if (token < this.highest && now - this.highestSeenAt < this.staleAfterMs) return { ok: false, highest: this.highest };
    this.highest = token;
    this.highestSeenAt = now;
    return { ok: true };
  }
}
