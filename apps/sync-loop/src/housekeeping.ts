/**
 * HandlePodCleanups' decisions, as a pure function of what the node looks
 * like (pkg/kubelet/kubelet_pods.go): which runtime pods to kill, which
 * statuses to drop, which pods may keep probe workers, and which terminated
 * pods were added again and must be started anew.
 */
import { podWorkerState, type PodRecord, type PodStatus, type PodSyncStatusRecord } from '@app/contracts';
import { podIsEvicted } from '@app/kube';
import type { RuntimePod } from './ports.js';

export interface HousekeepingInput {
  desired: ReadonlyMap<string, PodRecord>;
  workers: ReadonlyMap<string, PodSyncStatusRecord>;
  runtimePods: readonly RuntimePod[];
  statuses: ReadonlyMap<string, PodStatus>;
}

export interface HousekeepingDecisions {
  /** Runtime pods no desired pod owns and no worker is handling: killed with a 1s grace period. */
  kill: RuntimePod[];
  /** Statuses of pods that are no longer desired. */
  orphanedStatuses: string[];
  /** Pods whose probe workers may keep running (possibly running pods). */
  possiblyRunning: string[];
  /** Terminated pods that are desired again (TerminatedAndRecreatedPod): SyncPodCreate. */
  restart: string[];
  /**
   * filterTerminalPodsToDelete: deleted, terminal pods no pod worker knows and
   * with nothing in the runtime (one rejected at admission, one already
   * terminal when this node first saw it): SyncPodKill, so that a worker
   * finishes them and the status manager may delete them.
   */
  terminalToDelete: string[];
  /**
   * Pods whose content should be removed (pod_workers.go
   * ShouldPodContentBeRemoved: no source wants them, or they were evicted,
   * and their worker finished or never had them) and that still have something in the
   * runtime, none of it running: their exited containers and stopped
   * sandboxes, which SyncTerminatedPod leaves to the container GC.
   */
  contentToRemove: string[];
}

export function isTerminalPhase(status: PodStatus | undefined): boolean {
  return status?.phase === 'Succeeded' || status?.phase === 'Failed';
}

export function decideHousekeeping(input: HousekeepingInput): HousekeepingDecisions {
  const { desired, workers, runtimePods, statuses } = input;
  const possiblyRunning: string[] = [];
  const restart: string[] = [];
  for (const [uid, record] of desired) {
    if (!record.admitted) continue;
    const worker = workers.get(uid);
    const state = worker ? podWorkerState(worker) : undefined;
    if (state === 'TerminatedPod') {
      // Added again after it terminated, or while it terminated (its worker then kept the
      // SyncPodCreate as restartRequested, as upstream's SyncKnownPods reads it): start it anew
      // once the worker finished (before, the worker drops a SyncPodCreate), unless it ended by itself.
      const terminatedAt = worker?.terminatedAt ?? 0;
      const addedAgain = record.addedAt > terminatedAt || worker?.restartRequested === true;
      if (worker?.finished === true && addedAgain && !record.terminationRequested && !isTerminalPhase(statuses.get(uid))) restart.push(uid);
      continue;
    }
    if (state === 'SyncPod' || state === 'TerminatingPod' || (state === undefined && !isTerminalPhase(statuses.get(uid)))) possiblyRunning.push(uid);
  }
  const kill = runtimePods.filter((rp) => {
    const state = workers.get(rp.uid);
    const worked = state !== undefined && podWorkerState(state) !== 'TerminatedPod';
    return rp.running && !worked && !desired.has(rp.uid);
  });
  const orphanedStatuses = [...statuses.keys()].filter((uid) => !desired.has(uid));
  const inRuntime = new Set(runtimePods.filter((rp) => rp.running).map((rp) => rp.uid));
  const terminalToDelete = [...desired]
    .filter(([uid, r]) => r.pod.metadata.deletionTimestamp !== undefined && (isTerminalPhase(r.pod.status) || isTerminalPhase(statuses.get(uid))) && !workers.has(uid) && !inRuntime.has(uid))
    .map(([uid]) => uid);
  const workerDone = (uid: string) => {
    const w = workers.get(uid);
    return w === undefined || w.finished === true;
  };
  const gone = (uid: string) => !desired.has(uid) || podIsEvicted(statuses.get(uid));
  const contentToRemove = runtimePods.filter((rp) => !rp.running && gone(rp.uid) && workerDone(rp.uid)).map((rp) => rp.uid);
  return { kill, orphanedStatuses, possiblyRunning, restart, terminalToDelete, contentToRemove };
}
