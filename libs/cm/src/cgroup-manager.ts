/**
 * The cgroups themselves, as the kubelet's container manager names and
 * writes them (pkg/kubelet/cm: cgroup_manager_linux.go CgroupManager,
 * types.go CgroupName and ResourceConfig, qos_container_manager_linux.go's
 * tree), with the cgroupfs driver's names:
 *
 *   <root>/kubepods                      the node's pods (Guaranteed pods sit here)
 *   <root>/kubepods/burstable            Burstable pods
 *   <root>/kubepods/besteffort           BestEffort pods
 *   <root>/kubepods/[<qos>/]pod<uid>     one pod
 *
 * Shared by the two services that touch the tree (ADR 0014): pod-worker
 * makes and destroys a pod's cgroup around its sandbox, sync-loop's
 * housekeeping destroys the cgroups of pods no one knows any more
 * (cleanupOrphanedPodCgroups). What to write is pure; the files are behind
 * the CgroupManager port (cgroupfs-manager.ts, cgroup v1 and v2).
 */
import type { PodQOSClass } from '@app/kube';

/** cm.MinShares, cm.MaxShares, the default CFS period (100ms). */
export const MIN_SHARES = 2;
export const MAX_SHARES = 262_144;
export const DEFAULT_CPU_PERIOD_US = 100_000;

/** A cgroup's name as its path segments below the hierarchy's root (upstream's CgroupName). */
export type CgroupName = readonly string[];

/** The pod QoS classes, each with its parent cgroup. */
export const QOS_CLASSES: readonly PodQOSClass[] = ['Guaranteed', 'Burstable', 'BestEffort'];

/** ResourceConfig: what a cgroup is limited to; an absent field is left as the kernel has it. */
export interface ResourceConfig {
  /** cpu.shares (v1) / cpu.weight (v2). */
  cpuShares?: number;
  /** cpu.cfs_quota_us (v1) / cpu.max's quota (v2); -1 is no quota. */
  cpuQuota?: number;
  /** cpu.cfs_period_us (v1) / cpu.max's period (v2). */
  cpuPeriod?: number;
  /** memory.limit_in_bytes (v1) / memory.max (v2). */
  memory?: number;
  /** pids.max. */
  pidsLimit?: number;
}

/** libcontainer's ConvertCPUSharesToCgroupV2Value: cpu.shares [2, 262144] onto cpu.weight [1, 10000]. */
export function cpuSharesToWeight(shares: number): number {
  if (shares === 0) return 0;
  return 1 + Math.floor(((shares - 2) * 9999) / 262_142);
}

/** What a cgroup limit is written as, file by file: cgroup v1 (per controller's files) or v2 (unified). */
export function cgroupFiles(rc: ResourceConfig, version: 1 | 2): Record<string, string> {
  const files: Record<string, string> = {};
  if (version === 1) {
    if (rc.cpuShares !== undefined) files['cpu.shares'] = String(rc.cpuShares);
    // The period before the quota, as libcontainer writes them.
    if (rc.cpuPeriod !== undefined) files['cpu.cfs_period_us'] = String(rc.cpuPeriod);
    if (rc.cpuQuota !== undefined) files['cpu.cfs_quota_us'] = String(rc.cpuQuota === 0 ? -1 : rc.cpuQuota);
    if (rc.memory !== undefined) files['memory.limit_in_bytes'] = String(rc.memory === 0 ? -1 : rc.memory);
    if (rc.pidsLimit !== undefined) files['pids.max'] = String(rc.pidsLimit);
    return files;
  }
  if (rc.cpuShares !== undefined) files['cpu.weight'] = String(cpuSharesToWeight(rc.cpuShares));
  if (rc.cpuQuota !== undefined || rc.cpuPeriod !== undefined) {
    const quota = rc.cpuQuota === undefined || rc.cpuQuota <= 0 ? 'max' : String(rc.cpuQuota);
    files['cpu.max'] = `${quota} ${rc.cpuPeriod ?? DEFAULT_CPU_PERIOD_US}`;
  }
  if (rc.memory !== undefined) files['memory.max'] = rc.memory === 0 ? 'max' : String(rc.memory);
  if (rc.pidsLimit !== undefined) files['pids.max'] = String(rc.pidsLimit);
  return files;
}

