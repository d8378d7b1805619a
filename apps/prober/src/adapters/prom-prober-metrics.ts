import { Counter, Histogram, type Registry } from '@app/observability';
import { ProberMetrics, type ProbeMetricLabels, type ProbeMetricResult } from '../ports.js';

const PROBE_METRIC_RESULTS: readonly ProbeMetricResult[] = ['successful', 'failed', 'unknown'];

/** ProberMetrics on prom-client, registered in the service's registry. */
export class PromProberMetrics extends ProberMetrics {
  private readonly total: Counter<'probe_type' | 'result' | 'container' | 'pod' | 'namespace'>;
  private readonly duration: Histogram<'probe_type' | 'container' | 'pod' | 'namespace'>;

  constructor(registry: Registry) {
    super();
    this.total = new Counter({
      name: 'prober_probe_total',
      help: 'Cumulative number of a liveness, readiness or startup probe for a container by result.',
      labelNames: ['probe_type', 'result', 'container', 'pod', 'namespace'] as const,
      registers: [registry],
    });
    this.duration = new Histogram({
      name: 'prober_probe_duration_seconds',
      help: 'Duration in seconds for a probe response.',
      labelNames: ['probe_type', 'container', 'pod', 'namespace'] as const,
      registers: [registry],
    });
  }

  observe(labels: ProbeMetricLabels, result: ProbeMetricResult, durationSeconds?: number): void {
    this.total.inc({ probe_type: labels.probe_type, result, container: labels.container, pod: labels.pod, namespace: labels.namespace });
    if (durationSeconds !== undefined) this.duration.observe({ ...labels }, durationSeconds);
  }

  forget(labels: ProbeMetricLabels): void {
    for (const result of PROBE_METRIC_RESULTS) this.total.remove({ probe_type: labels.probe_type, result, container: labels.container, pod: labels.pod, namespace: labels.namespace });
    this.duration.remove({ ...labels });
  }
}
