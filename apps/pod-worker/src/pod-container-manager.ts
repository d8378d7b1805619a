/**
 * The pod cgroups (pkg/kubelet/cm: pod_container_manager_linux.go
 * podContainerManagerImpl, qos_container_manager_linux.go, helpers_linux.go
 * ResourceConfigForPod), with the cgroupfs driver's names:
 *
 *   <root>/kubepods                      the node's pods
 *   <root>/kubepods/pod<uid>             a Guaranteed pod
 *   <root>/kubepods/burstable/pod<uid>   a Burstable pod
 *   <root>/kubepods/besteffort/pod<uid>  a BestEffort pod
 *
 * The pod worker (kubelet.go SyncPod) ensures the pod's cgroup, with the
 * pod's limits, before the sandbox, and passes its name as the sandbox's
 * cgroup parent; the runtime puts the sandbox and the containers below it.
 * SyncTerminatedPod destroys it once the sandbox is stopped. Every step is
 * idempotent: any replica that owns the pod's shard may ensure the tree.
 *
 * What to write (the names and the limits) is pure; the files are behind
 * the CgroupManager port (adapters/cgroupfs-manager.ts, cgroup v1 and v2).
 */
import type { Container, Pod } from '@app/contracts';
import { getPodQOS, isRestartableInitContainer, nanosToMillis, nanosToUnits, parseQuantityNanos, type PodQOSClass } from '@app/kube';

/** cm.MinShares, cm.MaxShares, cm.SharesPerCPU, cm.MinQuotaPeriod, the default CFS period (100ms). */
export const MIN_SHARES = 2;
export const MAX_SHARES = 262_144;
const SHARES_PER_CPU = 1024;
const MIN_QUOTA_PERIOD = 1000;
export const DEFAULT_CPU_PERIOD_US = 100_000;

/** A cgroup's name as its path segments below the hierarchy's root (upstream's CgroupName). */
export type CgroupName = readonly string[];

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

/** MilliCPUToShares */
export function milliCPUToShares(milliCPU: number): number {
  if (milliCPU === 0) return MIN_SHARES;
  const shares = Math.floor((milliCPU * SHARES_PER_CPU) / 1000);
  return Math.min(MAX_SHARES, Math.max(MIN_SHARES, shares));
}

/** MilliCPUToQuota: 0 (no limit) for 0, else at least 1ms per period. */
export function milliCPUToQuota(milliCPU: number, period: number): number {
  if (milliCPU === 0) return 0;
  return Math.max(MIN_QUOTA_PERIOD, Math.floor((milliCPU * period) / 1000));
}

/** libcontainer's ConvertCPUSharesToCgroupV2Value: cpu.shares [2, 262144] onto cpu.weight [1, 10000]. */
export function cpuSharesToWeight(shares: number): number {
  if (shares === 0) return 0;
  return 1 + Math.floor(((shares - 2) * 9999) / 262_142);
}

interface Amount {
  cpu: bigint;
  memory: bigint;
}

const quantity = (v: string | undefined): bigint => (v === undefined ? 0n : parseQuantityNanos(v));

/**
 * resource.PodLimits with ResourceConfigForPod's ContainerFn: the pod's
 * limits (regular containers and sidecars add up, the init phase's peak
 * counts if higher), and whether every container declares a CPU and a
 * memory limit.
 */
export function podLimits(pod: Pod): { limits: Amount; cpuLimitsDeclared: boolean; memoryLimitsDeclared: boolean } {
  let cpuLimitsDeclared = true;
  let memoryLimitsDeclared = true;
  const own = (c: Container): Amount => {
    const cpu = quantity(c.resources?.limits?.['cpu']);
    const memory = quantity(c.resources?.limits?.['memory']);
    if (cpu === 0n) cpuLimitsDeclared = false;
    if (memory === 0n) memoryLimitsDeclared = false;
    return { cpu, memory };
  };
  const add = (a: Amount, b: Amount): Amount => ({ cpu: a.cpu + b.cpu, memory: a.memory + b.memory });
  const max = (a: Amount, b: Amount): Amount => ({ cpu: a.cpu > b.cpu ? a.cpu : b.cpu, memory: a.memory > b.memory ? a.memory : b.memory });
  let limits: Amount = { cpu: 0n, memory: 0n };
  for (const c of pod.spec.containers) limits = add(limits, own(c));
  let sidecars: Amount = { cpu: 0n, memory: 0n };
  let initPeak: Amount = { cpu: 0n, memory: 0n };
  for (const c of pod.spec.initContainers ?? []) {
    const l = own(c);
    if (isRestartableInitContainer(c)) {
      limits = add(limits, l);
      sidecars = add(sidecars, l);
      initPeak = max(initPeak, sidecars);
    } else initPeak = max(initPeak, add(l, sidecars));
  }
  return { limits: max(limits, initPeak), cpuLimitsDeclared, memoryLimitsDeclared };
}

