/** The status manager's metrics (pkg/kubelet/metrics names). */
import { Gauge, Histogram, type Registry } from '@app/observability';
import { StatusMetrics, type DesiredPods } from '../ports.js';
import type { StatusManager } from '../status-manager.js';

export class PromStatusMetrics extends StatusMetrics {
  private readonly sync: Histogram;

  constructor(private readonly registry: Registry) {
    super();
    this.sync = new Histogram({ name: 'kubelet_pod_status_sync_duration_seconds', help: 'Duration in seconds to sync a pod status update.', buckets: [0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5], registers: [registry] });
  }

  synced(seconds: number): void {
    this.sync.observe(seconds);
  }

  /** The gauges read at scrape time: desired pods, running pods, running containers. */
  collectFrom(manager: Pick<StatusManager, 'statuses'>, desired: DesiredPods): void {
    const registers = [this.registry];
    new Gauge({ name: 'kubelet_desired_pods', help: 'The number of pods the kubelet is being instructed to run. static is true if the pod is not from the apiserver.', labelNames: ['static'], registers, async collect() {
      const records = await desired.all();
      const staticPods = records.filter((r) => r.source !== 'api').length;
      this.set({ static: 'true' }, staticPods);
      this.set({ static: 'false' }, records.length - staticPods);
    } });
    new Gauge({ name: 'kubelet_running_pods', help: 'Number of pods that have a running pod sandbox', registers, collect() {
      this.set(manager.statuses().filter(([, e]) => e.status.phase === 'Running' || (e.status.conditions ?? []).some((c) => c.type === 'PodReadyToStartContainers' && c.status === 'True')).length);
    } });
    new Gauge({ name: 'kubelet_running_containers', help: 'Number of containers currently running', labelNames: ['container_state'], registers, collect() {
      const counts: Record<string, number> = { running: 0, exited: 0, created: 0, unknown: 0 };
      for (const [, e] of manager.statuses()) {
        for (const c of [...(e.status.containerStatuses ?? []), ...(e.status.initContainerStatuses ?? [])]) {
          const state = c.state?.running ? 'running' : c.state?.terminated ? 'exited' : c.containerID ? 'created' : undefined;
          if (state) counts[state] = (counts[state] ?? 0) + 1;
        }
      }
      for (const [state, n] of Object.entries(counts)) this.set({ container_state: state }, n);
    } });
  }
}
