/**
 * The pod helpers of pkg/api/v1/pod/util.go (`podutil`) that the kubelet's
 * subsystems share: which init containers are sidecars, and a container's
 * status by name. One home for each, so the sync loop, pod worker, prober
 * and status manager cannot drift apart on what a sidecar is.
 */
import type { Container, ContainerStatus } from '@app/contracts';

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
