/**
 * What owning a shard means for this replica (DESIGN.md "Scaling",
 * docs/adr/0008-delivery-by-reconciliation.md): the replica follows the
 * shard's work subject, and it re-derives every pod of the shard from the
 * state, on taking the shard over and every housekeeping period, so that
 * no lost message (a dispatch or kill sent while the shard had no owner, a
 * lost PLEG event) leaves a pod undone. Upstream has one pod worker set
 * that never loses an UpdatePod; this is how the split gets the same.
 *
 * For each pod of the shard: its desired record (the podManager, `pods`),
 * its worker's record (`workers`, written by whoever owned the shard), this
 * replica's worker in memory, and its pod-cache entry:
 *
 *   desired, admitted, no worker here          -> SyncPodSync (or SyncPodKill when terminating / termination asked)
 *   desired, termination asked, worker syncing  -> SyncPodKill       (the kill was lost)
 *   desired, spec differs from the worker's     -> SyncPodUpdate     (the update was lost)
 *   pod-cache entry newer than the last step    -> SyncPodSync       (the PLEG event was lost)
 *   not desired, worker not finished            -> SyncPodKill with the worker's own pod (the kill was lost,
 *                                                  or the pod was terminating when its owner died)
 *   not desired, worker finished                -> the record purged (SyncKnownPods), 10 s after it terminated
 *   not desired, no worker record               -> left to the sync loop's housekeeping (a runtime pod nobody works)
 *
 * Outside a takeover, a pod is left alone for `settleMs` after it was added
 * or last changed in the runtime, so the message already on its way is not
 * doubled; doubling one would still be harmless (UpdatePod is idempotent).
 */
import { Clock, type Timer } from '@app/clock';
import { MessageTypes, decodeMessage, parseJson, podWorkerState, shardOf, type Pod, type PodRecord, type PodSyncStatusRecord, type SyncPodType, type UpdatePodOptionsMessage } from '@app/contracts';
import { podsDifferSemantically } from '@app/kube';
import type { Logger } from '@app/observability';
import type { PodCache } from '@app/pod-cache';
import type { PodWorkerView, PodWorkers } from './pod-workers.js';
import type { ShardFences } from './shards.js';
import { DesiredPods, WorkSubscriptions, WorkerRecords } from './ports.js';

/** One pod of a shard as its owner sees it. */
export interface ShardPod {
  uid: string;
  desired?: PodRecord;
  /** Its `workers` record, as the bucket has it. */
  record?: PodSyncStatusRecord;
  /** This replica's worker for it. */
  worker?: PodWorkerView;
  /** Its pod-cache entry, when the runtime has something of it. */
  cache?: { name: string; namespace: string; timestamp: number };
}

export type ShardAction = { uid: string; why: string } & ({ kind: 'update'; updateType: SyncPodType; pod: Pod; gracePeriodOverride?: number; runningPodOnly?: boolean } | { kind: 'purge' });

/**
 * How long the record of a finished pod that is no longer desired is kept
 * before it is purged: upstream's SyncKnownPods purges at the next
 * housekeeping, which races with a quick re-add (kubelet_restarted_pods_total
 * then misses it). Ten seconds covers a file source's re-read and the
 * dispatch; the record is small and the bucket stays bounded.
 */
export const FINISHED_RECORD_KEEP_MS = 10_000;

/** The table at the top of this file, as a pure function. */
export function decideShardWork(pods: readonly ShardPod[], opts: { now: number; takeover: boolean; settleMs: number }): ShardAction[] {
  const out: ShardAction[] = [];
  const settled = (t: number) => opts.takeover || opts.now - t >= opts.settleMs;
  for (const p of pods) {
    const { uid, desired, worker } = p;
    const rec = worker?.record ?? p.record;
    const state = rec ? podWorkerState(rec) : undefined;
    if (desired) {
      if (!desired.admitted || rec?.finished) continue;
      const deleteGrace = desired.pod.metadata.deletionGracePeriodSeconds;
      const kill = { kind: 'update', updateType: 'SyncPodKill', pod: desired.pod, ...(deleteGrace !== undefined ? { gracePeriodOverride: deleteGrace } : {}) } as const;
      if (!worker) {
        if (!settled(desired.addedAt)) continue;
        if (desired.terminationRequested || state === 'TerminatingPod' || state === 'TerminatedPod') out.push({ uid, ...kill, why: 'terminating with no worker here' });
        else out.push({ uid, kind: 'update', updateType: 'SyncPodSync', pod: desired.pod, why: 'desired with no worker here' });
        continue;
      }
      if (worker.working || state !== 'SyncPod') continue;
      if (desired.terminationRequested) out.push({ uid, ...kill, why: 'termination requested, the worker still syncs' });
      else if (podsDifferSemantically(worker.pod, desired.pod)) out.push({ uid, kind: 'update', updateType: 'SyncPodUpdate', pod: desired.pod, why: 'the worker has an older spec' });
      else if (p.cache && p.cache.timestamp > worker.lastSyncEnd && settled(p.cache.timestamp)) out.push({ uid, kind: 'update', updateType: 'SyncPodSync', pod: desired.pod, why: 'the runtime changed since the last sync' });
      continue;
    }
    if (!rec) continue;
    if (rec.finished) {
      // Kept a while after it terminated, so a pod added again soon after (a
      // static pod's manifest moved out and back) is still known as restarted.
      if (opts.now - (rec.terminatedAt ?? 0) >= FINISHED_RECORD_KEEP_MS) out.push({ uid, kind: 'purge', why: 'finished and no longer desired' });
      continue;
    }
    if (worker && (worker.working || state !== 'SyncPod')) continue;
    const why = worker ? 'no longer desired, the worker still syncs' : 'no longer desired, not finished, no worker here';
    if (rec.pod) out.push({ uid, kind: 'update', updateType: 'SyncPodKill', pod: rec.pod, why });
    else {
      const bare: Pod = { metadata: { uid, name: p.cache?.name ?? '', namespace: p.cache?.namespace ?? '' }, spec: { containers: [] } };
      out.push({ uid, kind: 'update', updateType: 'SyncPodKill', pod: bare, runningPodOnly: true, gracePeriodOverride: rec.gracePeriod ?? 1, why });
    }
  }
  return out;
}

