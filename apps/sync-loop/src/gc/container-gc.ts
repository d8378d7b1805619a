/**
 * The kubelet's container garbage collector (pkg/kubelet/kuberuntime/
 * kuberuntime_gc.go GarbageCollect, pkg/kubelet/container/container_gc.go),
 * its decisions as a pure function of what the runtime and the node hold:
 *
 *   evictContainers   dead containers (not running, older than MinAge), grouped
 *                     by (pod UID, container name), newest first: all of a
 *                     deleted pod's, and beyond MaxPerPodContainer (then
 *                     MaxContainers node-wide) the oldest of the others
 *   evictSandboxes    a deleted pod's inactive sandboxes, and a desired pod's
 *                     inactive ones but its newest (inactive: not ready, and
 *                     no container left in it)
 *   evictPodLogsDirectories
 *                     the log directory of a deleted pod once it has no sandbox
 *
 * Invariant (ADR 0014): a pod that is terminating, or whose pod worker has not
 * finished with it, is its worker's; GC touches none of its containers,
 * sandboxes or logs. A deleted pod is one no source wants any more (not in
 * the podManager), or one evicted (Failed / Evicted, still in the API),
 * whose worker is gone or finished (pod_workers.go ShouldPodContentBeRemoved);
 * nothing is judged deleted before every source has delivered
 * (allSourcesReady). A finished pod that stays keeps its newest dead
 * containers and its newest sandbox: SyncTerminatedPod leaves them here.
 */
import type { Clock } from '@app/clock';
import { podWorkerState, type PodRecord, type PodStatus, type PodSyncStatusRecord } from '@app/contracts';
import { podIsEvicted } from '@app/kube';
import type { Logger } from '@app/observability';
import type { DeadLogLink, NodeState, PodLogs, RuntimeView } from '../ports.js';

/** container_gc.go GCPolicy; the kubelet's defaults are MinAge 0, MaxPerPodContainer 1, MaxContainers -1. */
export interface GCPolicy {
  /** --minimum-container-ttl-duration: a dead container younger than this is kept. */
  minAgeMs: number;
  /** --maximum-dead-containers-per-container: dead instances kept per container name (negative: no limit). */
  maxPerPodContainer: number;
  /** --maximum-dead-containers: dead containers kept on the node (negative: no limit). */
  maxContainers: number;
}

export const DEFAULT_GC_POLICY: GCPolicy = Object.freeze({ minAgeMs: 0, maxPerPodContainer: 1, maxContainers: -1 });

export interface GcContainer {
  id: string;
  podUid: string;
  name: string;
  sandboxId: string;
  running: boolean;
  /** ms since the epoch. */
  createdAt: number;
}

export interface GcSandbox {
  id: string;
  podUid: string;
  ready: boolean;
  createdAt: number;
}

export interface ContainerGcInput {
  policy: GCPolicy;
  now: number;
  allSourcesReady: boolean;
  desired: ReadonlyMap<string, PodRecord>;
  workers: ReadonlyMap<string, PodSyncStatusRecord>;
  /** The status manager's statuses: an evicted pod's content goes although the pod is still desired. None: no pod is taken as evicted. */
  statuses?: ReadonlyMap<string, PodStatus>;
  containers: readonly GcContainer[];
  sandboxes: readonly GcSandbox[];
  /** The names of the directories under the pods' log root (`<namespace>_<name>_<uid>`). */
  logDirectories: readonly string[];
}

export interface ContainerGcDecisions {
  removeContainers: GcContainer[];
  removeSandboxes: GcSandbox[];
  removeLogDirectories: string[];
}

/** The pod's UID from its log directory's name (`<namespace>_<name>_<uid>`: neither a namespace nor a name has `_`). */
export function podUidOfLogDirectory(name: string): string | undefined {
  const parts = name.split('_');
  return parts.length === 3 && parts[2] ? parts[2] : undefined;
}

