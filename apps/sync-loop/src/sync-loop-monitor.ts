/**
 * The kubelet's syncLoopMonitor (pkg/kubelet/kubelet.go syncLoop:
 * `kl.syncLoopMonitor.Store(kl.clock.Now())` before and after each
 * syncLoopIteration), which SyncLoopHealthCheck reads for the kubelet
 * server's `/healthz`. Here the loop and the server are different
 * processes, so the leading sync loop keeps the time in the `pods` bucket
 * (`<node>.sync-loop-monitor`), beside the threshold the reader applies.
 *
 *   syncCh tick ─▶ entered(now) ─▶ kept ─▶ written when the last write is older than writePeriodMs
 *
 * Invariants:
 *  - Only the syncCh tick enters the loop here: it is gated as upstream's
 *    whole iteration is (no entry while the runtime or the PLEG is
 *    unhealthy, runtimeState.runtimeErrors), so a loop that skips its
 *    iterations, a stalled process, or no leader at all lets the time go
 *    stale, and `/healthz` fails once it is older than the threshold.
 *  - Writes are spaced (a quarter of the threshold, at most 10 s): the
 *    threshold is minutes by default, a KV write a second would be waste.
 *  - A failed write is logged once and tried at the next entry; it never
 *    stops the loop.
 */
import { Clock } from '@app/clock';
import type { Logger } from '@app/observability';
import { SyncLoopMonitorStore } from './ports.js';

/** SyncLoopHealthCheck's floor: `minDuration := time.Minute * 5`. */
export const SYNC_LOOP_HEALTH_MIN_MS = 5 * 60_000;

/** SyncLoopHealthCheck's threshold: `kl.resyncInterval * 2`, at least five minutes. */
export function syncLoopHealthThreshold(resyncIntervalMs: number): number {
  return Math.max(2 * resyncIntervalMs, SYNC_LOOP_HEALTH_MIN_MS);
}

export interface SyncLoopMonitorDeps {
  store: SyncLoopMonitorStore;
  clock: Clock;
  logger: Logger;
  /** How old the entry time may be before `/healthz` fails. */
  healthThresholdMs: number;
  /** `<service>@<node>#<instance>`, written beside the time. */
  writer: string;
}

export class SyncLoopMonitor {
  private latest?: number;
  private writtenAt?: number;
  private writing = false;
  private failing = false;

  constructor(private readonly deps: SyncLoopMonitorDeps) {}

  /** How often the time is written: a quarter of the threshold, at most 10 s. */
  get writePeriodMs(): number {
    return Math.min(10_000, Math.floor(this.deps.healthThresholdMs / 4));
  }

  /** LatestLoopEntryTime, as last entered (undefined before the first entry). */
  get latestLoopEntryTime(): number | undefined {
    return this.latest;
  }

  /** The loop entered (or left) an iteration now; resolves once a write it started is done. */
  async entered(): Promise<void> {
    const now = this.deps.clock.now();
    this.latest = now;
    if (this.writing || (this.writtenAt !== undefined && now - this.writtenAt < this.writePeriodMs)) return;
    this.writing = true;
    try {
      await this.deps.store.put({ latestLoopEntryTime: now, healthThresholdMs: this.deps.healthThresholdMs, writer: this.deps.writer });
      this.writtenAt = now;
      if (this.failing) this.deps.logger.info('sync loop monitor written again');
      this.failing = false;
    } catch (err) {
      if (!this.failing) this.deps.logger.warn({ err: (err as Error).message }, 'could not write the sync loop monitor; /healthz may go stale');
      this.failing = true;
    } finally {
      this.writing = false;
    }
  }

  /** A new term writes at its first entry, whatever the last term wrote. */
  startTerm(): void {
    this.writtenAt = undefined;
  }
}
