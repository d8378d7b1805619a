/**
 * The runtime's view of one pod as the kubelet's runtime manager uses it
 * (kubecontainer.PodStatus), derived from a pod cache entry: sandboxes
 * newest first, and each container with its name, state, times, exit code,
 * the spec hash and restart count the kubelet stored in its annotations.
 * Containers are sorted newest first, so the first of a name is the latest.
 */
import type { PodCacheEntry } from '@app/contracts';
import type { ContainerStatus as CriContainerStatus, PodSandboxStatus } from '@app/cri';
import { KubeletLabels } from './labels.js';

/** Annotations the kubelet puts on CRI containers (pkg/kubelet/kuberuntime/labels.go). */
export const KubeletAnnotations = {
  containerHash: 'io.kubernetes.container.hash',
  restartCount: 'io.kubernetes.container.restartCount',
  terminationMessagePath: 'io.kubernetes.container.terminationMessagePath',
  terminationMessagePolicy: 'io.kubernetes.container.terminationMessagePolicy',
  podTerminationGracePeriod: 'io.kubernetes.pod.terminationGracePeriod',
  podDeletionGracePeriod: 'io.kubernetes.pod.deletionGracePeriod',
  preStopHandler: 'io.kubernetes.container.preStopHandler',
  ports: 'io.kubernetes.container.ports',
} as const;

/** kubecontainer.State */
export type RuntimeContainerState = 'created' | 'running' | 'exited' | 'unknown';

/** kubecontainer.Status: one container as the runtime has it. */
export interface RuntimeContainerStatus {
  id: string;
  name: string;
  state: RuntimeContainerState;
  /** ms since the epoch; 0 when unset. */
  createdAt: number;
  startedAt: number;
  finishedAt: number;
  exitCode: number;
  reason: string;
  message: string;
  image: string;
  imageRef: string;
  /** The container spec hash the kubelet stored when it created the container. */
  hash: string;
  restartCount: number;
  /** The identity its process runs as (CRI ContainerStatus.user): containerd 2 reports it, 1.6 does not. */
  user?: RuntimeContainerUser;
}

/** kubecontainer.ContainerUser: the uid, gid and supplemental groups of the container's first process. */
export interface RuntimeContainerUser {
  linux?: { uid: number; gid: number; supplementalGroups: number[] };
}

/** kubecontainer.PodStatus */
export interface RuntimePodStatus {
  uid: string;
  name: string;
  namespace: string;
  ips: string[];
  sandboxStatuses: PodSandboxStatus[];
  /** Newest first. */
  containerStatuses: RuntimeContainerStatus[];
  /** When the cache entry was made (ms); 0 for an empty status. */
  timestamp: number;
}

const nsToMs = (ns: string | undefined): number => (ns && ns !== '0' ? Number(BigInt(ns) / 1_000_000n) : 0);

export function runtimeContainerState(s: string | undefined): RuntimeContainerState {
  switch (s) {
    case 'CONTAINER_CREATED':
      return 'created';
    case 'CONTAINER_RUNNING':
      return 'running';
    case 'CONTAINER_EXITED':
      return 'exited';
    default:
      return 'unknown';
  }
}

export function toRuntimeContainerStatus(c: CriContainerStatus): RuntimeContainerStatus {
  return {
    id: c.id,
    name: c.labels?.[KubeletLabels.containerName] ?? c.metadata?.name ?? '',
    state: runtimeContainerState(c.state),
    createdAt: nsToMs(c.createdAt),
    startedAt: nsToMs(c.startedAt),
    finishedAt: nsToMs(c.finishedAt),
    exitCode: c.exitCode ?? 0,
    reason: c.reason ?? '',
    message: c.message ?? '',
    image: c.image?.image ?? '',
    imageRef: c.imageRef ?? '',
    hash: c.annotations?.[KubeletAnnotations.containerHash] ?? '',
    restartCount: Number(c.annotations?.[KubeletAnnotations.restartCount] ?? c.metadata?.attempt ?? 0) || 0,
    ...(c.user ? { user: toRuntimeContainerUser(c.user) } : {}),
  };
}

/** toKubeContainerUser: int64s as numbers (the cache's JSON carries them as decimal strings or numbers). */
function toRuntimeContainerUser(u: NonNullable<CriContainerStatus['user']>): RuntimeContainerUser {
  const l = u.linux;
  return l ? { linux: { uid: Number(l.uid), gid: Number(l.gid), supplementalGroups: (l.supplementalGroups ?? []).map(Number) } } : {};
}

/** The runtime pod status a cache entry describes; an empty one when the runtime has nothing. */
export function toRuntimePodStatus(uid: string, entry: PodCacheEntry | undefined): RuntimePodStatus {
  if (!entry) return { uid, name: '', namespace: '', ips: [], sandboxStatuses: [], containerStatuses: [], timestamp: 0 };
  const containers = (entry.containerStatuses as CriContainerStatus[]).map(toRuntimeContainerStatus).sort((a, b) => b.createdAt - a.createdAt);
  return { uid, name: entry.name, namespace: entry.namespace, ips: entry.ips, sandboxStatuses: entry.sandboxStatuses as PodSandboxStatus[], containerStatuses: containers, timestamp: entry.timestamp };
}

/** FindContainerStatusByName: the newest container of that name. */
export function findContainerStatus(status: RuntimePodStatus, name: string): RuntimeContainerStatus | undefined {
  return status.containerStatuses.find((c) => c.name === name);
}
