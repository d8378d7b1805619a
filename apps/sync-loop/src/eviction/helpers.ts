/**
 * The eviction manager's pure parts: upstream's pkg/kubelet/eviction/helpers.go
 * (makeSignalObservations, thresholdsMet, nodeConditions,
 * nodeConditionsLastObservedAt, nodeConditionsObservedSince,
 * byEvictionPriority, getReclaimableThreshold, rankMemoryPressure,
 * rankDiskPressureFunc, evictionMessage). Hard thresholds only (no grace
 * periods, no minimum reclaim), and no dedicated image filesystem in the
 * ranking: the pods' disk use is their containers' writable layers, logs
 * and local volumes together, as upstream's ranking without an imagefs.
 */
import type { NodePressureCondition, Pod } from '@app/contracts';
import { EvictionSignal, formatResource, memoryBytes, podRequests, thresholdAmount, type EvictionThreshold } from '@app/kube';
import { isLocalEphemeralVolume, type PodStats, type Summary } from '@app/stats';

/** One signal's observation: how much is available of how much (bytes, inodes or PIDs), and when it was read. */
export interface SignalObservation {
  available: number;
  capacity: number;
  time?: string;
}

export type SignalObservations = Partial<Record<EvictionSignal, SignalObservation>>;

/** statsFunc: a pod's stats in the summary, by UID. */
export type StatsFunc = (pod: Pod) => PodStats | undefined;

/** The resource a signal reclaims (helpers.go signalToResource). */
export type ReclaimResource = 'memory' | 'ephemeral-storage' | 'inodes' | 'pids';

const SIGNAL_TO_RESOURCE: Readonly<Record<EvictionSignal, ReclaimResource>> = {
  'memory.available': 'memory',
  'allocatableMemory.available': 'memory',
  'nodefs.available': 'ephemeral-storage',
  'nodefs.inodesFree': 'inodes',
  'imagefs.available': 'ephemeral-storage',
  'imagefs.inodesFree': 'inodes',
  'containerfs.available': 'ephemeral-storage',
  'containerfs.inodesFree': 'inodes',
  'pid.available': 'pids',
};

/** helpers.go signalToNodeCondition. */
const SIGNAL_TO_CONDITION: Readonly<Record<EvictionSignal, NodePressureCondition>> = {
  'memory.available': 'MemoryPressure',
  'allocatableMemory.available': 'MemoryPressure',
  'nodefs.available': 'DiskPressure',
  'nodefs.inodesFree': 'DiskPressure',
  'imagefs.available': 'DiskPressure',
  'imagefs.inodesFree': 'DiskPressure',
  'containerfs.available': 'DiskPressure',
  'containerfs.inodesFree': 'DiskPressure',
  'pid.available': 'PIDPressure',
};

/** makeSignalObservations: the node's signals in a summary, and its pods' stats by UID. */
export function makeSignalObservations(summary: Summary): { observations: SignalObservations; stats: StatsFunc } {
  const byUid = new Map(summary.pods.map((p) => [p.podRef.uid, p]));
  const stats: StatsFunc = (pod) => byUid.get(pod.metadata.uid ?? '');
  const out: SignalObservations = {};
  const { memory, fs, runtime, rlimit } = summary.node;
  if (memory?.availableBytes !== undefined && memory.workingSetBytes !== undefined) {
    out['memory.available'] = { available: memory.availableBytes, capacity: memory.availableBytes + memory.workingSetBytes, time: memory.time };
  }
  if (fs?.availableBytes !== undefined && fs.capacityBytes !== undefined) out['nodefs.available'] = { available: fs.availableBytes, capacity: fs.capacityBytes, time: fs.time };
  if (fs?.inodesFree !== undefined && fs.inodes !== undefined) out['nodefs.inodesFree'] = { available: fs.inodesFree, capacity: fs.inodes, time: fs.time };
  const imageFs = runtime?.imageFs;
  if (imageFs?.availableBytes !== undefined && imageFs.capacityBytes !== undefined) out['imagefs.available'] = { available: imageFs.availableBytes, capacity: imageFs.capacityBytes, time: imageFs.time };
  if (imageFs?.inodesFree !== undefined && imageFs.inodes !== undefined) out['imagefs.inodesFree'] = { available: imageFs.inodesFree, capacity: imageFs.inodes, time: imageFs.time };
  if (rlimit?.maxpid !== undefined && rlimit.curproc !== undefined) out['pid.available'] = { available: rlimit.maxpid - rlimit.curproc, capacity: rlimit.maxpid, time: rlimit.time };
  return { observations: out, stats };
}