/** The pod's CPU request in millicores (resource.PodRequests, as the kubelet reads it for shares). */
function podCpuRequestMillis(pod: Pod): number {
  const req = (c: Container) => quantity(c.resources?.requests?.['cpu'] ?? c.resources?.limits?.['cpu']);
  let sum = 0n;
  for (const c of pod.spec.containers) sum += req(c);
  let sidecars = 0n;
  let initPeak = 0n;
  for (const c of pod.spec.initContainers ?? []) {
    const r = req(c);
    if (isRestartableInitContainer(c)) {
      sum += r;
      sidecars += r;
      if (sidecars > initPeak) initPeak = sidecars;
    } else if (r + sidecars > initPeak) initPeak = r + sidecars;
  }
  return nanosToMillis(sum > initPeak ? sum : initPeak);
}

export interface ResourceConfigOptions {
  /** --cpu-cfs-quota: limits enforced with a CFS quota (else the quota is -1). */
  enforceCPULimits: boolean;
  /** --cpu-cfs-quota-period, in microseconds. */
  cpuPeriodUs: number;
  /** --pod-max-pids: pids.max of every pod cgroup; 0 or less leaves it unlimited. */
  podPidsLimit: number;
}

export const DEFAULT_RESOURCE_CONFIG_OPTIONS: ResourceConfigOptions = { enforceCPULimits: true, cpuPeriodUs: DEFAULT_CPU_PERIOD_US, podPidsLimit: -1 };

/**
 * ResourceConfigForPod: shares from the requests; a CFS quota only when
 * every container has a CPU limit, a memory limit only when every container
 * has a memory limit (always both for Guaranteed); BestEffort gets the
 * minimum shares and nothing else. Plus the node's pids limit
 * (podContainerManagerImpl.EnsureExists).
 */
export function resourceConfigForPod(pod: Pod, options: ResourceConfigOptions = DEFAULT_RESOURCE_CONFIG_OPTIONS): ResourceConfig {
  const { limits, cpuLimitsDeclared, memoryLimitsDeclared } = podLimits(pod);
  const cpuShares = milliCPUToShares(podCpuRequestMillis(pod));
  const cpuQuota = options.enforceCPULimits ? milliCPUToQuota(nanosToMillis(limits.cpu), options.cpuPeriodUs) : -1;
  const memory = nanosToUnits(limits.memory);
  const pids = options.podPidsLimit > 0 ? { pidsLimit: options.podPidsLimit } : {};
  switch (getPodQOS(pod)) {
    case 'Guaranteed':
      return { cpuShares, cpuQuota, cpuPeriod: options.cpuPeriodUs, memory, ...pids };
    case 'Burstable':
      return {
        cpuShares,
        ...(cpuLimitsDeclared ? { cpuQuota, cpuPeriod: options.cpuPeriodUs } : {}),
        ...(memoryLimitsDeclared ? { memory } : {}),
        ...pids,
      };
    case 'BestEffort':
      return { cpuShares: MIN_SHARES, ...pids };
  }
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

/** GetPodContainerName: `<root>/kubepods/[<qos>/]pod<uid>`. */
export function podCgroupName(pod: Pod, root: string): CgroupName {
  return [...qosCgroupName(root, getPodQOS(pod)), `pod${pod.metadata.uid ?? ''}`];
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
}

export interface PodContainerManagerOptions extends ResourceConfigOptions {
  /** --cgroup-root: where `kubepods` goes. */
  cgroupRoot: string;
}

/**
 * podContainerManagerImpl with qosContainerManager's tree: the pod's cgroup
 * under its QoS parent, the parents made on the way (BestEffort's with the
 * minimum shares, as qosContainerManager.Start).
 */
export class PodContainerManager {
  constructor(
    private readonly cgroups: CgroupManager,
    private readonly options: PodContainerManagerOptions,
  ) {}

  /** GetPodContainerName */
  getPodContainerName(pod: Pod): { name: CgroupName; literal: string } {
    const name = podCgroupName(pod, this.options.cgroupRoot);
    return { name, literal: cgroupfsName(name) };
  }

  /** Exists */
  exists(pod: Pod): Promise<boolean> {
    return this.cgroups.exists(podCgroupName(pod, this.options.cgroupRoot));
  }

  /** EnsureExists: the QoS tree, then the pod's cgroup with ResourceConfigForPod. */
  async ensureExists(pod: Pod): Promise<void> {
    const root = this.options.cgroupRoot;
    await this.cgroups.create(qosCgroupName(root, 'Guaranteed'), {});
    await this.cgroups.create(qosCgroupName(root, 'Burstable'), {});
    await this.cgroups.create(qosCgroupName(root, 'BestEffort'), { cpuShares: MIN_SHARES });
    await this.cgroups.create(podCgroupName(pod, root), resourceConfigForPod(pod, this.options));
  }

  /**
   * Destroy. The pod's cgroup is looked for under every QoS parent: a pod
   * known only from the runtime (no spec to compute its QoS from) is
   * cleaned up too.
   */
  async destroy(pod: Pod): Promise<void> {
    const leaf = `pod${pod.metadata.uid ?? ''}`;
    for (const qos of ['Guaranteed', 'Burstable', 'BestEffort'] as const) await this.cgroups.destroy([...qosCgroupName(this.options.cgroupRoot, qos), leaf]);
  }
}

/** GetPodCgroupParent with the cgroupfs driver: the literal name of the pod's cgroup. */
export function podCgroupParent(pod: Pod, cgroupRoot: string): string {
  return cgroupfsName(podCgroupName(pod, cgroupRoot));
}
