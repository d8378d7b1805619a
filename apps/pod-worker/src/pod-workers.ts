/**
 * Pod workers (pkg/kubelet/pod_workers.go), one per pod UID, in the
 * pod-worker service.
 *
 * The lifecycle of a UID:
 *
 *     UpdatePod ──▶ SyncPod ──(terminal, SyncPodKill, deletionTimestamp)──▶ TerminatingPod ──▶ TerminatedPod ──▶ finished
 *                   (repeats)                                               (kill, verify)       (final status, volumes
 *                                                                                                 and cgroup, TerminatePod)
 *
 *  - One pod is processed by one worker at a time, in order. While a sync
 *    runs, at most one further update waits: the newest wins, except that a
 *    waiting kill is never replaced by a sync (the kill keeps the newer pod).
 *  - Termination can be hurried (UpdatePod's cancelFn): a kill that makes
 *    the pod terminating cancels the sync in flight, and a kill whose grace
 *    period is shorter than the one in force (calculateEffectiveGracePeriod:
 *    it only ever shortens) saves it in the record and cancels the
 *    termination in flight. What a cancel reaches is the syncer's to say:
 *    KubeletSync, as upstream, lets the runtime's work in flight finish (an
 *    image pull, a postStart hook, a kill and its preStop hooks), and a
 *    shorter grace period applies to a kill that is retried. A cancelled
 *    sync is not retried: the kill waiting behind it runs next.
 *  - Once a UID is terminating it is never started again. Only a
 *    SyncPodCreate after the worker finished (the pod was added again, see
 *    the sync loop's housekeeping) starts a fresh worker for it. A
 *    SyncPodCreate that arrives while the UID terminates (a static pod's
 *    manifest moved out and back) is kept as `restartRequested` in the
 *    record: housekeeping sends it again once the worker finished.
 *  - Before acting, a worker waits for a pod cache entry newer than the end
 *    of its last sync (GetNewerThan), so it never acts on a runtime view
 *    older than its own actions. A sync that changed the pod in the runtime
 *    asks the PLEG, as it ends, to inspect the pod at once (PlegInspections):
 *    that entry, newer than the sync's end, is what the next sync waits for,
 *    not the next relist. A worker that would wait all the same (a kill
 *    right after a sync that changed nothing) asks the PLEG too.
 *  - When a sync ends, the pod is enqueued for the next one
 *    (`kubelet.<node>.work.done.<uid>`): the resync interval with jitter
 *    after success, a back-off with jitter after an error, about a second
 *    when the pod waits for the runtime's network (nextSyncAfter).
 *  - The per-pod state (syncedAt, terminatingAt, terminatedAt, grace period,
 *    finished, and the pod itself) is in the `workers` KV bucket, so a
 *    restarted worker, or another replica taking the pod's shard over,
 *    resumes: a terminating pod goes on terminating, a pod no longer desired
 *    is still killed with its own grace period, nothing is started twice.
 *  - A worker handed over (release) takes no further step; one made again
 *    for the same pod waits for the old one's step in flight.
 *  - A static pod's generation is not started while another generation
 *    with its full name is started and not finished (allowStaticPodStart,
 *    static-pod-starts.ts): an edited manifest is a new UID, and the old
 *    one terminates first. A generation held back waits for the back-off,
 *    or less when the generation it waits for finishes on this replica.
 */
import { Clock, type Timer } from '@app/clock';
import type { KillPodOptions, Pod, PodSyncStatusRecord, SyncPodType, UpdatePodOptionsMessage } from '@app/contracts';
import type { Logger } from '@app/observability';
import type { CacheResult, PodCache } from '@app/pod-cache';
import { isStaticPod } from '@app/kube';
import { WorkQueue, WorkerStore } from './ports.js';
import type { PlegInspections } from './pleg-inspections.js';
import { podFullName, type StaticPodStartGate } from './static-pod-starts.js';

