/**
 * One prom-client registry per service, with `service` and `node` as default
 * labels on every series, plus the process's default metrics. Metric names
 * follow the kubelet's where one exists (kubelet_*, prober_*).
 */
import { Registry, collectDefaultMetrics } from 'prom-client';

export { Counter, Gauge, Histogram, Registry, Summary } from 'prom-client';

export function createMetricsRegistry(labels: { service: string; node: string }): Registry {
  const registry = new Registry();
  registry.setDefaultLabels(labels);
  collectDefaultMetrics({ register: registry });
  return registry;
}
