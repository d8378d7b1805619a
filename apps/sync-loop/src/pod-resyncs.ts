/**
 * podResync (ours: upstream's status manager and pod workers share one
 * process and need no such request): a new status-manager leader asks the
 * sync loop to sync every pod now (SyncLoop.resyncAll, queued behind the
 * runner's steps). The asker waits 2 s for the answer and asks again, up to
 * 30 times, so the requests are coalesced here, or one slow runner step
 * would leave 30 full-node dispatch waves queued behind it:
 *
 *  - a request that comes while a resync is queued (not run yet) shares it:
 *    at most one is queued, and it runs after every request it answers;
 *  - a request that comes within `recentMs` of a resync that ran is
 *    answered as done with that resync's count: every pod was just synced.
 *
 * Time comes from the Clock: the fake clock drives the window in tests.
 */
import { Clock } from '@app/clock';

/** How long after a resync ran a request is answered by it. */
export const RECENT_RESYNC_MS = 5000;

/** What a PodResyncs is built from. */
export interface PodResyncsDeps {
  clock: Clock;
  /** One resync of every pod, queued behind the sync loop's steps: how many pods it synced, undefined when it did not run (not leading). */
  resync: () => Promise<number | undefined>;
  recentMs?: number;
}

export class PodResyncs {
  /** The resync queued, which requests share until it ran. */
  private queued?: Promise<number | undefined>;
  /** The last resync that ran: when it ended, and how many pods it synced. */
  private last?: { at: number; pods: number };

  constructor(private readonly deps: PodResyncsDeps) {}

  /** Every pod synced now (or a moment ago): how many pods, undefined when it did not run. */
  request(): Promise<number | undefined> {
    if (this.queued) return this.queued;
    const last = this.last;
    if (last && this.deps.clock.now() - last.at < (this.deps.recentMs ?? RECENT_RESYNC_MS)) return Promise.resolve(last.pods);
    const run = this.deps.resync().then((pods) => {
      if (pods !== undefined) this.last = { at: this.deps.clock.now(), pods };
      return pods;
    });
    this.queued = run;
    const clear = () => {
      if (this.queued === run) this.queued = undefined;
    };
    run.then(clear, clear);
    return run;
  }
}