/**
 * The three syncs the kubelet's pod worker calls (SyncPodFn, SyncTerminatingPodFn, SyncTerminatedPodFn).
 * `signal` is upstream's ctx: when it aborts, the sync stops as soon as it can and rejects.
 */
export abstract class PodSyncer {
  /** `terminal` when the pod reached a terminal phase and must now terminate; `requeueAfterMs` when it wants another sync sooner than the resync (a back-off ends). */
  abstract syncPod(updateType: SyncPodType, pod: Pod, cache: CacheResult, signal?: AbortSignal): Promise<SyncPodResult>;
  /** Stops everything of the pod; throws when something still runs (the worker retries). */
  abstract syncTerminatingPod(pod: Pod, cache: CacheResult, gracePeriod: number, kill: KillPodOptions | undefined, runningPodOnly: boolean, signal?: AbortSignal): Promise<void>;
  /** Final status, the pod's volumes and cgroup cleaned up, TerminatePod last; its containers and sandbox are the container GC's. */
  /** `kill`: the options the termination ran with (their PodStatusFunc holds in the final status too). */
  abstract syncTerminatedPod(pod: Pod, cache: CacheResult, runningPodOnly: boolean, kill?: KillPodOptions): Promise<void>;
}

export interface SyncPodResult {
  terminal: boolean;
  requeueAfterMs?: number;
}

export interface PodWorkersOptions {
  /** --sync-frequency: the resync interval after a successful sync (jittered by up to 50%). */
  resyncIntervalMs: number;
  /** The back-off after a failed sync (jittered by up to 50%). */
  backOffMs: number;
  random?: () => number;
}

export interface PodWorkerMetrics {
  syncDuration(operation: 'create' | 'update' | 'sync' | 'terminating' | 'terminated', seconds: number): void;
  /** A pod deleted and added again with the same UID (kubelet_restarted_pods_total). */
  restartedPod(isStatic: boolean): void;
}

interface Worker {
  uid: string;
  record: PodSyncStatusRecord;
  pod: Pod;
  pending?: UpdatePodOptionsMessage;
  working: boolean;
  /** The end of the last sync: the next one waits for a cache entry newer than this. */
  lastSyncEnd: number;
  killOptions?: KillPodOptions;
  runningPodOnly: boolean;
  loop?: Promise<void>;
  /** Cancels the sync in flight (upstream's podSyncStatus.cancelFn); undefined between syncs. */
  cancel?: AbortController;
  /** Handed over to another replica (its shard was given back or lost): takes no more steps. */
  released?: boolean;
  /** The `lastSyncEnd` the PLEG was last asked to inspect the pod after (once is enough). */
  inspectionAsked?: number;
  /** A static pod held back by another generation (allowStaticPodStart): the update it waits with. */
  waitingToStart?: UpdatePodOptionsMessage;
}

/** What a worker looks like from outside (the shard's reconciliation reads it). */
export interface PodWorkerView {
  record: PodSyncStatusRecord;
  pod: Pod;
  /** A step runs or waits to. */
  working: boolean;
  /** The end of its last step. */
  lastSyncEnd: number;
}

/**
 * Computes the termination grace period the kubelet uses for a pod (kuberuntime/grace-period.ts
 * podTerminationGracePeriod): `previous` is the one in force, which it only ever shortens.
 */
export type GracePeriodOf = (pod: Pod, override?: number, previous?: number) => number;

/** What PodWorkers is built from. */
export interface PodWorkersDeps {
  syncer: PodSyncer;
  store: WorkerStore;
  queue: WorkQueue;
  cache: PodCache;
  clock: Clock;
  logger: Logger;
  gracePeriodOf: GracePeriodOf;
  options: PodWorkersOptions;
  metrics?: PodWorkerMetrics;
  /** Which pods the sync in flight changed in the runtime; each is inspected by the PLEG as its sync ends. */
  inspections?: PlegInspections;
  /** allowStaticPodStart; none: static pods start as any other. */
  staticPods?: StaticPodStartGate;
}