export function decideContainerGC(input: ContainerGcInput): ContainerGcDecisions {
  const { policy, now, allSourcesReady, desired, workers } = input;
  /** The pod worker still owns the pod: terminating, or terminated but not finished. */
  const owned = (uid: string) => {
    const w = workers.get(uid);
    if (w && !w.finished && podWorkerState(w) !== 'SyncPod') return true;
    return desired.get(uid)?.terminationRequested === true && w?.finished !== true;
  };
  // ShouldPodContentBeRemoved: no source wants it, or it was evicted, and its worker, if any, finished.
  const gone = (uid: string) => !desired.has(uid) || podIsEvicted(input.statuses?.get(uid));
  const deleted = (uid: string) => allSourcesReady && gone(uid) && (workers.get(uid)?.finished ?? true) && !owned(uid);

  const removeContainers: GcContainer[] = [];
  // evictableContainers: by (pod UID, container name), newest first.
  const units = new Map<string, GcContainer[]>();
  for (const c of input.containers) {
    if (c.running || now - c.createdAt < policy.minAgeMs || owned(c.podUid)) continue;
    const key = `${c.podUid}/${c.name}`;
    units.set(key, [...(units.get(key) ?? []), c]);
  }
  for (const [key, unit] of units) {
    unit.sort((a, b) => b.createdAt - a.createdAt);
    if (deleted(unit[0]?.podUid ?? '')) {
      removeContainers.push(...unit);
      units.delete(key);
    }
  }
  const enforcePerUnit = (max: number) => {
    for (const unit of units.values()) removeContainers.push(...unit.splice(Math.max(0, max)));
  };
  if (policy.maxPerPodContainer >= 0) enforcePerUnit(policy.maxPerPodContainer);
  const remaining = () => [...units.values()].reduce((n, u) => n + u.length, 0);
  if (policy.maxContainers >= 0 && remaining() > policy.maxContainers) {
    enforcePerUnit(Math.max(1, Math.floor(policy.maxContainers / Math.max(1, units.size))));
    if (remaining() > policy.maxContainers) {
      const all = [...units.values()].flat().sort((a, b) => b.createdAt - a.createdAt);
      removeContainers.push(...all.slice(policy.maxContainers));
    }
  }

  // evictSandboxes: a sandbox with a container left in it, or ready, is active and kept.
  const removedIds = new Set(removeContainers.map((c) => c.id));
  const inUse = new Set(input.containers.filter((c) => !removedIds.has(c.id)).map((c) => c.sandboxId));
  const sandboxesByPod = new Map<string, GcSandbox[]>();
  for (const sb of input.sandboxes) sandboxesByPod.set(sb.podUid, [...(sandboxesByPod.get(sb.podUid) ?? []), sb]);
  const removeSandboxes: GcSandbox[] = [];
  const sandboxLeft = new Set<string>();
  for (const [uid, sandboxes] of sandboxesByPod) {
    if (owned(uid)) {
      sandboxLeft.add(uid);
      continue;
    }
    sandboxes.sort((a, b) => b.createdAt - a.createdAt);
    // The newest is kept while the pod exists; a deleted pod's go, the newest too.
    const candidates = deleted(uid) ? sandboxes : sandboxes.slice(1);
    for (const sb of sandboxes) {
      if (candidates.includes(sb) && !sb.ready && !inUse.has(sb.id)) removeSandboxes.push(sb);
      else sandboxLeft.add(uid);
    }
  }

  // evictPodLogsDirectories: a deleted pod's, once none of its sandboxes is left.
  const removeLogDirectories = input.logDirectories.filter((name) => {
    const uid = podUidOfLogDirectory(name);
    return uid !== undefined && deleted(uid) && !sandboxLeft.has(uid) && !input.containers.some((c) => c.podUid === uid && !removedIds.has(c.id));
  });
  return { removeContainers, removeSandboxes, removeLogDirectories };
}

/**
 * kubelet.go StartGarbageCollection's container half: every period (a
 * minute), the runtime's containers and sandboxes and the log root read,
 * decideContainerGC, and what it chose removed, each removal on its own
 * (one failure is logged and the rest goes on, as upstream's).
 */
