/**
 * kubelet_split_kv_watch_restarts_total{bucket, watcher, reason}: the KV
 * watches that died and were opened again (KvReflector). The kubelet has no
 * such metric (its reflectors' watches are client-go's, unmetered), hence the
 * kubelet_split_ prefix.
 *
 * One counter per process, registered in every service registry of it
 * (installKvWatchMetrics, from the service bootstrap): the watchers are built
 * far from the registry (mirrors inside adapters), and in one-process mode
 * each service's /metrics shows the process's count, told apart by `watcher`.
 */
import { Counter, type Registry } from '@app/observability';

const NAME = 'kubelet_split_kv_watch_restarts_total';

const restarts = new Counter({
  name: NAME,
  help: 'KV watches that died (ended, failed, or lost their consumer) and were listed and watched again',
  labelNames: ['bucket', 'watcher', 'reason'] as const,
  registers: [],
});

/** Counts one restart of a watch. */
export function kvWatchRestarted(bucket: string, watcher: string, reason: 'ended' | 'failed' | 'consumer-gone'): void {
  restarts.inc({ bucket, watcher, reason });
}

/** Shows the counter in `registry`'s /metrics (once per registry). */
export function installKvWatchMetrics(registry: Registry): void {
  if (!registry.getSingleMetric(NAME)) registry.registerMetric(restarts);
}