export class PodWorkers {
  private readonly workers = new Map<string, Worker>();
  /** Workers handed over whose step in flight has not ended yet. */
  private readonly releasing = new Map<string, Promise<void>>();
  private readonly abort = new AbortController();
  /**
   * No worker of this process acts on a runtime view from before the process
   * started: a predecessor that died mid-sync may have left calls in flight
   * that only a later relist shows.
   */
  private readonly startedAt: number;

  constructor(private readonly deps: PodWorkersDeps) {
    this.startedAt = deps.clock.now();
  }

  /** Pods with a worker that has not finished (kubelet_working_pods). */
  get working(): { sync: number; terminating: number; terminated: number } {
    const out = { sync: 0, terminating: 0, terminated: 0 };
    for (const w of this.workers.values()) {
      if (w.record.finished) continue;
      if (w.record.terminatedAt !== undefined) out.terminated++;
      else if (w.record.terminatingAt !== undefined) out.terminating++;
      else out.sync++;
    }
    return out;
  }

  /** The worker's state of a UID (for tests and the status endpoint). */
  state(uid: string): PodSyncStatusRecord | undefined {
    return this.workers.get(uid)?.record;
  }

  /** The worker of a UID, if this replica has one. */
  worker(uid: string): PodWorkerView | undefined {
    const w = this.workers.get(uid);
    return w && { record: w.record, pod: w.pod, working: w.working, lastSyncEnd: w.lastSyncEnd };
  }

  /** Whether termination was asked for this UID (IsPodTerminationRequested). */
  isTerminationRequested(uid: string): boolean {
    return this.workers.get(uid)?.record.terminatingAt !== undefined;
  }

  /**
   * UpdatePod: hands an update to the pod's worker. `resumeFrom` is the
   * time from which the cache must be newer (a replica taking over a shard
   * passes its own start, so it never acts on what its predecessor saw).
   */
  async updatePod(options: UpdatePodOptionsMessage, resumeFrom = 0): Promise<void> {
    const uid = options.pod.metadata.uid ?? '';
    if (!uid) return;
    let w = this.workers.get(uid);
    if (!w) {
      await this.releasing.get(uid); // a step of this pod handed over moments ago ends first
      const persisted = await this.deps.store.load(uid);
      // Another update of the pod may have made its worker meanwhile: one worker per pod.
      w = this.workers.get(uid) ?? { uid, record: persisted ?? {}, pod: options.pod, working: false, lastSyncEnd: Math.max(persisted?.syncedAt ?? 0, resumeFrom, this.startedAt), runningPodOnly: options.runningPodOnly === true };
      this.workers.set(uid, w);
    }
    if (w.record.finished) {
      if (options.updateType !== 'SyncPodCreate') return;
      // Added again after it finished: a fresh worker (TerminatedAndRecreatedPod).
      this.deps.logger.info({ uid }, 'pod added again after it terminated: starting a fresh worker');
      const source = options.pod.metadata.annotations?.['kubernetes.io/config.source'];
      this.deps.metrics?.restartedPod(source !== undefined && source !== 'api');
      w.record = {};
      w.killOptions = undefined;
      w.runningPodOnly = options.runningPodOnly === true;
      await this.deps.store.save(uid, w.record);
    }
    if (options.updateType === 'SyncPodCreate' && w.record.terminatingAt !== undefined) {
      // Two pods with one UID in close succession (UpdatePod's restartRequested): the first terminates
      // to the end, then housekeeping starts the second (TerminatedAndRecreatedPod).
      if (w.record.restartRequested !== true) {
        this.deps.logger.info({ uid }, 'pod added again while it terminates: it restarts once its termination finished');
        w.record = { ...w.record, restartRequested: true };
        await this.deps.store.save(uid, w.record);
      }
      return;
    }
    if (options.runningPodOnly !== true) w.record = { ...w.record, pod: options.pod };
    const kill = options.updateType === 'SyncPodKill' || options.pod.metadata.deletionTimestamp !== undefined;
    let hurry: string | undefined;
    if (kill && w.record.terminatingAt === undefined) {
      w.record = { ...w.record, terminatingAt: this.deps.clock.now(), gracePeriod: this.deps.gracePeriodOf(options.pod, options.killPodOptions?.gracePeriodOverride) };
      w.killOptions = options.killPodOptions;
      await this.deps.store.save(uid, w.record);
      hurry = 'the pod is to terminate';
    } else if (kill && w.record.terminatedAt === undefined) {
      // calculateEffectiveGracePeriod: a shorter grace period (a kill's override, the pod's
      // deletionGracePeriodSeconds) shortens the termination in progress; a longer one changes nothing.
      const previous = w.record.gracePeriod;
      const grace = this.deps.gracePeriodOf(options.pod, options.killPodOptions?.gracePeriodOverride, previous);
      if (previous === undefined || grace < previous) {
        w.record = { ...w.record, gracePeriod: grace };
        w.killOptions = { ...w.killOptions, ...options.killPodOptions, gracePeriodOverride: grace };
        await this.deps.store.save(uid, w.record);
        if (previous !== undefined) hurry = `the grace period shortened to ${grace}s`;
      }
    }
    if (options.runningPodOnly !== true) w.pod = options.pod;
    w.pending = coalesce(w.pending, options);
    if (hurry !== undefined && w.cancel && !w.cancel.signal.aborted) {
      // The kill waiting behind the sync in flight runs as soon as that sync gives up.
      this.deps.logger.info({ uid, why: hurry }, 'cancelling the pod sync in flight');
      w.cancel.abort(new SyncCancelled(hurry));
    }
    if (!w.working) {
      w.working = true;
      w.loop = this.managePodLoop(w);
    }
  }

