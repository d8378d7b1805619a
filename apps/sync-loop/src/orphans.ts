/**
 * HandlePodCleanups' cleanupOrphanedPodDirs (pkg/kubelet/kubelet_volumes.go)
 * and cleanupOrphanedPodCgroups (kubelet_pods.go, with
 * cm/pod_container_manager_linux.go GetAllPodsFromCgroups and Destroy): what
 * a pod left on the host after everyone forgot it, removed by the sync
 * loop's leader on the housekeeping period.
 *
 *   <POD_ROOT_DIR>/<uid>/                   removed once nothing is mounted below it
 *                                           (a leftover emptyDir tmpfs is unmounted first;
 *                                           any other mount: refused and logged, as upstream)
 *   <CGROUP_ROOT>/kubepods/[<qos>/]pod<uid> its processes killed, then removed, once the
 *                                           pod's directory has no mount left
 *
 * Invariants (ADR 0014): only a pod no one knows is touched, never one a pod
 * worker may still act on. A pod is known while it is desired (the
 * podManager), while a pod worker has a record of it that has not finished
 * (its SyncTerminatedPod unmounts and destroys these itself), and while the
 * runtime has anything of it: for the directories this node's sandboxes
 * and containers, for the cgroups every sandbox on the runtime (the kubepods
 * tree is the host's; another stack on the same runtime must not lose its
 * pods' cgroups). Nothing is judged before every source has delivered
 * (allSourcesReady), and a pod must have been unknown for the grace period
 * first: a pod removed before its worker wrote a record is not raced.
 */
import type { Clock } from '@app/clock';
import { CgroupManager, QOS_CLASSES, destroyKillingProcesses, podUidOfCgroup, qosCgroupName, type CgroupName } from '@app/cm';
import { podWorkerState, type PodRecord, type PodSyncStatusRecord } from '@app/contracts';
import type { Logger } from '@app/observability';
import type { HostProcesses, NodeState, PodDirectoriesOnDisk, RuntimePod } from './ports.js';
import type { RuntimePods } from './runtime-cache.js';

export interface OrphanInput {
  allSourcesReady: boolean;
  desired: ReadonlyMap<string, PodRecord>;
  workers: ReadonlyMap<string, PodSyncStatusRecord>;
  /** This node's runtime pods (running or not). */
  runtimePods: readonly RuntimePod[];
  /** The pod UIDs of every sandbox on the runtime, any stack's. */
  runtimeUids: ReadonlySet<string>;
  /** The UIDs with a directory under POD_ROOT_DIR. */
  podDirectories: readonly string[];
  /** The pod cgroups found under the QoS parents, by UID. */
  podCgroups: ReadonlyMap<string, CgroupName>;
}

export interface OrphanDecisions {
  /** UIDs whose directory belongs to no known pod. */
  orphanedDirectories: string[];
  /** UIDs whose cgroup belongs to no known pod, with the cgroup. */
  orphanedCgroups: [string, CgroupName][];
}

/** Which pod directories and pod cgroups belong to no known pod (before the grace period). */
export function decideOrphans(input: OrphanInput): OrphanDecisions {
  if (!input.allSourcesReady) return { orphanedDirectories: [], orphanedCgroups: [] };
  const onThisNode = new Set(input.runtimePods.map((p) => p.uid));
  const known = (uid: string) => {
    if (input.desired.has(uid) || onThisNode.has(uid)) return true;
    const w = input.workers.get(uid);
    // A worker that has not finished may still mount, start or tear down (a TerminatedPod not finished is in SyncTerminatedPod).
    return w !== undefined && !(w.finished === true && podWorkerState(w) === 'TerminatedPod');
  };
  return {
    orphanedDirectories: input.podDirectories.filter((uid) => !known(uid)),
    orphanedCgroups: [...input.podCgroups].filter(([uid]) => !known(uid) && !input.runtimeUids.has(uid)),
  };
}

/** The volume plugins whose volume is an emptyDir tmpfs the pod worker mounted (secret and projected wrap one, as upstream). */
const TMPFS_PLUGINS = new Set(['kubernetes.io~empty-dir', 'kubernetes.io~secret', 'kubernetes.io~projected']);

