/**
 * dispatchWork, delivered at least once (ours: upstream's UpdatePod is a
 * method call that cannot be lost). Each dispatch is a request that the
 * pod-worker replica owning the pod's shard answers once it has the update
 * (`kubelet.v1.work_accepted`). One that is not answered reached no owner:
 * the shard is changing hands (its old owner stopped following it while its
 * steps in flight end, the new one has not taken it yet), its owner died
 * or stalls and its lease has not expired yet. It is sent again, after
 * `retryMs` doubling up to `maxRetryMs`, until an owner accepts it.
 *
 *   dispatch ──▶ queued (per pod, in order) ──▶ sent ──accepted──▶ done, the pod's next is sent
 *                                               │ no owner / no answer
 *                                               └──▶ sent again after the back-off
 *                                                    (given up after giveUpAfterMs, or when this
 *                                                     replica is no longer the leader)
 *
 *  - A pod's updates go out one at a time, in the order they were
 *    dispatched: a retried SyncPodUpdate never lands after the SyncPodKill
 *    dispatched behind it. Different pods do not wait for each other.
 *  - A message given up is left to the shard owner's reconciliation (ADR
 *    0008), as every lost message was before: the take-over of a shard
 *    re-derives every pod of it from the buckets.
 *  - At most `maxQueued` wait per pod; past it the oldest waiting that is
 *    not a kill (never the one being sent) is dropped: a pod whose shard has
 *    no owner for long does not hold an ever longer queue, and the newest
 *    state wins. A kill is never dropped (it may carry an eviction's
 *    gracePeriodOverride, which no later sync repeats): when only kills
 *    wait, the queue holds them all (the sync loop sends a pod few).
 */
import { Clock, type Timer } from '@app/clock';
import type { Logger } from '@app/observability';

/** What sending one dispatch gives: accepted by the shard's owner, or not (no owner answered in time). Throws when it must not be sent at all (not the leader). */
export type SendWork = () => Promise<boolean>;

export interface WorkDeliveryOptions {
  /** The first wait before a dispatch is sent again. */
  retryMs: number;
  /** The longest wait between two tries. */
  maxRetryMs: number;
  /** How long after its dispatch a message is still tried. */
  giveUpAfterMs: number;
  /** How many messages wait per pod (the one being sent included). */
  maxQueued: number;
}

/** An owner takes a shard at the latest when the lease of the dead one expires (15 s by default), and then reconciles it anyway. */
export const DEFAULT_WORK_DELIVERY: WorkDeliveryOptions = { retryMs: 100, maxRetryMs: 1000, giveUpAfterMs: 60_000, maxQueued: 16 };

/** How long one try of a dispatch waits for the shard owner's answer (a busy pod worker answers in milliseconds; a stalled one never). */
export const WORK_ACCEPT_TIMEOUT_MS = 1000;

export interface WorkDeliveryMetrics {
  /** A dispatch sent again (no owner had answered). */
  retried(): void;
  /** A dispatch given up (too old, displaced, or not the leader any more). */
  dropped(reason: 'expired' | 'displaced' | 'not-leader'): void;
}

/** What a WorkDelivery is built from. */
export interface WorkDeliveryDeps {
  clock: Clock;
  logger: Logger;
  options?: WorkDeliveryOptions;
  metrics?: WorkDeliveryMetrics;
}

interface Queued {
  send: SendWork;
  what: string;
  at: number;
  kill: boolean;
}

/** What a dispatch is, as far as dropping it goes. */
export interface DeliverOptions {
  /** A SyncPodKill: never dropped to make room. */
  kill?: boolean;
}

export class WorkDelivery {
  private readonly queues = new Map<string, Queued[]>();
  private readonly timers = new Map<string, Timer>();
  private readonly options: WorkDeliveryOptions;
  private stopped = false;

  constructor(private readonly deps: WorkDeliveryDeps) {
    this.options = deps.options ?? DEFAULT_WORK_DELIVERY;
  }

  /** Dispatches waiting or being sent, over every pod. */
  get pending(): number {
    let n = 0;
    for (const q of this.queues.values()) n += q.length;
    return n;
  }

  /** Queues one dispatch for the pod `uid`; it goes out at once when none of the pod's is waiting. */
  deliver(uid: string, what: string, send: SendWork, options: DeliverOptions = {}): void {
    if (this.stopped) return;
    const queue = this.queues.get(uid);
    const item: Queued = { send, what, at: this.deps.clock.now(), kill: options.kill === true };
    if (queue) {
      queue.push(item);
      if (queue.length > this.options.maxQueued) {
        // The oldest waiting that is not a kill (the head is being sent); only kills waiting: none is dropped.
        const i = queue.findIndex((q, n) => n > 0 && !q.kill);
        if (i < 0) return;
        const [dropped] = queue.splice(i, 1);
        this.deps.metrics?.dropped('displaced');
        this.deps.logger.warn({ podUid: uid, what: dropped?.what }, 'dropped a dispatch no pod worker accepted yet: too many of the pod\'s wait');
      }
      return;
    }
    this.queues.set(uid, [item]);
    void this.pump(uid, this.options.retryMs);
  }

  /** Stops sending; what waits is dropped (the next leader re-derives it). */
  stop(): void {
    this.stopped = true;
    for (const t of this.timers.values()) t.cancel();
    this.timers.clear();
    this.queues.clear();
  }

  /** Sends the pod's first waiting dispatch; on success the next, on no answer the same after `backOffMs`. */
  private async pump(uid: string, backOffMs: number): Promise<void> {
    this.timers.delete(uid);
    const queue = this.queues.get(uid);
    const head = queue?.[0];
    if (!queue || !head || this.stopped) return;
    if (this.deps.clock.now() - head.at > this.options.giveUpAfterMs) {
      this.deps.metrics?.dropped('expired');
      this.deps.logger.warn({ podUid: uid, what: head.what, ageMs: this.deps.clock.now() - head.at }, 'gave up a dispatch no pod worker accepted: left to the shard owner\'s reconciliation');
      this.next(uid, queue);
      return;
    }
    let accepted: boolean;
    try {
      accepted = await head.send();
    } catch (err) {
      // Not the leader any more: nothing of the pod's goes out from here.
      for (let i = 0; i < queue.length; i++) this.deps.metrics?.dropped('not-leader');
      this.queues.delete(uid);
      this.deps.logger.debug({ podUid: uid, err: (err as Error).message }, 'dropped the pod\'s dispatches');
      return;
    }
    if (this.queues.get(uid) !== queue) return; // stopped meanwhile
    if (accepted) {
      this.next(uid, queue);
      return;
    }
    this.deps.metrics?.retried();
    this.deps.logger.debug({ podUid: uid, what: head.what, backOffMs }, 'no pod worker accepted a dispatch: sending it again');
    this.timers.set(uid, this.deps.clock.setTimer(backOffMs, () => void this.pump(uid, Math.min(backOffMs * 2, this.options.maxRetryMs))));
  }

  private next(uid: string, queue: Queued[]): void {
    queue.shift();
    if (queue.length === 0) this.queues.delete(uid);
    else void this.pump(uid, this.options.retryMs);
  }
}