  /** Stops taking updates; waits for the syncs in progress. */
  async stop(): Promise<void> {
    this.abort.abort();
    await Promise.all([...this.workers.values()].flatMap((w) => (w.loop ? [w.loop] : [])));
  }

  /**
   * Hands over the workers of the pods `owns` picks (their shard goes to
   * another replica): they take no more steps, what waits is dropped, and
   * this resolves once the steps in flight are done. The new owner resumes
   * from the records.
   */
  async release(owns: (uid: string) => boolean): Promise<void> {
    const steps: Promise<void>[] = [];
    for (const [uid, w] of this.workers) {
      if (!owns(uid)) continue;
      w.released = true;
      w.pending = undefined;
      this.workers.delete(uid);
      if (!w.working || !w.loop) continue;
      const step = w.loop.then(
        () => undefined,
        () => undefined,
      );
      this.releasing.set(uid, step);
      void step.then(() => this.releasing.get(uid) === step && this.releasing.delete(uid));
      steps.push(step);
    }
    await Promise.all(steps);
  }

  /** Forgets a finished worker (its record stays in KV for housekeeping). */
  forget(uid: string): void {
    const w = this.workers.get(uid);
    if (w && !w.working) this.workers.delete(uid);
  }

  private async managePodLoop(w: Worker): Promise<void> {
    try {
      while (w.pending && !this.abort.signal.aborted && !w.released) {
        const update = w.pending;
        w.pending = undefined;
        await this.syncOnce(w, update);
      }
    } finally {
      w.working = false;
    }
  }

