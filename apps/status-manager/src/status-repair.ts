/**
 * What a status manager does as it starts leading, after restoring
 * `pod-status` and replaying what it heard as a standby: it asks the
 * leading sync loop to sync every pod now (Subjects.podResync), so that
 * every pod worker sends its pod's status to it at once. A leader that was
 * not running when a status changed (both instances down, or a restarted
 * one that won the lease) would otherwise serve the old status until the
 * pod's next periodic sync, a minute or more later (issue 28 item 13:
 * Pending for 60 to 90 s while the pod ran). Ours: upstream's status
 * manager lives in the process of the pod workers and misses nothing.
 *
 *   lead ─▶ ask ──leading sync loop answered──▶ done (n pods dispatched)
 *            │ a standby answered, or none in time
 *            └─▶ still leading? ─▶ wait retryMs ─▶ ask again (at most `attempts` times, then left to the resync)
 */
import type { Clock } from '@app/clock';
import type { Logger } from '@app/observability';
import type { PodResync } from './ports.js';

export interface RepairStatusesOptions {
  resync: PodResync;
  clock: Clock;
  logger: Logger;
  /** Whether this term still leads; asked before each attempt. */
  isLeader: () => boolean;
  /** Who asks, for the sync loop's log. */
  reason: string;
  retryMs?: number;
  attempts?: number;
}

/** Asks until the leading sync loop answers; resolves the pods it dispatched, or undefined when it never answered (or the term ended). */
export async function repairStatuses(o: RepairStatusesOptions): Promise<number | undefined> {
  const attempts = o.attempts ?? 30;
  for (let i = 0; i < attempts; i++) {
    if (!o.isLeader()) return undefined;
    const r = await o.resync.resyncAll(o.reason);
    if (r?.leading) {
      o.logger.info({ pods: r.pods, attempts: i + 1 }, 'leading: every pod synced now, its status sent again');
      return r.pods;
    }
    await o.clock.sleep(o.retryMs ?? 1000);
  }
  o.logger.warn({ attempts }, 'no leading sync loop answered; the statuses are repaired at each pod\'s next sync');
  return undefined;
}