/** thresholdsMet: the thresholds whose signal is observed below them (an unobserved signal meets nothing). */
export function thresholdsMet(thresholds: readonly EvictionThreshold[], observations: SignalObservations): EvictionThreshold[] {
  return thresholds.filter((t) => {
    const o = observations[t.signal];
    return o !== undefined && o.available < thresholdAmount(t, o.capacity);
  });
}

/** nodeConditions: the conditions the thresholds met give, each once, in the thresholds' order. */
export function nodeConditions(thresholds: readonly EvictionThreshold[]): NodePressureCondition[] {
  return [...new Set(thresholds.map((t) => SIGNAL_TO_CONDITION[t.signal]))];
}

/** nodeConditionsLastObservedAt: `last`, with the conditions observed now stamped `now`. */
export function nodeConditionsLastObservedAt(conditions: readonly NodePressureCondition[], last: ReadonlyMap<NodePressureCondition, number>, now: number): Map<NodePressureCondition, number> {
  const out = new Map(last);
  for (const c of conditions) out.set(c, now);
  return out;
}

/** nodeConditionsObservedSince: the conditions last observed within the transition period. */
export function nodeConditionsObservedSince(observedAt: ReadonlyMap<NodePressureCondition, number>, periodMs: number, now: number): NodePressureCondition[] {
  const order: NodePressureCondition[] = ['MemoryPressure', 'DiskPressure', 'PIDPressure'];
  return order.filter((c) => {
    const at = observedAt.get(c);
    return at !== undefined && now - at < periodMs;
  });
}

/** byEvictionPriority: memory first, then the others in their order (a stable sort). */
export function byEvictionPriority(thresholds: readonly EvictionThreshold[]): EvictionThreshold[] {
  const memory = (t: EvictionThreshold) => t.signal === 'memory.available' || t.signal === 'allocatableMemory.available';
  return [...thresholds.filter(memory), ...thresholds.filter((t) => !memory(t))];
}

/** getReclaimableThreshold: the first threshold with a resource to reclaim. */
export function getReclaimableThreshold(thresholds: readonly EvictionThreshold[]): { threshold: EvictionThreshold; resource: ReclaimResource } | undefined {
  const threshold = thresholds[0];
  return threshold ? { threshold, resource: SIGNAL_TO_RESOURCE[threshold.signal] } : undefined;
}

/** A threshold as the flag spells it (`memory.available<100Mi`, `nodefs.available<10%`). */
export function thresholdString(t: EvictionThreshold): string {
  const value = t.quantity !== undefined ? formatQuantity(SIGNAL_TO_RESOURCE[t.signal], t.quantity) : `${Math.round((t.percentage ?? 0) * 10000) / 100}%`;
  return `${t.signal}<${value}`;
}

/** corev1helpers.PodPriority. */
const priorityOf = (pod: Pod): number => pod.spec.priority ?? 0;

/** v1resource.GetResourceRequestQuantity for memory (0 when unreadable). */
function memoryRequest(pod: Pod): number {
  try {
    return podRequests(pod).memoryBytes;
  } catch {
    return 0;
  }
}