/** A leftover emptyDir tmpfs of a pod: `<pod dir>/volumes/kubernetes.io~empty-dir/<name>` (or a secret's or projected volume's), unmounted by the cleanup. */
export function isEmptyDirMount(podDir: string, mountPoint: string): boolean {
  const rest = mountPoint.startsWith(`${podDir}/`) ? mountPoint.slice(podDir.length + 1).split('/') : [];
  return rest.length === 3 && rest[0] === 'volumes' && TMPFS_PLUGINS.has(rest[1] ?? '') && rest[2] !== '';
}

export interface OrphanCleanupOptions {
  /** How long a pod must be unknown before its leftovers go. */
  graceMs: number;
  /** --cgroup-root; undefined when the pods have no cgroups of their own (CGROUPS_PER_QOS=false). */
  cgroupRoot?: string;
}

/** What the orphan cleanup works with. */
export interface OrphanedPodCleanerDeps {
  runtime: RuntimePods;
  nodeState: NodeState;
  dirs: PodDirectoriesOnDisk;
  /** The pod cgroups' manager; none, or no cgroupRoot in the options: pod cgroups are left alone. */
  cgroups?: CgroupManager;
  processes: HostProcesses;
  clock: Clock;
  logger: Logger;
}

export interface OrphanCleanupResult {
  removedDirectories: string[];
  destroyedCgroups: string[];
  /** UIDs whose directory still has a mount that is not a leftover emptyDir (refused, as upstream's podVolumesExist). */
  refused: string[];
  /** UIDs whose directory could not be removed this pass (refused included): upstream's errorPods. */
  failedDirectories: string[];
}

/**
 * The two cleanups, each removal on its own: a failure is logged (once per
 * pod and message) and retried at the next pass, the rest goes on.
 */
export class OrphanedPodCleaner {
  /** When each UID was first seen unknown, for the grace period. */
  private readonly unknownSince = new Map<string, number>();
  /** The last failure logged per UID, so that a lasting one is logged once. */
  private readonly lastFailure = new Map<string, string>();

  private readonly runtime: RuntimePods;
  private readonly nodeState: NodeState;
  private readonly dirs: PodDirectoriesOnDisk;
  private readonly cgroups: CgroupManager | undefined;
  private readonly processes: HostProcesses;
  private readonly clock: Clock;
  private readonly logger: Logger;

  constructor(
    deps: OrphanedPodCleanerDeps,
    private readonly options: OrphanCleanupOptions,
  ) {
    ({ runtime: this.runtime, nodeState: this.nodeState, dirs: this.dirs, cgroups: this.cgroups, processes: this.processes, clock: this.clock, logger: this.logger } = deps);
  }

  /** GetAllPodsFromCgroups: `pod<uid>` children of the QoS parents. */
  async podCgroups(): Promise<Map<string, CgroupName>> {
    const found = new Map<string, CgroupName>();
    if (!this.cgroups || this.options.cgroupRoot === undefined) return found;
    for (const qos of QOS_CLASSES) {
      const parent = qosCgroupName(this.options.cgroupRoot, qos);
      for (const child of await this.cgroups.children(parent)) {
        const uid = podUidOfCgroup(child);
        if (uid !== undefined) found.set(uid, [...parent, child]);
      }
    }
    return found;
  }

