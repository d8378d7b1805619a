import type { PodOperation } from '@app/contracts';
import { Counter, Gauge, type Registry } from '@app/observability';
import { ConfigMetrics } from '../ports.js';

export class PromConfigMetrics extends ConfigMetrics {
  private readonly problemsGauge: Gauge;
  private readonly operationsCounter: Counter;

  constructor(registry: Registry) {
    super();
    this.problemsGauge = new Gauge({ name: 'kubelet_split_config_manifest_problems', help: 'Manifests or pods refused in the last listing, by source.', labelNames: ['source'], registers: [registry] });
    this.operationsCounter = new Counter({ name: 'kubelet_split_config_pod_updates_total', help: 'Pods in PodUpdate operations published, by source and operation.', labelNames: ['source', 'op'], registers: [registry] });
  }
  problems(source: string, count: number): void {
    this.problemsGauge.set({ source }, count);
  }
  operations(source: string, op: PodOperation, count: number): void {
    this.operationsCounter.inc({ source, op }, count);
  }
}
