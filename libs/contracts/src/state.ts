/**
 * What the KV buckets hold (DESIGN.md "State: JetStream KV, one writer per
 * bucket"). Keys are `<node token>.<...>`; values are these JSON records.
 * Each has exactly one writing service; readers must accept records written
 * by a newer version (fields are only added).
 */
import type { Pod, PodStatus } from './kube.js';

/** `pods` bucket, key `<node>.pod.<uid>`: a desired pod in the sync loop's podManager. */
export interface PodRecord {
  pod: Pod;
  /** The config source it came from ("file", "http", "api"). */
  source: string;
  /** When the sync loop first took it in (ms since the epoch). */
  addedAt: number;
  /** Whether canAdmitPod let it run. A rejected pod is Failed and never dispatched. */
  admitted: boolean;
  rejection?: { reason: string; message: string };
  /** A DELETE (graceful deletion) or REMOVE was asked for. */
  terminationRequested?: boolean;
}

/** `pods` bucket, key `<node>.queue.<uid>`: when the pod is due for its next sync (the kubelet's workQueue). */
export interface WorkQueueRecord {
  dueAt: number;
}

/** `workers` bucket, key `<node>.<uid>`: the pod worker's podSyncStatus. */
export interface PodSyncStatusRecord {
  /** ms since the epoch; absent until the first sync. */
  syncedAt?: number;
  terminatingAt?: number;
  terminatedAt?: number;
  /** The grace period the termination runs with, in seconds. */
  gracePeriod?: number;
  /** The worker is done with this UID (TerminatedPod completed). */
  finished?: boolean;
  /**
   * The pod the worker last took (upstream's activeUpdate.Pod), so that a
   * replica taking the shard over can finish a pod that is no longer in the
   * podManager with its own grace period and hooks. Absent for a runtime
   * pod killed on its own (runningPodOnly).
   */
  pod?: Pod;
}

/** The pod worker's state for a UID, as HandlePodCleanups classifies it (SyncKnownPods). */
export type PodWorkerState = 'SyncPod' | 'TerminatingPod' | 'TerminatedPod';

export function podWorkerState(s: PodSyncStatusRecord): PodWorkerState {
  if (s.terminatedAt !== undefined || s.finished) return 'TerminatedPod';
  if (s.terminatingAt !== undefined) return 'TerminatingPod';
  return 'SyncPod';
}

/** `pod-status` bucket, key `<node>.<uid>`: the status manager's versioned status. */
export interface VersionedPodStatusRecord {
  version: number;
  podName: string;
  podNamespace: string;
  status: PodStatus;
}

/**
 * `pod-cache` bucket, key `<node>.pod.<uid>`: the runtime's view of one pod
 * as the PLEG last inspected it (the kubelet's kubecontainer.PodStatus in the
 * podCache). Sandbox and container statuses are the CRI's, in its JSON form.
 */
export interface PodCacheEntry {
  uid: string;
  name: string;
  namespace: string;
  /** When the PLEG's relist that produced this began (ms since the epoch); never goes back. */
  timestamp: number;
  /** PodSandboxStatus of each sandbox, newest first. */
  sandboxStatuses: unknown[];
  /** ContainerStatus of each container. */
  containerStatuses: unknown[];
  /** The pod's IPs, from its newest ready sandbox. */
  ips: string[];
}

/** `pod-cache` bucket, key `<node>.global`: the cache's clock; every pod is at least this fresh. */
export interface PodCacheGlobal {
  timestamp: number;
}