/** A container's request of `resource` in bytes (0 when absent or unreadable). */
function containerRequest(requests: Record<string, string | number> | undefined, resource: string): number {
  const v = requests?.[resource];
  if (v === undefined) return 0;
  try {
    return memoryBytes(String(v));
  } catch {
    return 0;
  }
}

/** GetResourceRequestQuantity for ephemeral-storage: the containers' sum, or the largest init container's if more. */
function ephemeralStorageRequest(pod: Pod): number {
  const sum = pod.spec.containers.reduce((n, c) => n + containerRequest(c.resources?.requests, 'ephemeral-storage'), 0);
  const init = Math.max(0, ...(pod.spec.initContainers ?? []).map((c) => containerRequest(c.resources?.requests, 'ephemeral-storage')));
  return Math.max(sum, init);
}

/** memoryUsage: the working set (0 without one). */
const memoryUsage = (s: PodStats): number => s.memory?.workingSetBytes ?? 0;

/** localVolumeNames: the pod's hostPath volumes and its local ephemeral ones (IsLocalEphemeralVolume). */
function localVolumeNames(pod: Pod): Set<string> {
  return new Set((pod.spec.volumes ?? []).filter((v) => v.hostPath !== undefined || isLocalEphemeralVolume(v)).map((v) => v.name));
}

/** podDiskUsage without an imagefs: containers' writable layers and logs, and local volumes (bytes or inodes). */
export function podDiskUsage(s: PodStats, pod: Pod, resource: 'ephemeral-storage' | 'inodes'): number {
  const pick = (fs: { usedBytes?: number; inodesUsed?: number } | undefined) => (resource === 'inodes' ? (fs?.inodesUsed ?? 0) : (fs?.usedBytes ?? 0));
  let total = 0;
  for (const c of s.containers) total += pick(c.rootfs) + pick(c.logs);
  const local = localVolumeNames(pod);
  for (const v of s.volume ?? []) if (local.has(v.name)) total += pick(v);
  return total;
}

/** cmpBool: true first. */
const cmpBool = (a: boolean, b: boolean): number => (a === b ? 0 : a ? -1 : 1);

type Cmp = (a: Pod, b: Pod) => number;

/** orderedBy(...).Sort: a stable sort by the first comparison that tells the pods apart. */
function orderedBy(pods: Pod[], ...cmps: Cmp[]): Pod[] {
  return [...pods].sort((a, b) => {
    for (const cmp of cmps) {
      const r = cmp(a, b);
      if (r !== 0) return r;
    }
    return 0;
  });
}

/** A comparison on the pods' stats: pods without stats first. */
function withStats(stats: StatsFunc, cmp: (a: PodStats, b: PodStats, pa: Pod, pb: Pod) => number): Cmp {
  return (a, b) => {
    const sa = stats(a);
    const sb = stats(b);
    if (!sa || !sb) return cmpBool(!sa, !sb);
    return cmp(sa, sb, a, b);
  };
}

/** priority: the lower priority first. */
const priority: Cmp = (a, b) => priorityOf(a) - priorityOf(b);

/**
 * rankMemoryPressure: the pods using more memory than they request first,
 * then the lower priority, then the larger use above the request.
 */
export function rankMemoryPressure(pods: readonly Pod[], stats: StatsFunc): Pod[] {
  const exceeds = withStats(stats, (sa, sb, a, b) => cmpBool(memoryUsage(sa) > memoryRequest(a), memoryUsage(sb) > memoryRequest(b)));
  const memory = withStats(stats, (sa, sb, a, b) => memoryUsage(sb) - memoryRequest(b) - (memoryUsage(sa) - memoryRequest(a)));
  return orderedBy([...pods], exceeds, priority, memory);
}