  /**
   * GetNewerThan the worker's last sync, asking the PLEG again while the entry does not come: a request is a
   * publish, lost when no PLEG leader hears it (one taking over, NATS reconnecting), and the next relist is up to
   * 5 minutes away in evented mode (1 s in generic, where a second ask is rare). First after 2 s, doubling to 30 s.
   */
  private async newerThanLastSync(w: Worker): Promise<CacheResult> {
    const waiting = this.deps.cache.getNewerThan(w.uid, w.lastSyncEnd, this.abort.signal);
    const inspections = this.deps.inspections;
    // Most syncs find the entry there already: no timer for them.
    if (!inspections || this.deps.cache.get(w.uid).timestamp > w.lastSyncEnd) return waiting;
    let timer: Timer | undefined;
    let delay = INSPECTION_REASK_FIRST_MS;
    const reask = () => {
      timer = this.deps.clock.setTimer(delay, () => {
        inspections.inspect(w.uid, w.lastSyncEnd);
        delay = Math.min(delay * 2, INSPECTION_REASK_MAX_MS);
        reask();
      });
    };
    reask();
    try {
      return await waiting;
    } finally {
      timer?.cancel();
    }
  }

  private async syncOnce(w: Worker, update: UpdatePodOptionsMessage): Promise<void> {
    if (await this.mustWaitToStart(w, update)) return;
    let cache: CacheResult;
    try {
      if (this.deps.inspections && w.inspectionAsked !== w.lastSyncEnd && this.deps.cache.get(w.uid).timestamp <= w.lastSyncEnd) {
        // It would wait for the next relist: the PLEG is asked to look at the pod now instead.
        w.inspectionAsked = w.lastSyncEnd;
        this.deps.inspections.inspect(w.uid, w.lastSyncEnd);
      }
      cache = await this.newerThanLastSync(w);
    } catch {
      return; // stopping
    }
    const started = this.deps.clock.now();
    let error: string | undefined;
    let requeueAfterMs: number | undefined;
    let operation: 'create' | 'update' | 'sync' | 'terminating' | 'terminated' = 'sync';
    const cancel = new AbortController();
    w.cancel = cancel;
    try {
      if (w.record.terminatedAt !== undefined) {
        operation = 'terminated';
        await this.deps.syncer.syncTerminatedPod(w.pod, cache, w.runningPodOnly, w.killOptions);
        w.record = { ...w.record, finished: true };
        await this.deps.store.save(w.uid, w.record);
        // completeTerminated: what came meanwhile (a PLEG event of the dying containers) is dropped; a second
        // TerminatedPod would send the final status again from a runtime that no longer has the containers.
        w.pending = undefined;
        this.deps.logger.info({ uid: w.uid }, 'pod worker finished');
        if (isStaticPod(w.pod)) this.wakeWaitingToStart(w);
      } else if (w.record.terminatingAt !== undefined) {
        operation = 'terminating';
        await this.deps.syncer.syncTerminatingPod(w.pod, cache, w.record.gracePeriod ?? this.deps.gracePeriodOf(w.pod), w.killOptions, w.runningPodOnly, cancel.signal);
        w.record = { ...w.record, terminatedAt: this.deps.clock.now() };
        await this.deps.store.save(w.uid, w.record);
        w.pending = coalesce(w.pending, { ...update, updateType: 'SyncPodKill' }); // on to syncTerminatedPod at once
      } else {
        operation = update.updateType === 'SyncPodCreate' ? 'create' : update.updateType === 'SyncPodUpdate' ? 'update' : 'sync';
        w.record = { ...w.record, syncedAt: started };
        await this.deps.store.save(w.uid, w.record);
        const { terminal, requeueAfterMs: wants } = await this.deps.syncer.syncPod(update.updateType, w.pod, cache, cancel.signal);
        requeueAfterMs = wants;
        if (terminal && w.record.terminatingAt === undefined) {
          w.record = { ...w.record, terminatingAt: this.deps.clock.now(), gracePeriod: this.deps.gracePeriodOf(w.pod) };
          await this.deps.store.save(w.uid, w.record);
          w.pending = coalesce(w.pending, { ...update, updateType: 'SyncPodSync' });
        }
      }
    } catch (err) {
      error = (err as Error).message;
      if (cancel.signal.aborted) this.deps.logger.info({ uid: w.uid, operation, why: (cancel.signal.reason as Error).message }, 'pod sync cancelled');
      else this.deps.logger.warn({ uid: w.uid, pod: `${w.pod.metadata.namespace ?? ''}/${w.pod.metadata.name ?? ''}`, operation, err: error }, 'pod sync failed; will retry');
    } finally {
      w.cancel = undefined;
      w.lastSyncEnd = this.deps.clock.now();
      if (this.deps.inspections?.syncEnded(w.uid, w.lastSyncEnd)) w.inspectionAsked = w.lastSyncEnd;
      this.deps.metrics?.syncDuration(operation, (w.lastSyncEnd - started) / 1000);
    }
    if (w.record.finished) return;
    if (w.pending) return; // more work waits: no need to enqueue
    if (error && w.record.terminatingAt !== undefined) {
      // A termination that failed is retried by the worker itself: the pod may
      // already be gone from the podManager, which then enqueues nothing for it.
      this.deps.clock.setTimer(nextSyncAfter(this.deps.options, error, undefined), () => {
        if (this.abort.signal.aborted || w.record.finished || w.released) return;
        w.pending = coalesce(w.pending, { ...update, updateType: 'SyncPodKill' });
        if (!w.working) {
          w.working = true;
          w.loop = this.managePodLoop(w);
        }
      });
      return;
    }
    this.deps.queue.enqueue(w.uid, nextSyncAfter(this.deps.options, error, requeueAfterMs), error);
  }

