import { Counter, Gauge, Histogram, type Registry } from '@app/observability';
import { PlegMetrics } from '../ports.js';

/** The kubelet's PLEG metrics (pkg/kubelet/metrics). */
export class PromPlegMetrics extends PlegMetrics {
  private readonly duration: Histogram;
  private readonly interval: Histogram;
  private readonly lastSeen: Gauge;
  private readonly discards: Counter;

  constructor(registry: Registry) {
    super();
    const registers = [registry];
    const buckets = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];
    this.duration = new Histogram({ name: 'kubelet_pleg_relist_duration_seconds', help: 'Duration in seconds for relisting pods in PLEG.', buckets, registers });
    this.interval = new Histogram({ name: 'kubelet_pleg_relist_interval_seconds', help: 'Interval in seconds between relisting in PLEG.', buckets, registers });
    this.lastSeen = new Gauge({ name: 'kubelet_pleg_last_seen_seconds', help: 'Timestamp in seconds when PLEG was last seen active.', registers });
    this.discards = new Counter({ name: 'kubelet_pleg_discard_events', help: 'The number of discard events in PLEG.', registers });
  }

  relisted(durationSeconds: number, intervalSeconds: number | undefined, at: number): void {
    this.duration.observe(durationSeconds);
    if (intervalSeconds !== undefined) this.interval.observe(intervalSeconds);
    this.lastSeen.set(at / 1000);
  }

  discarded(count: number): void {
    this.discards.inc(count);
  }

  /** kubelet_split_pleg_healthy, read at scrape time. */
  collectHealth(healthy: () => boolean, registry: Registry): void {
    new Gauge({ name: 'kubelet_split_pleg_healthy', help: '1 when the last successful relist is within RELIST_THRESHOLD.', registers: [registry], collect() {
      this.set(healthy() ? 1 : 0);
    } });
  }
}
