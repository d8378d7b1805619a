/**
 * The pod helpers of pkg/api/v1/pod/util.go (`podutil`) that the kubelet's
 * subsystems share: which init containers are sidecars, and a container's
 * status by name; and the status manager's lookup by container ID
 * (status_manager.go findContainerStatus). One home for each, so the sync loop, pod worker, prober
 * and status manager cannot drift apart on what a sidecar is.
 */
import type { Container, ContainerStatus, PodStatus } from '@app/contracts';
import { parseContainerID } from './container-helpers.js';

/**
 * IsRestartableInitContainer: an init container with `restartPolicy: Always`,
 * a sidecar that keeps running beside the regular containers. A missing
 * container is not one.
 */
export function isRestartableInitContainer(initContainer: Container | undefined): boolean {
  return initContainer?.restartPolicy === 'Always';
}

/** GetContainerStatus: the status of that name in the list, if any. */
export function getContainerStatus(statuses: readonly ContainerStatus[] | undefined, name: string): ContainerStatus | undefined {
  return statuses?.find((s) => s.name === name);
}

/**
 * status_manager.go findContainerStatus: the regular or init container status
 * with that container ID, bare or `containerd://<id>` (the form in the status).
 */
export function findContainerStatusByID(status: PodStatus, containerID: string): ContainerStatus | undefined {
  const id = parseContainerID(containerID).id;
  const matches = (s: ContainerStatus): boolean => typeof s.containerID === 'string' && parseContainerID(s.containerID).id === id;
  return status.containerStatuses?.find(matches) ?? status.initContainerStatuses?.find(matches);
}
