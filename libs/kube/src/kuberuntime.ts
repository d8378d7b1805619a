/**
 * The runtime manager's helpers that status generation needs too
 * (pkg/kubelet/kuberuntime): util/util.go PodSandboxChanged and
 * NetworkNamespaceForPod, kuberuntime_container.go
 * hasAnyRegularContainerCreated. The pod worker's computePodActions decides
 * with them what a sync does; generateAPIPodStatus reports from them
 * (PodReadyToStartContainers, init containers inferred complete), so the two
 * cannot disagree.
 */
import type { Pod } from '@app/contracts';
import type { PodSandboxStatus } from '@app/cri';
import { findContainerStatus, type RuntimePodStatus } from './runtime-status.js';

/** What PodSandboxChanged answers. */
export interface SandboxChange {
  changed: boolean;
  attempt: number;
  sandboxId: string;
  /** Why a new sandbox is needed (upstream's log line); absent when unchanged. */
  reason?: string;
}

/** NetworkNamespaceForPod: the CRI namespace mode of the pod's network. */
export function networkNamespaceForPod(pod: Pod): 'NODE' | 'POD' {
  return pod.spec.hostNetwork ? 'NODE' : 'POD';
}

/**
 * PodSandboxChanged: whether the pod needs a new sandbox, the attempt for it,
 * and the newest sandbox's id. The sandboxes are newest first. Upstream takes
 * the newest sandbox's attempt + 1; we take the highest of all + 1, so an
 * attempt number is never reused.
 */
export function podSandboxChanged(pod: Pod, status: RuntimePodStatus): SandboxChange {
  const newest: PodSandboxStatus | undefined = status.sandboxStatuses[0];
  if (!newest) return { changed: true, attempt: 0, sandboxId: '', reason: 'No sandbox for pod can be found. Need to start a new one' };

  let readyCount = 0;
  let maxAttempt = 0;
  for (const s of status.sandboxStatuses) {
    if (s.state === 'SANDBOX_READY') readyCount++;
    maxAttempt = Math.max(maxAttempt, s.metadata?.attempt ?? 0);
  }
  if (readyCount > 1) {
    return { changed: true, attempt: maxAttempt + 1, sandboxId: newest.id, reason: 'Multiple sandboxes are ready for Pod. Need to reconcile them' };
  }
  if (newest.state !== 'SANDBOX_READY') {
    return { changed: true, attempt: maxAttempt + 1, sandboxId: newest.id, reason: 'No ready sandbox for pod can be found. Need to start a new one' };
  }
  // An absent mode is the protobuf zero value, POD (upstream's GetNetwork() on nil).
  if ((newest.linux?.namespaces?.options?.network ?? 'POD') !== networkNamespaceForPod(pod)) {
    return { changed: true, attempt: maxAttempt + 1, sandboxId: '', reason: 'Sandbox for pod has changed. Need to start a new one' };
  }
  // Upstream: `!IsHostNetworkPod(pod) && sandboxStatus.Network != nil && sandboxStatus.Network.Ip == ""` (an absent ip is Go's "").
  if (!pod.spec.hostNetwork && newest.network && !newest.network.ip) {
    return { changed: true, attempt: maxAttempt + 1, sandboxId: newest.id, reason: 'Sandbox for pod has no IP address. Need to start a new one' };
  }
  return { changed: false, attempt: maxAttempt, sandboxId: newest.id };
}

/** hasAnyRegularContainerCreated: the newest instance of some regular container is created, running or exited. */
export function hasAnyRegularContainerCreated(pod: Pod, status: RuntimePodStatus): boolean {
  return pod.spec.containers.some((c) => {
    const state = findContainerStatus(status, c.name)?.state;
    return state === 'created' || state === 'running' || state === 'exited';
  });
}
