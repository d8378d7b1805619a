/**
 * The final status of a pod whose containers are all gone:
 * pkg/kubelet/status/status_manager.go TerminatePod. Any container not known
 * to have terminated is marked terminated with exit code 137, reason
 * ContainerStatusUnknown; a non-static pod still Pending or Running becomes
 * Failed. The status manager calls it; the pod worker's terminated pods
 * reach it through the status manager.
 */
import type { ContainerState, ContainerStatus, Pod, PodStatus } from '@app/contracts';
import { rfc3339 } from './api-time.js';
import { isPodPhaseTerminal } from './pod-phase.js';
import { isStaticPod } from './static-pod.js';

/** kubecontainer's reason for a container the runtime no longer knows. */
export const ContainerStatusUnknown = 'ContainerStatusUnknown';
export const UNKNOWN_AT_TERMINATION = 'The container could not be located when the pod was terminated';

function unknownAtTermination(): ContainerState {
  return { terminated: { exitCode: 137, reason: ContainerStatusUnknown, message: UNKNOWN_AT_TERMINATION } };
}

/**
 * hasPodInitialized: some regular container has left waiting, or the last
 * init container succeeded. Upstream reads the API pod's status; we read the
 * status being terminated, the newest we have (a static pod has no API
 * status).
 */
function hasPodInitialized(pod: Pod, status: PodStatus): boolean {
  if ((pod.spec.initContainers ?? []).length === 0) return true;
  for (const s of status.containerStatuses ?? []) {
    if (s.lastState?.terminated || !s.state?.waiting) return true;
  }
  const inits = status.initContainerStatuses ?? [];
  const last = inits[inits.length - 1];
  if (last) {
    if (last.lastState?.terminated?.exitCode === 0) return true;
    if (last.state?.terminated?.exitCode === 0) return true;
  }
  return false;
}

/** initializedContainers: the init statuses but the trailing ones that never started; at least the first. */
function initializedContainers(statuses: ContainerStatus[]): ContainerStatus[] {
  for (let i = statuses.length - 1; i >= 0; i--) {
    const s = statuses[i];
    if (s && (!s.state?.waiting || s.lastState?.terminated)) return statuses.slice(0, i + 1);
  }
  return statuses.slice(0, 1);
}

/**
 * TerminatePod: the final status of a pod whose containers are all gone.
 * Any container not known to have terminated is marked terminated with 137
 * (ContainerStatusUnknown): regular containers once the pod had initialized,
 * init containers up to the last one that started. A non-static pod still
 * Pending or Running becomes Failed (upstream does not yet give static pods
 * a terminal phase: #116484).
 */
export function terminatePodStatus(pod: Pod, status: PodStatus, now: number): PodStatus {
  const next = structuredClone(status);
  if (hasPodInitialized(pod, next)) {
    for (const s of next.containerStatuses ?? []) if (!s.state?.terminated) s.state = unknownAtTermination();
  }
  for (const s of initializedContainers(next.initContainerStatuses ?? [])) if (!s.state?.terminated) s.state = unknownAtTermination();
  if (!isStaticPod(pod) && !isPodPhaseTerminal(next.phase)) next.phase = 'Failed';
  // updateStatusInternal: the status it keeps always has these.
  for (const c of next.conditions ?? []) c.lastTransitionTime ??= rfc3339(now);
  next.startTime ??= rfc3339(now);
  return next;
}