/** The cgroupfs driver's literal name of a cgroup: `/kubepods/burstable/pod<uid>`. */
export function cgroupfsName(name: CgroupName): string {
  return `/${name.join('/')}`;
}

/** --cgroup-root as segments: `/` is none. */
function rootSegments(root: string): string[] {
  return root.split('/').filter((s) => s !== '');
}

/** The QoS parents (qosContainerManager): Guaranteed pods sit in kubepods itself. */
export function qosCgroupName(root: string, qos: PodQOSClass): CgroupName {
  const kubepods = [...rootSegments(root), 'kubepods'];
  switch (qos) {
    case 'Guaranteed':
      return kubepods;
    case 'Burstable':
      return [...kubepods, 'burstable'];
    case 'BestEffort':
      return [...kubepods, 'besteffort'];
  }
}

/** podCgroupNamePrefix */
export const POD_CGROUP_PREFIX = 'pod';

/** The pod's UID from a child cgroup's name under a QoS parent (`pod<uid>`), as GetAllPodsFromCgroups reads it; undefined for anything else. */
export function podUidOfCgroup(child: string): string | undefined {
  if (!child.startsWith(POD_CGROUP_PREFIX)) return undefined;
  const uid = child.slice(POD_CGROUP_PREFIX.length);
  // The QoS parents themselves are no pods.
  return uid !== '' && uid !== 'burstable' && uid !== 'besteffort' ? uid : undefined;
}

/**
 * cgroup_manager_linux.go's CgroupManager: the cgroups themselves, under
 * the driver's names. Every method is idempotent.
 */
export abstract class CgroupManager {
  /** Exists: the cgroup is there in every controller the manager uses. */
  abstract exists(name: CgroupName): Promise<boolean>;
  /** Create: the cgroup and its missing parents, with `resources` applied; an existing one is updated. */
  abstract create(name: CgroupName, resources: ResourceConfig): Promise<void>;
  /** Destroy: the cgroup and anything left below it, in every controller, retried while the kernel says busy. A missing one is fine. */
  abstract destroy(name: CgroupName): Promise<void>;
  /** Pids: the processes in the cgroup and in every cgroup below it, in any controller (none for a missing one). */
  abstract pids(name: CgroupName): Promise<number[]>;
  /** The names of the cgroup's child cgroups, in any controller (none for a missing one). */
  abstract children(name: CgroupName): Promise<string[]>;
}

/**
 * podContainerManagerImpl.Destroy: tryKillingCgroupProcesses (every process
 * in the cgroup and below SIGKILLed by `kill`, 5 rounds for the ones that
 * fail), then the cgroup itself. A process left in a pod's cgroup would
 * keep it busy for ever: a `runc init` of a sandbox whose RunPodSandbox was
 * cut by a containerd restart waits on its exec fifo until killed.
 */
export async function destroyKillingProcesses(cgroups: CgroupManager, name: CgroupName, kill: (pid: number) => Promise<void>): Promise<void> {
  const pids = await cgroups.pids(name);
  const killed = new Set<number>();
  let failures: string[] = [];
  for (let round = 0; round < 5 && killed.size < pids.length; round++) {
    failures = [];
    for (const pid of pids) {
      if (killed.has(pid)) continue;
      try {
        await kill(pid);
        killed.add(pid);
      } catch (err) {
        failures.push(`${pid}: ${(err as Error).message}`);
      }
    }
  }
  if (killed.size < pids.length) throw new Error(`failed to kill all the processes attached to the cgroup: ${failures.join('; ')}`);
  await cgroups.destroy(name);
}