export interface ShardWorkOptions {
  shardCount: number;
  /** How long a pod is left to the message on its way before it is repaired (the housekeeping period). */
  settleMs: number;
}

/** What a ShardWork is built from. */
export interface ShardWorkDeps {
  workers: Pick<PodWorkers, 'updatePod' | 'release' | 'forget' | 'worker'>;
  desired: DesiredPods;
  records: WorkerRecords;
  cache: Pick<PodCache, 'get'>;
  subscriptions: WorkSubscriptions;
  clock: Clock;
  logger: Logger;
  options: ShardWorkOptions;
  /** The shards' fences: work is taken only while the shard's lease holds. */
  fences?: Pick<ShardFences, 'fence'>;
}

export class ShardWork {
  private readonly following = new Map<number, () => void>();
  /** Reconciliations run one at a time. */
  private chain: Promise<unknown> = Promise.resolve();

  constructor(private readonly deps: ShardWorkDeps) {}

  /** The shards this replica follows. */
  get shards(): number[] {
    return [...this.following.keys()].sort((a, b) => a - b);
  }

  /** A shard is ours: follow its work subject at once (before the first await: the ShardManager does not wait for the rest and relies on it), then re-derive all its pods (the workers resume from their records). */
  async acquire(shard: number): Promise<void> {
    this.following.set(
      shard,
      this.deps.subscriptions.follow(shard, (subject, data) => {
        if (!this.following.has(shard)) return false;
        // Our lease may have run out while our event loop was stalled: the work is not ours to take (and not accepted: the sync loop sends it again).
        if (this.deps.fences && this.deps.fences.fence(shard).fencingToken === undefined) {
          this.deps.logger.warn({ subject, shard }, 'refused work: the shard\'s lease may be another replica\'s by now');
          return false;
        }
        try {
          const update = decodeMessage(MessageTypes.updatePodOptions, parseJson(data));
          // Taken once UpdatePod stored it: a save that failed (KV away, the fence refused) leaves the work unanswered, and the sync loop sends it again.
          return this.deps.workers.updatePod(update).then(
            () => true,
            (e: unknown) => {
              this.deps.logger.error({ subject, err: (e as Error).message }, 'UpdatePod failed: the work is not accepted');
              return false;
            },
          );
        } catch (e) {
          this.deps.logger.warn({ subject, err: (e as Error).message }, 'dropped a malformed work message');
          return false;
        }
      }),
    );
    const acted = await this.reconcile([shard], true);
    this.deps.logger.info({ shard, resynced: acted }, 'resynced the pods of a shard');
  }

  /** The shard's lease is gone (maybe someone else's already): stop at once, steps in flight end on their own. */
  lose(shard: number): void {
    this.unfollow(shard);
    void this.deps.workers.release((uid) => this.shardOf(uid) === shard);
  }

  /** The shard is handed back: no more updates for its pods; resolves once their steps in flight are done. */
  async handBack(shard: number): Promise<void> {
    this.unfollow(shard);
    await this.deps.workers.release((uid) => this.shardOf(uid) === shard);
  }

  /** Each housekeeping period: every followed shard's pods re-derived; finished records of gone pods purged. */
  async housekeeping(): Promise<number> {
    const shards = this.shards;
    return shards.length === 0 ? 0 : this.reconcile(shards, false);
  }

  private reconcile(shards: number[], takeover: boolean): Promise<number> {
    const run = this.chain.then(() => this.reconcileNow(shards, takeover));
    this.chain = run.catch(() => undefined);
    return run;
  }

