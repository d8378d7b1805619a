/** The pod worker's metrics, with pkg/kubelet/metrics' names. */
import { Counter, Gauge, Histogram, type Registry } from '@app/observability';
import type { PodWorkerMetrics, PodWorkers } from '../pod-workers.js';
import type { ContainerType, RuntimeMetrics } from '../kuberuntime/runtime-manager.js';

export class PromPodWorkerMetrics implements RuntimeMetrics, PodWorkerMetrics {
  private readonly started: Counter;
  private readonly startedErrors: Counter;
  private readonly startedPods: Counter;
  private readonly startedPodsErrors: Counter;
  private readonly podStart: Histogram;
  private readonly restarted: Counter;
  private readonly duration: Histogram;

  constructor(private readonly registry: Registry) {
    const registers = [registry];
    this.started = new Counter({ name: 'kubelet_started_containers_total', help: 'Cumulative number of containers started', labelNames: ['container_type'], registers });
    this.startedErrors = new Counter({ name: 'kubelet_started_containers_errors_total', help: 'Cumulative number of errors when starting containers', labelNames: ['container_type', 'code'], registers });
    this.startedPods = new Counter({ name: 'kubelet_started_pods_total', help: 'Cumulative number of pods started', registers });
    this.startedPodsErrors = new Counter({ name: 'kubelet_started_pods_errors_total', help: 'Cumulative number of errors when starting pods', registers });
    this.podStart = new Histogram({ name: 'kubelet_pod_start_duration_seconds', help: 'Duration in seconds from kubelet seeing a pod for the first time to the pod starting to run', buckets: [0.5, 1, 2, 3, 4, 5, 6, 8, 10, 20, 30, 45, 60, 120, 180, 240, 300, 360, 480, 600, 900, 1200, 1800, 2700, 3600], registers });
    this.restarted = new Counter({ name: 'kubelet_restarted_pods_total', help: 'Number of pods that have been restarted because they were deleted and recreated with the same UID while the kubelet was watching them (common for static pods, extremely uncommon for API pods)', labelNames: ['static'], registers });
    this.duration = new Histogram({ name: 'kubelet_pod_worker_duration_seconds', help: 'Duration in seconds to sync a single pod. Broken down by operation type: create, update, or sync', labelNames: ['operation_type'], buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60], registers });
  }

  startedContainer(type: ContainerType, failed: boolean, code?: string): void {
    if (failed) this.startedErrors.inc({ container_type: type, code: code ?? '' });
    else this.started.inc({ container_type: type });
  }

  startedPod(failed: boolean): void {
    if (failed) this.startedPodsErrors.inc();
    else this.startedPods.inc();
  }

  /** kubelet_pod_start_duration_seconds. */
  podStarted(seconds: number): void {
    this.podStart.observe(seconds);
  }

  syncDuration(operation: 'create' | 'update' | 'sync' | 'terminating' | 'terminated', seconds: number): void {
    this.duration.observe({ operation_type: operation }, seconds);
  }

  restartedPod(isStatic: boolean): void {
    this.restarted.inc({ static: String(isStatic) });
  }

  /** kubelet_working_pods, read from the pod workers at scrape time. */
  collectWorking(workers: Pick<PodWorkers, 'working'>): void {
    new Gauge({ name: 'kubelet_working_pods', help: 'Number of pods the kubelet is actually running, broken down by lifecycle phase.', labelNames: ['lifecycle'], registers: [this.registry], collect() {
      const w = workers.working;
      this.set({ lifecycle: 'sync' }, w.sync);
      this.set({ lifecycle: 'terminating' }, w.terminating);
      this.set({ lifecycle: 'terminated' }, w.terminated);
    } });
  }
}
