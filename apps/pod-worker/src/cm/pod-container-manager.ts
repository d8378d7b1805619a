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
 * the CgroupManager port (@app/cm, cgroup v1 and v2).
 */
import { CgroupManager, DEFAULT_CPU_PERIOD_US, MAX_SHARES, MIN_SHARES, cgroupfsName, destroyKillingProcesses, qosCgroupName, type CgroupName, type ResourceConfig } from '@app/cm';
import type { Container, Pod } from '@app/contracts';
import { getPodQOS, isRestartableInitContainer, nanosToMillis, nanosToUnits, parseQuantityNanos } from '@app/kube';

// The cgroup names and files are @app/cm's (sync-loop's housekeeping reads the same tree).
export { CgroupManager, DEFAULT_CPU_PERIOD_US, MAX_SHARES, MIN_SHARES, cgroupFiles, cgroupfsName, cpuSharesToWeight, qosCgroupName, type CgroupName, type ResourceConfig } from '@app/cm';

/** cm.SharesPerCPU, cm.MinQuotaPeriod. */
const SHARES_PER_CPU = 1024;
const MIN_QUOTA_PERIOD = 1000;

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

/** GetPodContainerName: `<root>/kubepods/[<qos>/]pod<uid>`. */
export function podCgroupName(pod: Pod, root: string): CgroupName {
  return [...qosCgroupName(root, getPodQOS(pod)), `pod${pod.metadata.uid ?? ''}`];
}

export interface PodContainerManagerOptions extends ResourceConfigOptions {
  /** --cgroup-root: where `kubepods` goes. */
  cgroupRoot: string;
}

/** qosContainerManager.setCPUCgroupConfig: Burstable's cpu.shares from the sum of its active pods' CPU requests, BestEffort's always the minimum. */
export function qosCpuShares(activePods: readonly Pod[]): { burstable: number; bestEffort: number } {
  let burstableMillis = 0;
  for (const pod of activePods) if (getPodQOS(pod) === 'Burstable') burstableMillis += podCpuRequestMillis(pod);
  return { burstable: milliCPUToShares(burstableMillis), bestEffort: MIN_SHARES };
}

/** What UpdateQOSCgroups reads: the node's active pods (admitted, not terminating, not finished), every shard's. */
export interface QosInputs {
  activePods: () => Promise<Pod[]>;
  /** A failed update is not the sync's failure (upstream logs it at V(2)); the next one tries again. */
  onUpdateError?: (err: Error) => void;
}

/**
 * podContainerManagerImpl with qosContainerManager's tree: the pod's cgroup
 * under its QoS parent, the parents made on the way (BestEffort's with the
 * minimum shares, as qosContainerManager.Start).
 */
export class PodContainerManager {
  /** The UpdateQOSCgroups running, and the one queued behind it (see updateQOSCgroups). */
  private qosRunning?: Promise<void>;
  private qosNext?: Promise<void>;
  /** The QoS tree, made (see ensureExists). */
  private qosTree?: Promise<void>;

  constructor(
    private readonly cgroups: CgroupManager,
    private readonly options: PodContainerManagerOptions,
    private readonly qos?: QosInputs,
    /** SIGKILL to a process left in a pod's cgroup before it is removed (@app/cm killHostProcess); none: the cgroup is removed as it is. */
    private readonly kill?: (pid: number) => Promise<void>,
  ) {}

  /**
   * UpdateQOSCgroups: the QoS parents' CPU shares from the active pods
   * (kubelet.go SyncPod calls it before a pod's cgroup is made, killPod once
   * a pod is stopped; here after its cgroup is destroyed). Any replica may
   * run it: each writes what the one `pods` bucket says.
   */
  updateQOSCgroups(): Promise<void> {
    if (!this.qos) return Promise.resolve();
    // Calls coalesce: while an update runs (it may have read the active pods before this caller's change), the callers
    // share one more that starts once it ends. A burst of pod starts reads the `pods` bucket twice, not once per pod.
    if (!this.qosRunning) {
      const run = this.updateQOSCgroupsOnce().finally(() => {
        if (this.qosRunning === run) this.qosRunning = undefined;
      });
      this.qosRunning = run;
      return run;
    }
    this.qosNext ??= this.qosRunning.then(() => {
      this.qosNext = undefined;
      return this.updateQOSCgroups();
    });
    return this.qosNext;
  }