  /**
   * A takeover lists both buckets (each key at its value at the takeover or
   * newer: the new owner acts on every pod of the shard). The periodic pass
   * reads this process's mirrors instead, and reads again, a get each, the
   * desired pod and the record of every pod it would act on, then decides
   * those again: it never acts on a value older than the pass (a pod the
   * sync loop has just added, whose `pods` entry the watch has not brought
   * yet, is not killed); what the mirror has not seen yet waits for the
   * next pass.
   */
  private async reconcileNow(shards: number[], takeover: boolean): Promise<number> {
    const mine = new Set(shards);
    let [desired, records] = takeover ? await Promise.all([this.deps.desired.all(), this.deps.records.all()]) : [this.deps.desired.mirrored(), this.deps.records.mirrored()];
    const uids = [...new Set([...desired.keys(), ...records.keys()])].filter((uid) => mine.has(this.shardOf(uid)));
    const opts = () => ({ now: this.deps.clock.now(), takeover, settleMs: this.deps.options.settleMs });
    let actions = decideShardWork(
      uids.map((uid) => this.shardPod(uid, desired.get(uid), records.get(uid))),
      opts(),
    );
    if (!takeover && actions.length > 0) {
      const doubtful = [...new Set(actions.map((a) => a.uid))];
      const [d, r] = await Promise.all([Promise.all(doubtful.map((uid) => this.deps.desired.get(uid))), Promise.all(doubtful.map((uid) => this.deps.records.load(uid)))]);
      desired = new Map(doubtful.flatMap((uid, i) => (d[i] ? [[uid, d[i]] as const] : [])));
      records = new Map(doubtful.flatMap((uid, i) => (r[i] ? [[uid, r[i]] as const] : [])));
      actions = decideShardWork(
        doubtful.map((uid) => this.shardPod(uid, desired.get(uid), records.get(uid))),
        opts(),
      );
    }
    const now = this.deps.clock.now();
    for (const a of actions) {
      // The shard may have been handed back while this ran.
      if (!this.following.has(this.shardOf(a.uid))) continue;
      if (a.kind === 'purge') {
        if (records.has(a.uid)) await this.deps.records.delete(a.uid);
        this.deps.workers.forget(a.uid);
        this.deps.logger.debug({ uid: a.uid, why: a.why }, 'purged a finished pod worker');
        continue;
      }
      if (!takeover) this.deps.logger.info({ uid: a.uid, updateType: a.updateType, why: a.why }, 'repairing a pod a lost message left behind');
      const update: UpdatePodOptionsMessage = {
        type: MessageTypes.updatePodOptions,
        updateType: a.updateType,
        startTime: this.deps.clock.date().toISOString(),
        pod: a.pod,
        ...(a.gracePeriodOverride !== undefined ? { killPodOptions: { gracePeriodOverride: a.gracePeriodOverride } } : {}),
        ...(a.runningPodOnly ? { runningPodOnly: true } : {}),
      };
      await this.deps.workers.updatePod(update, takeover ? now : 0);
    }
    return actions.filter((a) => a.kind === 'update').length;
  }

  /** One pod of a shard: its desired record and `workers` record as given, this replica's worker and its pod-cache entry now. */
  private shardPod(uid: string, desired: PodRecord | undefined, record: PodSyncStatusRecord | undefined): ShardPod {
    const entry = this.deps.cache.get(uid).entry;
    const worker = this.deps.workers.worker(uid);
    return { uid, ...(desired ? { desired } : {}), ...(record ? { record } : {}), ...(worker ? { worker } : {}), ...(entry ? { cache: { name: entry.name, namespace: entry.namespace, timestamp: entry.timestamp } } : {}) };
  }

  private unfollow(shard: number): void {
    this.following.get(shard)?.();
    this.following.delete(shard);
  }

  private shardOf(uid: string): number {
    return shardOf(uid, this.deps.options.shardCount);
  }
}

/** What a PodWorkerHousekeeping is built from. */
export interface PodWorkerHousekeepingDeps {
  work: Pick<ShardWork, 'housekeeping'>;
  /** The restart back-off, GCed each period. */
  backOff: { gc(now: number): void };
  clock: Clock;
  logger: Logger;
  periodMs: number;
}

/**
 * The pod worker's half of HandlePodCleanups, every housekeeping period:
 * its shards' pods re-derived and finished records purged (ShardWork), and
 * the restart back-off's GC (upstream kl.crashLoopBackOff.GC()).
 */
export class PodWorkerHousekeeping {
  private timer?: Timer;
  private stopped = false;

  constructor(private readonly deps: PodWorkerHousekeepingDeps) {}

  start(): void {
    const loop = () => {
      if (this.stopped) return;
      void this.tick().finally(() => {
        if (!this.stopped) this.timer = this.deps.clock.setTimer(this.deps.periodMs, loop);
      });
    };
    this.timer = this.deps.clock.setTimer(this.deps.periodMs, loop);
  }

  stop(): void {
    this.stopped = true;
    this.timer?.cancel();
  }

  async tick(): Promise<void> {
    try {
      await this.deps.work.housekeeping();
    } catch (err) {
      this.deps.logger.warn({ err: (err as Error).message }, 'pod worker housekeeping failed');
    }
    this.deps.backOff.gc(this.deps.clock.now());
  }
}
