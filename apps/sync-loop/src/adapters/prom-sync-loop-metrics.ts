import type { SyncPodType } from '@app/contracts';
import { Counter, Gauge, type Registry } from '@app/observability';
import { SyncLoopMetrics } from '../ports.js';

/** SyncLoopMetrics on prom-client, registered in the service's registry. */
export class PromSyncLoopMetrics extends SyncLoopMetrics {
  private readonly dispatches: Counter<'update_type'>;
  private readonly dispatchRetries: Counter;
  private readonly dispatchesDropped: Counter<'reason'>;
  private readonly evictions: Counter<'eviction_signal'>;
  private readonly imagesCollected: Counter<'reason'>;
  private readonly orphansCleaned: Gauge;
  private readonly orphanErrors: Gauge;

  constructor(registry: Registry) {
    super();
    this.dispatches = new Counter({ name: 'kubelet_split_dispatched_work_total', help: 'dispatchWork calls, by update type.', labelNames: ['update_type'] as const, registers: [registry] });
    this.dispatchRetries = new Counter({ name: 'kubelet_split_work_dispatch_retries_total', help: 'dispatchWork requests sent again because no pod-worker owning the shard accepted them.', registers: [registry] });
    this.dispatchesDropped = new Counter({ name: 'kubelet_split_work_dispatch_dropped_total', help: 'dispatchWork requests given up unaccepted (left to the shard owner\'s reconciliation), by reason.', labelNames: ['reason'] as const, registers: [registry] });
    this.evictions = new Counter({ name: 'kubelet_evictions', help: 'Cumulative number of pod evictions by eviction signal', labelNames: ['eviction_signal'] as const, registers: [registry] });
    this.imagesCollected = new Counter({
      name: 'kubelet_image_garbage_collected_total',
      help: 'Total number of images garbage collected by the kubelet, whether through disk usage or image age.',
      labelNames: ['reason'] as const,
      registers: [registry],
    });
    this.orphansCleaned = new Gauge({ name: 'kubelet_orphan_pod_cleaned_volumes', help: 'The total number of orphaned Pods whose volumes were cleaned in the last periodic sweep.', registers: [registry] });
    this.orphanErrors = new Gauge({ name: 'kubelet_orphan_pod_cleaned_volumes_errors', help: 'The number of orphaned Pods whose volumes failed to be cleaned in the last periodic sweep.', registers: [registry] });
  }

  workDispatched(updateType: SyncPodType): void {
    this.dispatches.inc({ update_type: updateType });
  }

  workDispatchRetried(): void {
    this.dispatchRetries.inc();
  }

  workDispatchDropped(reason: 'expired' | 'displaced' | 'not-leader'): void {
    this.dispatchesDropped.inc({ reason });
  }

  podEvicted(signal: string): void {
    this.evictions.inc({ eviction_signal: signal });
  }

  imageGarbageCollected(reason: 'age' | 'space'): void {
    this.imagesCollected.inc({ reason });
  }

  orphanedPodDirsCleaned(cleaned: number, errors: number): void {
    this.orphansCleaned.set(cleaned);
    this.orphanErrors.set(errors);
  }
}