  /**
   * One pass, given the podManager and whether every source has delivered.
   * It reads the `workers` mirror and the runtime cache (the listing
   * housekeeping made); what is due for removal is judged again first on
   * its records read by a get and a listing started in this pass.
   */
  async cleanup(desired: ReadonlyMap<string, PodRecord>, allSourcesReady: boolean): Promise<OrphanCleanupResult> {
    const result: OrphanCleanupResult = { removedDirectories: [], destroyedCgroups: [], refused: [], failedDirectories: [] };
    if (!allSourcesReady) return result;
    const passStart = this.clock.now();
    const { workers } = this.nodeState.mirrored();
    const [listing, podDirectories, podCgroups] = await Promise.all([this.runtime.get(), this.dirs.list(), this.podCgroups()]);
    const d = decideOrphans({ allSourcesReady, desired, workers, runtimePods: listing.pods, runtimeUids: listing.allPodUids, podDirectories, podCgroups });
    const now = this.clock.now();
    const unknown = new Set([...d.orphanedDirectories, ...d.orphanedCgroups.map(([uid]) => uid)]);
    for (const uid of [...this.unknownSince.keys()]) if (!unknown.has(uid)) this.unknownSince.delete(uid);
    for (const uid of [...this.lastFailure.keys()]) if (!unknown.has(uid)) this.lastFailure.delete(uid);
    const due = (uid: string) => {
      const since = this.unknownSince.get(uid) ?? now;
      this.unknownSince.set(uid, since);
      return now - since >= this.options.graceMs;
    };
    const dueDirectories = d.orphanedDirectories.filter(due);
    const dueCgroups = d.orphanedCgroups.filter(([uid]) => due(uid));
    const doubtful = [...new Set([...dueDirectories, ...dueCgroups.map(([uid]) => uid)])];
    let still = new Set<string>();
    if (doubtful.length > 0) {
      const [current, fresh] = await Promise.all([this.nodeState.current(doubtful), this.runtime.getNewerThan(passStart)]);
      const again = decideOrphans({
        allSourcesReady,
        desired,
        workers: new Map(doubtful.flatMap((uid) => { const w = current.workers.get(uid); return w ? [[uid, w] as const] : []; })),
        runtimePods: fresh.pods,
        runtimeUids: fresh.allPodUids,
        podDirectories: dueDirectories,
        podCgroups: new Map(dueCgroups),
      });
      still = new Set([...again.orphanedDirectories, ...again.orphanedCgroups.map(([uid]) => uid)]);
      for (const uid of doubtful) if (!still.has(uid)) this.unknownSince.delete(uid);
    }
    const mounted = new Set<string>();
    for (const uid of dueDirectories) {
      if (!still.has(uid)) continue;
      const outcome = await this.attempt(uid, 'remove an orphaned pod directory', () => this.removeDirectory(uid));
      if (outcome === 'removed') result.removedDirectories.push(uid);
      else {
        mounted.add(uid);
        result.failedDirectories.push(uid);
        if (outcome === 'refused') result.refused.push(uid);
      }
    }
    for (const [uid, name] of dueCgroups) {
      // Upstream keeps the cgroup while the pod's volumes exist, so that memory-backed ones stay charged to it.
      if (!still.has(uid) || mounted.has(uid)) continue;
      const outcome = await this.attempt(uid, 'remove an orphaned pod cgroup', () => this.destroyCgroup(name));
      if (outcome === 'removed') result.destroyedCgroups.push(uid);
    }
    if (result.removedDirectories.length + result.destroyedCgroups.length > 0) this.logger.info({ directories: result.removedDirectories, cgroups: result.destroyedCgroups }, 'removed what pods no one knows left behind');
    return result;
  }

  /**
   * cleanupOrphanedPodDirs for one pod: leftover emptyDir tmpfs mounts
   * unmounted; with any other mount still there the directory is kept
   * ('refused'); else removed on its own file system.
   */
  private async removeDirectory(uid: string): Promise<'removed' | 'refused'> {
    const podDir = this.dirs.path(uid);
    for (const m of await this.dirs.mountsUnder(uid)) if (isEmptyDirMount(podDir, m)) await this.dirs.unmount(m);
    const left = await this.dirs.mountsUnder(uid);
    if (left.length > 0) {
      this.logOnce(uid, `volumes still mounted: ${left.join(', ')}`, 'orphaned pod found, but volumes are still mounted: its directory is kept');
      return 'refused';
    }
    await this.dirs.remove(uid);
    return 'removed';
  }

  /** podContainerManagerImpl.Destroy: tryKillingCgroupProcesses (5 rounds), then the cgroup (@app/cm destroyKillingProcesses). */
  private async destroyCgroup(name: CgroupName): Promise<'removed'> {
    if (this.cgroups) await destroyKillingProcesses(this.cgroups, name, (pid) => this.processes.kill(pid));
    return 'removed';
  }

  private async attempt<T>(uid: string, action: string, fn: () => Promise<T>): Promise<T | 'failed'> {
    try {
      const out = await fn();
      if (out === 'removed') this.lastFailure.delete(uid);
      return out;
    } catch (err) {
      this.logOnce(uid, (err as Error).message, `housekeeping: failed to ${action} (retried every pass)`);
      return 'failed';
    }
  }

  private logOnce(uid: string, err: string, msg: string): void {
    if (this.lastFailure.get(uid) === err) return;
    this.lastFailure.set(uid, err);
    this.logger.warn({ uid, err }, msg);
  }
}
