import { Counter, Histogram, type Registry } from '@app/observability';
import { RuntimeMetrics } from '../ports.js';

/** The kubelet's buckets for runtime operation durations (metrics.ExponentialBuckets(.005, 2.5, 14)). */
const BUCKETS = Array.from({ length: 14 }, (_, i) => 0.005 * 2.5 ** i);

/** RuntimeMetrics on prom-client, with the kubelet's metric names. */
export class RuntimeMetricsRecorder extends RuntimeMetrics {
  private readonly operations: Counter<'operation_type'>;
  private readonly durations: Histogram<'operation_type'>;
  private readonly errors: Counter<'operation_type'>;
  private readonly runPodSandbox: Histogram<'runtime_handler'>;
  private readonly runPodSandboxErrors: Counter<'runtime_handler'>;

  constructor(registry: Registry) {
    super();
    const registers = [registry];
    this.operations = new Counter({ name: 'kubelet_runtime_operations_total', help: 'Cumulative number of runtime operations by operation type.', labelNames: ['operation_type'], registers });
    this.durations = new Histogram({ name: 'kubelet_runtime_operations_duration_seconds', help: 'Duration in seconds of runtime operations. Broken down by operation type.', labelNames: ['operation_type'], buckets: BUCKETS, registers });
    this.errors = new Counter({ name: 'kubelet_runtime_operations_errors_total', help: 'Cumulative number of runtime operation errors by operation type.', labelNames: ['operation_type'], registers });
    this.runPodSandbox = new Histogram({ name: 'kubelet_run_podsandbox_duration_seconds', help: 'Duration in seconds of the run_podsandbox operations. Broken down by RuntimeClass.Handler.', labelNames: ['runtime_handler'], buckets: BUCKETS, registers });
    this.runPodSandboxErrors = new Counter({ name: 'kubelet_run_podsandbox_errors_total', help: 'Cumulative number of the run_podsandbox operation errors by RuntimeClass.Handler.', labelNames: ['runtime_handler'], registers });
  }

  observe(operation: string, seconds: number, failed: boolean): void {
    this.operations.inc({ operation_type: operation });
    this.durations.observe({ operation_type: operation }, seconds);
    if (failed) this.errors.inc({ operation_type: operation });
  }

  observeRunPodSandbox(runtimeHandler: string, seconds: number, failed: boolean): void {
    this.runPodSandbox.observe({ runtime_handler: runtimeHandler }, seconds);
    if (failed) this.runPodSandboxErrors.inc({ runtime_handler: runtimeHandler });
  }
}
