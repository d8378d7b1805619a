/**
 * How a single-active service (sync-loop, pleg, status-manager) begins a
 * term (docs/adr/0011-leader-election.md): it reads back what the last
 * leader left in KV before it acts, then starts acting, unless leadership
 * was lost meanwhile.
 *
 *   onStartedLeading ─▶ restore ──loaded─────────────────────────────▶ still leading? ──yes──▶ lead
 *                          │ failed                                          │ no: done (the next term restores again)
 *                          ├── 'retry': wait retryMs ─▶ still leading? ──yes──▶ restore again
 *                          │                                 │ no: done
 *                          └── 'lead-without' ─────────────────────────────▶ still leading? ──yes──▶ lead
 *
 * 'retry' is for state a leader must not act without (status-manager's
 * statuses: without them it would version every status from scratch);
 * 'lead-without' for state that only saves work (pleg's view of the pod
 * cache: without it the first relist reports every container as new).
 */
import type { Clock } from '@app/clock';

/** What a failed restore does: try again after a wait, or lead without the state. */
export type RestoreFailurePolicy = 'retry' | 'lead-without';

/** How long a leader waits before it reads its predecessor's state again. */
export const RESTORE_RETRY_MS = 1000;

export interface RestoreThenLeadOptions {
  clock: Clock;
  /** Whether this replica may still act; asked after each attempt and each wait, before anything else happens. */
  isLeader: () => boolean;
  /** Reads back the state the last leader left (and logs what it found). */
  restore: () => Promise<unknown>;
  ifRestoreFails: RestoreFailurePolicy;
  /** Told of each failed restore, before the wait or leading without it. */
  onRestoreError?: (err: Error) => void;
  /** The wait between attempts under 'retry'; RESTORE_RETRY_MS by default. */
  retryMs?: number;
  /** Starts acting for the term: called at most once, and only while leading. */
  lead: () => void | Promise<void>;
}

/**
 * Restores, then leads (see the header). Resolves true once `lead` has run,
 * false when leadership was lost first; a rejection of `lead` is passed on.
 */
export async function restoreThenLead(o: RestoreThenLeadOptions): Promise<boolean> {
  for (;;) {
    try {
      await o.restore();
      break;
    } catch (err) {
      o.onRestoreError?.(err instanceof Error ? err : new Error(String(err)));
      if (o.ifRestoreFails === 'lead-without') break;
      await o.clock.sleep(o.retryMs ?? RESTORE_RETRY_MS);
    }
    if (!o.isLeader()) return false;
  }
  if (!o.isLeader()) return false;
  await o.lead();
  return true;
}