  /**
   * allowPodStart for a static pod not started yet: held back while another
   * generation of its full name runs or is ahead of it, it is enqueued for
   * the back-off (upstream's workQueue.Enqueue with the back-off period)
   * and remembered, so that the generation it waits for, finishing on this
   * replica, wakes it at once. Buckets that cannot be read hold it back too.
   */
  private async mustWaitToStart(w: Worker, update: UpdatePodOptionsMessage): Promise<boolean> {
    const gate = this.deps.staticPods;
    if (!gate || w.record.syncedAt !== undefined || w.record.terminatingAt !== undefined || w.runningPodOnly || !isStaticPod(w.pod)) return false;
    let blockedBy: string;
    try {
      const verdict = await gate.allowStart(w.pod);
      if (verdict.allowed) {
        if (w.waitingToStart) this.deps.logger.info({ uid: w.uid, pod: podFullName(w.pod) }, 'static pod may start: no other generation of it runs');
        w.waitingToStart = undefined;
        return false;
      }
      if ('notDesired' in verdict) {
        // canEverStart false (cleanupUnstartedPod): gone from the podManager before it started, its kill lost or
        // still on its way. It terminates without starting, so its record finishes and is purged.
        this.deps.logger.info({ uid: w.uid, pod: podFullName(w.pod) }, 'static pod no longer desired before it started: it terminates without starting');
        const before = w.record;
        const terminating = { ...w.record, terminatingAt: this.deps.clock.now(), gracePeriod: this.deps.gracePeriodOf(w.pod) };
        w.record = terminating;
        try {
          await this.deps.store.save(w.uid, terminating);
        } catch (err) {
          // Not recorded: nothing is done that the record does not say (an UpdatePod meanwhile keeps its own record); asked again after the back-off.
          if (w.record === terminating) w.record = before;
          this.deps.logger.warn({ uid: w.uid, err: (err as Error).message }, 'could not record that a static pod no longer desired terminates: retried after the back-off');
          if (!w.pending) this.deps.queue.enqueue(w.uid, jitter(this.deps.options.backOffMs, BACK_OFF_JITTER_FACTOR, this.deps.options.random ?? Math.random));
          return true;
        }
        w.waitingToStart = undefined;
        w.pending = coalesce(w.pending, { ...update, updateType: 'SyncPodKill' });
        return true;
      }
      blockedBy = verdict.blockedBy;
    } catch (err) {
      blockedBy = `unknown (${(err as Error).message})`;
    }
    // A kill that came meanwhile goes first: it needs no start.
    if (w.record.terminatingAt !== undefined) return false;
    if (!w.waitingToStart) this.deps.logger.info({ uid: w.uid, pod: podFullName(w.pod), blockedBy }, 'static pod waits for another generation of it to terminate');
    w.waitingToStart = update;
    if (!w.pending) this.deps.queue.enqueue(w.uid, jitter(this.deps.options.backOffMs, BACK_OFF_JITTER_FACTOR, this.deps.options.random ?? Math.random));
    return true;
  }