/** What the container GC works with. */
export interface ContainerGCDeps {
  runtime: RuntimeView;
  logs: PodLogs;
  nodeState: NodeState;
  clock: Clock;
  logger: Logger;
}

export class ContainerGarbageCollector {
  private readonly runtime: RuntimeView;
  private readonly logs: PodLogs;
  private readonly nodeState: NodeState;
  private readonly clock: Clock;
  private readonly logger: Logger;

  constructor(
    deps: ContainerGCDeps,
    private readonly policy: GCPolicy = DEFAULT_GC_POLICY,
  ) {
    ({ runtime: this.runtime, logs: this.logs, nodeState: this.nodeState, clock: this.clock, logger: this.logger } = deps);
  }

  /** GarbageCollect, given the podManager and whether every source has delivered. */
  async garbageCollect(desired: ReadonlyMap<string, PodRecord>, allSourcesReady: boolean): Promise<ContainerGcDecisions> {
    const [inventory, workers, statuses, logDirectories] = await Promise.all([this.runtime.inventory(), this.nodeState.workerStates(), this.nodeState.podStatuses(), this.logs.directories()]);
    const d = decideContainerGC({ policy: this.policy, now: this.clock.now(), allSourcesReady, desired, workers, statuses, ...inventory, logDirectories });
    for (const c of d.removeContainers) await this.attempt({ containerId: c.id, pod: c.podUid }, 'remove a dead container', () => removeContainerWithLog(this.runtime, this.logs, c.id));
    for (const sb of d.removeSandboxes) await this.attempt({ podSandboxId: sb.id, pod: sb.podUid }, 'remove a sandbox', () => this.runtime.removePodSandbox(sb.id));
    for (const name of d.removeLogDirectories) await this.attempt({ directory: name }, 'remove a pod log directory', () => this.logs.removeDirectory(name));
    await this.attempt({}, 'remove dead log symlinks', () => this.removeDeadLogLinks(inventory.containers));
    const removed = d.removeContainers.length + d.removeSandboxes.length + d.removeLogDirectories.length;
    if (removed > 0) this.logger.info({ containers: d.removeContainers.length, sandboxes: d.removeSandboxes.length, logDirectories: d.removeLogDirectories.length }, 'container GC');
    return d;
  }

  private async removeDeadLogLinks(containers: readonly GcContainer[]): Promise<void> {
    const running = new Set(containers.filter((c) => c.running).map((c) => c.id));
    for (const name of deadLogLinksToRemove(await this.logs.deadLegacyLogSymlinks(), running)) {
      await this.attempt({ link: name }, 'remove a dead log symlink', () => this.logs.removeLegacyLogSymlinkNamed(name));
    }
  }

  private async attempt(what: Record<string, string>, action: string, fn: () => Promise<unknown>): Promise<void> {
    try {
      await fn();
    } catch (err) {
      this.logger.warn({ ...what, err: (err as Error).message }, `container GC: failed to ${action}`);
    }
  }
}

/** kuberuntime's removeContainer: the container, then its log files and its legacy symlink (removeContainerLog). */
export async function removeContainerWithLog(runtime: RuntimeView, logs: PodLogs | undefined, id: string): Promise<void> {
  const removed = await runtime.removeContainer(id);
  if (!removed || !logs) return;
  if (removed.logPath) await logs.removeContainerLog(removed.logPath);
  await logs.removeLegacyLogSymlink({ id, name: removed.name, podName: removed.podName, podNamespace: removed.podNamespace });
}

/**
 * evictPodLogsDirectories' last step: the legacy symlinks whose log file is
 * gone, but those of a running container (its log is being rotated: the
 * file comes back). A name with no container ID in it goes too, as upstream's.
 */
export function deadLogLinksToRemove(dead: readonly DeadLogLink[], running: ReadonlySet<string>): string[] {
  return dead.filter((l) => l.containerId === undefined || !running.has(l.containerId)).map((l) => l.name);
}