  private async updateQOSCgroupsOnce(): Promise<void> {
    if (!this.qos) return;
    try {
      const shares = qosCpuShares(await this.qos.activePods());
      const root = this.options.cgroupRoot;
      await this.cgroups.create(qosCgroupName(root, 'Burstable'), { cpuShares: shares.burstable });
      await this.cgroups.create(qosCgroupName(root, 'BestEffort'), { cpuShares: shares.bestEffort });
    } catch (err) {
      this.qos.onUpdateError?.(err as Error);
    }
  }

  /** GetPodContainerName */
  getPodContainerName(pod: Pod): { name: CgroupName; literal: string } {
    const name = podCgroupName(pod, this.options.cgroupRoot);
    return { name, literal: cgroupfsName(name) };
  }

  /** Exists */
  exists(pod: Pod): Promise<boolean> {
    return this.cgroups.exists(podCgroupName(pod, this.options.cgroupRoot));
  }

  /**
   * EnsureExists: the QoS tree, then the pod's cgroup with ResourceConfigForPod. The tree is made once per process
   * (qosContainerManager.Start makes it once at the kubelet's start), and again when the pod's cgroup cannot be made
   * (someone removed a parent): every pod of a burst making it anew was about 100 file operations each, queued on
   * libuv's four threads.
   */
  async ensureExists(pod: Pod): Promise<void> {
    const root = this.options.cgroupRoot;
    await this.ensureQosTree();
    await this.updateQOSCgroups();
    const name = podCgroupName(pod, root);
    const resources = resourceConfigForPod(pod, this.options);
    try {
      await this.cgroups.create(name, resources);
    } catch {
      this.qosTree = undefined;
      await this.ensureQosTree();
      await this.cgroups.create(name, resources);
    }
  }

  /** qosContainerManager.Start: the three QoS parents (BestEffort's with the minimum shares); once, unless it failed. */
  private ensureQosTree(): Promise<void> {
    const root = this.options.cgroupRoot;
    this.qosTree ??= (async () => {
      await this.cgroups.create(qosCgroupName(root, 'Guaranteed'), {});
      await this.cgroups.create(qosCgroupName(root, 'Burstable'), {});
      await this.cgroups.create(qosCgroupName(root, 'BestEffort'), { cpuShares: MIN_SHARES });
    })().catch((err: unknown) => {
      this.qosTree = undefined;
      throw err;
    });
    return this.qosTree;
  }

  /**
   * Destroy. The pod's cgroup is looked for under every QoS parent: a pod
   * known only from the runtime (no spec to compute its QoS from) is
   * cleaned up too.
   */
  async destroy(pod: Pod): Promise<void> {
    const leaf = `pod${pod.metadata.uid ?? ''}`;
    for (const qos of ['Guaranteed', 'Burstable', 'BestEffort'] as const) {
      const name = [...qosCgroupName(this.options.cgroupRoot, qos), leaf];
      // podContainerManagerImpl.Destroy: the processes still in it killed first (a runc init a cut RunPodSandbox left).
      if (this.kill) await destroyKillingProcesses(this.cgroups, name, this.kill);
      else await this.cgroups.destroy(name);
    }
    await this.updateQOSCgroups();
  }
}

/** GetPodCgroupParent with the cgroupfs driver: the literal name of the pod's cgroup. */
export function podCgroupParent(pod: Pod, cgroupRoot: string): string {
  return cgroupfsName(podCgroupName(pod, cgroupRoot));
}