  /** A static pod's generation finished: the generations of its full name waiting on this replica try again now. */
  private wakeWaitingToStart(finished: Worker): void {
    const fullName = podFullName(finished.pod);
    for (const w of this.workers.values()) {
      if (w === finished || !w.waitingToStart || w.released || podFullName(w.pod) !== fullName) continue;
      w.pending = coalesce(w.pending, w.waitingToStart);
      if (!w.working) {
        w.working = true;
        w.loop = this.managePodLoop(w);
      }
    }
  }
}

/** The reason a sync in flight was cancelled (upstream's context.Canceled): a kill came, or a shorter grace period. */
export class SyncCancelled extends Error {
  constructor(why: string) {
    super(`pod sync cancelled: ${why}`);
    this.name = 'SyncCancelled';
  }
}

/** pod_workers.go workerResyncIntervalJitterFactor and workerBackOffPeriodJitterFactor. */
const RESYNC_JITTER_FACTOR = 0.5;
const BACK_OFF_JITTER_FACTOR = 0.5;
/** A pod worker waiting for its pod's cache entry asks the PLEG again after this long, doubling up to the max. */
const INSPECTION_REASK_FIRST_MS = 2_000;
const INSPECTION_REASK_MAX_MS = 30_000;
/** pod_workers.go backOffOnTransientErrorPeriod: a pod waiting for the network is retried soon. */
export const BACK_OFF_ON_TRANSIENT_ERROR_MS = 1000;
/** kubelet.go NetworkNotReadyErrorMsg: a sync error that says it is recognised by this text, as upstream does. */
export const NETWORK_NOT_READY_ERROR_MSG = 'network is not ready';

/** wait.Jitter: `ms` plus up to `factor` times `ms`, so that pods failing together do not retry together. */
function jitter(ms: number, factor: number, random: () => number): number {
  return Math.round(ms + random() * factor * ms);
}

/**
 * completeWork: when the pod is synced next. After success, the resync
 * interval (or sooner when a back-off ends); after a NetworkNotReady error,
 * about a second; after any other error, the back-off. Each jittered.
 */
export function nextSyncAfter(options: PodWorkersOptions, error: string | undefined, requeueAfterMs: number | undefined): number {
  const random = options.random ?? Math.random;
  if (error === undefined) {
    const resync = jitter(options.resyncIntervalMs, RESYNC_JITTER_FACTOR, random);
    return Math.min(resync, requeueAfterMs ?? resync);
  }
  if (error.includes(NETWORK_NOT_READY_ERROR_MSG)) return jitter(BACK_OFF_ON_TRANSIENT_ERROR_MS, BACK_OFF_JITTER_FACTOR, random);
  return jitter(options.backOffMs, BACK_OFF_JITTER_FACTOR, random);
}

/** At most one waiting update: the newest, except that a waiting kill is kept (with the newer pod). */
export function coalesce(pending: UpdatePodOptionsMessage | undefined, next: UpdatePodOptionsMessage): UpdatePodOptionsMessage {
  if (!pending) return next;
  const pendingKill = pending.updateType === 'SyncPodKill';
  const nextKill = next.updateType === 'SyncPodKill';
  if (pendingKill && !nextKill) return { ...pending, pod: next.runningPodOnly ? pending.pod : next.pod };
  return next;
}