/** rankDiskPressureFunc (no imagefs): the same order on disk use (bytes or inodes) against the ephemeral-storage request. */
export function rankDiskPressure(pods: readonly Pod[], stats: StatsFunc, resource: 'ephemeral-storage' | 'inodes'): Pod[] {
  const exceeds = withStats(stats, (sa, sb, a, b) => {
    const ra = resource === 'inodes' ? 0 : ephemeralStorageRequest(a);
    const rb = resource === 'inodes' ? 0 : ephemeralStorageRequest(b);
    return cmpBool(podDiskUsage(sa, a, resource) > ra, podDiskUsage(sb, b, resource) > rb);
  });
  const disk = withStats(stats, (sa, sb, a, b) => podDiskUsage(sb, b, resource) - ephemeralStorageRequest(b) - (podDiskUsage(sa, a, resource) - ephemeralStorageRequest(a)));
  return orderedBy([...pods], exceeds, priority, disk);
}

/** rankPIDPressure: the lower priority first (the process counts per pod are not in this summary). */
export function rankPIDPressure(pods: readonly Pod[]): Pod[] {
  return orderedBy([...pods], priority);
}

/** The pods ranked for the signal's resource, the first to evict first. */
export function rankPods(resource: ReclaimResource, pods: readonly Pod[], stats: StatsFunc): Pod[] {
  switch (resource) {
    case 'memory':
      return rankMemoryPressure(pods, stats);
    case 'ephemeral-storage':
    case 'inodes':
      return rankDiskPressure(pods, stats, resource);
    case 'pids':
      return rankPIDPressure(pods);
  }
}

/** An amount as resource.Quantity prints it: bytes in binary SI (100Mi), counts in decimal SI (5k). */
export function formatQuantity(resource: ReclaimResource, amount: number): string {
  if (resource === 'memory' || resource === 'ephemeral-storage') return formatResource('memory', amount);
  if (amount === 0) return '0';
  for (const [suffix, size] of [['E', 1e18], ['P', 1e15], ['T', 1e12], ['G', 1e9], ['M', 1e6], ['k', 1e3]] as const) if (amount % size === 0) return `${amount / size}${suffix}`;
  return String(amount);
}

/**
 * evictionMessage: "The node was low on resource: memory. Threshold
 * quantity: 100Mi, available: 50Mi. Container x was using 10Mi, request is
 * 0, has larger consumption of memory. " (every container over its request
 * named), and the event's annotations.
 */
export function evictionMessage(resource: ReclaimResource, pod: Pod, stats: StatsFunc, thresholds: readonly EvictionThreshold[], observations: SignalObservations): { message: string; annotations: Record<string, string> } {
  let message = `The node was low on resource: ${resource}. `;
  const met = thresholds.find((t) => SIGNAL_TO_RESOURCE[t.signal] === resource && observations[t.signal] !== undefined);
  const observed = met ? observations[met.signal] : undefined;
  if (met && observed) message += `Threshold quantity: ${formatQuantity(resource, thresholdAmount(met, observed.capacity))}, available: ${formatQuantity(resource, observed.available)}. `;
  const s = stats(pod);
  if (!s) return { message, annotations: {} };
  const containers = [...pod.spec.containers, ...(pod.spec.initContainers ?? [])];
  const exceeded: string[] = [];
  const usages: string[] = [];
  for (const cs of s.containers) {
    const c = containers.find((x) => x.name === cs.name);
    if (!c) continue;
    const request = containerRequest(c.resources?.requests, resource);
    let usage: number | undefined;
    if (resource === 'memory') usage = cs.memory?.workingSetBytes;
    else if (resource === 'ephemeral-storage' && cs.rootfs?.usedBytes !== undefined && cs.logs?.usedBytes !== undefined) usage = cs.rootfs.usedBytes + cs.logs.usedBytes;
    if (usage !== undefined && usage > request) {
      message += `Container ${c.name} was using ${formatQuantity(resource, usage)}, request is ${formatQuantity(resource, request)}, has larger consumption of ${resource}. `;
      exceeded.push(c.name);
      usages.push(formatQuantity(resource, usage));
    }
  }
  return { message, annotations: { offending_containers: exceeded.join(','), offending_containers_usage: usages.join(','), starved_resource: resource } };
}
