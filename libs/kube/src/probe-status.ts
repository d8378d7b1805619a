/**
 * What probe results mean for a container's `started` and `ready`:
 * pkg/kubelet/prober/prober_manager.go UpdatePodStatus, the overlay both the
 * status generation (generateAPIPodStatus) and the prober (for the statuses
 * its workers read) lay on container statuses. Where the results come from
 * differs (the pod worker's cached results, the prober's own workers), so
 * the caller says whether a container is started and ready; the overlay is
 * the same:
 *
 *   regular container, sidecar   started = isContainerStarted
 *                                ready   = started && isContainerReady (left as it is when not started)
 *   regular init container       started = isContainerStarted
 *                                ready   = true once it exited 0 (else left as it is)
 */
import type { Container, ContainerStatus, PodStatus } from '@app/contracts';
import { isRestartableInitContainer } from './pod-util.js';

/** The caller's reading of its probe results for one container status. */
export interface ContainerProbeState {
  /** isContainerStarted: running, and its startup probe (if any) succeeded. */
  isContainerStarted(status: ContainerStatus): boolean;
  /** Running and its readiness probe (if any) succeeded; asked only of a started container. */
  isContainerReady(status: ContainerStatus): boolean;
}

/**
 * UpdatePodStatus: sets `started` and `ready` on every container status in
 * place. `initContainers` tells the sidecars (by name; a status whose spec is
 * not known is taken for a regular init container).
 */
export function applyProbeResults(
  status: Pick<PodStatus, 'containerStatuses' | 'initContainerStatuses'>,
  initContainers: readonly Container[] | undefined,
  probes: ContainerProbeState,
): void {
  for (const cs of status.containerStatuses ?? []) {
    cs.started = probes.isContainerStarted(cs);
    if (cs.started) cs.ready = probes.isContainerReady(cs);
  }
  for (const cs of status.initContainerStatuses ?? []) {
    cs.started = probes.isContainerStarted(cs);
    if (!isRestartableInitContainer(initContainers?.find((c) => c.name === cs.name))) {
      // A regular init container is ready once it has exited successfully.
      if (cs.state?.terminated?.exitCode === 0) cs.ready = true;
      continue;
    }
    if (cs.started) cs.ready = probes.isContainerReady(cs);
  }
}
