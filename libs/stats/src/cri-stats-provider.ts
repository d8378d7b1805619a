/**
 * The Summary API from the CRI and the host: upstream's
 * pkg/kubelet/stats/cri_stats_provider.go (ListPodStats, ImageFsStats) and
 * the node half of pkg/kubelet/server/stats/summary.go (summaryProviderImpl.Get).
 *
 * One summary is, read at once:
 *  - the desired pods (the sync loop's `pods` bucket): only their stats are
 *    served, as upstream serves the pods the pod manager knows;
 *  - ListPodSandbox and ListContainers: each pod's newest sandbox (its
 *    createdAt is the pod's startTime) and, per container name, the running
 *    container or else the newest (removeTerminatedContainers);
 *  - ListContainerStats: each container's CPU, memory and writable layer;
 *  - ListPodSandboxStats: the pod's own CPU, memory and network. A runtime
 *    may answer Unimplemented, and containerd 1.6 fails the whole list when
 *    one sandbox has no cgroup parent ("cgroupPath is empty"): on any error
 *    the pod's CPU and memory are the sum of its containers', as upstream's
 *    fallback;
 *  - ImageFsInfo: the runtime's image filesystem, which also bounds the
 *    containers' rootfs;
 *  - the host: the root cgroup's CPU and memory, the node filesystem (the one
 *    holding POD_ROOT_DIR), the pid limit, and each container's log directory.
 *
 * usageNanoCores: the runtime's figure when it gives one, else computed from
 * this sample's and the previous sample's usageCoreNanoSeconds of the same
 * container (CpuUsageCache, upstream's cpuUsageCache): absent on the first
 * read of a container, and after its counter went back.
 */
import { join } from 'node:path';
import type { Clock } from '@app/clock';
import { type ContainerStats as CriContainerStats, type CpuUsage, type CriRuntime, type FilesystemUsage, type MemoryUsage, type PodSandboxStats as CriPodSandboxStats } from '@app/cri';
import { KubeletLabels } from '@app/kube';
import type { HostFs, HostStats, StatsPods } from './ports.js';
import type { CPUStats, ContainerStats, FsStats, MemoryStats, NetworkStats, NodeStats, PodStats, Summary } from './summary-types.js';
import type { VolumeStatsCache } from './volume-stats.js';

/** How long a container's last CPU sample is kept once it is no longer listed (upstream's defaultCachePeriod). */
export const CPU_CACHE_PERIOD_MS = 10 * 60_000;

/** The node's own key in the CPU cache (no container id looks like this). */
const NODE_KEY = '/';

/**
 * The previous usageCoreNanoSeconds sample per container (or sandbox, or
 * the node), to turn the cumulative figure into a rate.
 */
export class CpuUsageCache {
  private readonly samples = new Map<string, { timestampNs: number; usageCoreNanoSeconds: number; seenMs: number }>();

  constructor(private readonly clock: Clock) {}

  /**
   * The average nanocores between the previous sample of `id` and this one;
   * undefined on the first sample, or when the counter went back (a new
   * container instance reusing the id, a reset): the sample is kept either way.
   */
  usageNanoCores(id: string, timestampNs: number, usageCoreNanoSeconds: number): number | undefined {
    const prev = this.samples.get(id);
    this.samples.set(id, { timestampNs, usageCoreNanoSeconds, seenMs: this.clock.now() });
    if (!prev || usageCoreNanoSeconds < prev.usageCoreNanoSeconds) return undefined;
    const interval = timestampNs - prev.timestampNs;
    if (interval <= 0) return undefined;
    return Math.round(((usageCoreNanoSeconds - prev.usageCoreNanoSeconds) / interval) * 1e9);
  }

  /** Forgets the samples not seen for CPU_CACHE_PERIOD_MS (cleanupOutdatedCaches). */
  prune(): void {
    const cutoff = this.clock.now() - CPU_CACHE_PERIOD_MS;
    for (const [id, s] of this.samples) if (s.seenMs < cutoff) this.samples.delete(id);
  }

  get size(): number {
    return this.samples.size;
  }
}

export interface CriStatsOptions {
  nodeName: string;
  /** POD_ROOT_DIR: its filesystem is the node's (nodefs). */
  podRootDir: string;
  /** The root of the pods' log directories (`<ns>_<name>_<uid>/<container>/`). */
  podLogsDir: string;
  /** The pods' volume stats (fsResourceAnalyzer); none without. */
  volumes?: VolumeStatsCache;
}

/** The Summary API's provider (server/stats.Provider's ListPodStats + GetNodeStats, narrowed to what /stats/summary needs). */
export abstract class SummaryProvider {
  /** The summary now; rejects when the runtime cannot be read. */
  abstract summary(): Promise<Summary>;
}

export class CriStatsProvider extends SummaryProvider {
  private readonly cpu: CpuUsageCache;

  constructor(
    private readonly cri: CriRuntime,
    private readonly desired: StatsPods,
    private readonly host: HostStats,
    private readonly clock: Clock,
    private readonly options: CriStatsOptions,
  ) {
    super();
    this.cpu = new CpuUsageCache(clock);
  }

  async summary(): Promise<Summary> {
    const [records, sandboxes, containers, containerStats, sandboxStats, imageFs, host, nodeFs] = await Promise.all([
      this.desired.all(),
      this.cri.runtime('ListPodSandbox', {}),
      this.cri.runtime('ListContainers', {}),
      this.cri.runtime('ListContainerStats', {}),
      // Any failure: the containers' sum (containerd 1.6 fails the whole list for one sandbox without a cgroup parent).
      this.cri.runtime('ListPodSandboxStats', {}).then(
        (r) => r.stats,
        () => undefined,
      ),
      this.cri.image('ImageFsInfo', {}).catch(() => undefined),
      this.host.node(),
      this.host.fsInfo(this.options.podRootDir),
    ]);
    const now = this.clock.now();
    const imageFsUsage = imageFs?.imageFilesystems[0];
    const imageFsStats = imageFsUsage ? await this.imageFsStats(imageFsUsage, now) : undefined;

    const statsById = new Map(containerStats.stats.map((s) => [s.attributes?.id ?? '', s]));
    const sandboxStatsById = new Map((sandboxStats ?? []).map((s) => [s.attributes?.id ?? '', s]));
    const pods: PodStats[] = [];
    for (const record of records) {
      const meta = record.pod.metadata;
      const uid = meta.uid ?? '';
      const podRef = { name: meta.name ?? '', namespace: meta.namespace ?? 'default', uid };
      // The newest sandbox of the pod, a ready one first.
      const sandbox = sandboxes.items
        .filter((s) => s.labels[KubeletLabels.podUid] === uid)
        .sort((a, b) => Number(b.state === 'SANDBOX_READY') - Number(a.state === 'SANDBOX_READY') || Number(b.createdAt) - Number(a.createdAt))[0];
      if (!sandbox) continue;
      const byName = new Map<string, (typeof containers.containers)[number]>();
      for (const c of containers.containers) {
        if (c.podSandboxId !== sandbox.id) continue;
        const name = c.labels[KubeletLabels.containerName] ?? c.metadata?.name ?? '';
        const kept = byName.get(name);
        const better = !kept || Number(c.state === 'CONTAINER_RUNNING') - Number(kept.state === 'CONTAINER_RUNNING') || Number(c.createdAt) - Number(kept.createdAt);
        if (better === true || (typeof better === 'number' && better > 0)) byName.set(name, c);
      }
      const podLogDir = join(this.options.podLogsDir, `${podRef.namespace}_${podRef.name}_${uid}`);
      const cs: ContainerStats[] = [];
      for (const [name, c] of [...byName.entries()].sort(([a], [b]) => a.localeCompare(b))) {
        const s = statsById.get(c.id);
        const logs = await this.host.dirUsage(join(podLogDir, name));
        cs.push({
          name,
          startTime: nsToIso(c.createdAt),
          ...(s?.cpu ? { cpu: this.cpuStats(c.id, s.cpu, now) } : {}),
          ...(s?.memory ? { memory: memoryStats(s.memory, now) } : {}),
          ...(s ? { rootfs: rootfsStats(s, imageFsStats, now) } : {}),
          ...(logs ? { logs: { ...fsBounds(nodeFs, now), usedBytes: logs.usedBytes, inodesUsed: logs.inodesUsed } } : {}),
        });
      }
      const own = sandboxStatsById.get(sandbox.id)?.linux;
      const pod: PodStats = { podRef, startTime: nsToIso(sandbox.createdAt), containers: cs };
      const cpu = own?.cpu ? this.cpuStats(sandbox.id, own.cpu, now) : sumCpu(cs, now);
      if (cpu) pod.cpu = cpu;
      const memory = own?.memory ? memoryStats(own.memory, now) : sumMemory(cs, now);
      if (memory) pod.memory = memory;
      const network = own?.network ? networkStats(own, now) : undefined;
      if (network) pod.network = network;
      // calcEphemeralStorage: the containers' writable layers and logs, and the pod's local ephemeral volumes.
      const volumes = await this.options.volumes?.podVolumeStats(record.pod);
      if (volumes && volumes.ephemeral.length + volumes.persistent.length > 0) pod.volume = [...volumes.ephemeral, ...volumes.persistent];
      const used = cs.reduce((n, c) => n + (c.rootfs?.usedBytes ?? 0) + (c.logs?.usedBytes ?? 0), 0) + (volumes?.ephemeral ?? []).reduce((n, v) => n + (v.usedBytes ?? 0), 0);
      const inodes = cs.reduce((n, c) => n + (c.rootfs?.inodesUsed ?? 0) + (c.logs?.inodesUsed ?? 0), 0) + (volumes?.ephemeral ?? []).reduce((n, v) => n + (v.inodesUsed ?? 0), 0);
      pod['ephemeral-storage'] = { ...fsBounds(nodeFs, now), usedBytes: used, inodesUsed: inodes };
      pods.push(pod);
    }
    this.cpu.prune();
    this.options.volumes?.prune(new Set(pods.map((p) => p.podRef.uid)));
    return { node: this.nodeStats(host, nodeFs, imageFsStats, now), pods };
  }

  private nodeStats(host: Awaited<ReturnType<HostStats['node']>>, nodeFs: HostFs | undefined, imageFs: FsStats | undefined, now: number): NodeStats {
    const time = new Date(now).toISOString();
    const node: NodeStats = { nodeName: this.options.nodeName, startTime: new Date(host.startTimeMs).toISOString() };
    if (host.cpu) {
      const nano = this.cpu.usageNanoCores(NODE_KEY, host.cpu.timestampNs, host.cpu.usageCoreNanoSeconds);
      node.cpu = { time: nsToIso(String(host.cpu.timestampNs)), usageCoreNanoSeconds: host.cpu.usageCoreNanoSeconds, ...(nano !== undefined ? { usageNanoCores: nano } : {}) };
    }
    if (host.memory) node.memory = { time, ...host.memory };
    if (host.network) node.network = { time, name: host.network[0]?.name ?? '', ...host.network[0], interfaces: host.network };
    if (nodeFs) node.fs = fsStats(nodeFs, now);
    if (imageFs) node.runtime = { imageFs };
    if (host.rlimit) node.rlimit = { time, ...host.rlimit };
    return node;
  }

  private cpuStats(id: string, cpu: CpuUsage, now: number): CPUStats {
    const time = nsToIso(cpu.timestamp, now);
    const cumulative = u64(cpu.usageCoreNanoSeconds);
    const reported = u64(cpu.usageNanoCores);
    const tsNs = Number(cpu.timestamp) > 0 ? Number(cpu.timestamp) : now * 1e6;
    const nano = cumulative === undefined ? reported : (this.cpu.usageNanoCores(id, tsNs, cumulative) ?? reported);
    return { time, ...(nano !== undefined ? { usageNanoCores: nano } : {}), ...(cumulative !== undefined ? { usageCoreNanoSeconds: cumulative } : {}) };
  }

  /** ImageFsInfo's usage, bounded by the filesystem of its mountpoint. */
  private async imageFsStats(usage: FilesystemUsage, now: number): Promise<FsStats> {
    const mount = usage.fsId?.mountpoint;
    const fs = mount ? await this.host.fsInfo(mount) : undefined;
    const used = u64(usage.usedBytes);
    const inodesUsed = u64(usage.inodesUsed);
    return { ...fsBounds(fs, now), time: nsToIso(usage.timestamp, now), ...(used !== undefined ? { usedBytes: used } : {}), ...(inodesUsed !== undefined ? { inodesUsed } : {}) };
  }
}

/** A CRI UInt64Value (a decimal string) as a number. */
function u64(v: { value: string } | undefined): number | undefined {
  if (v === undefined) return undefined;
  const n = Number(v.value);
  return Number.isFinite(n) ? n : undefined;
}

/** A CRI time (ns since the epoch, a decimal string) as RFC 3339; `fallbackMs` when zero. */
function nsToIso(ns: string, fallbackMs?: number): string {
  const n = Number(ns);
  return new Date(n > 0 ? Math.floor(n / 1e6) : (fallbackMs ?? 0)).toISOString();
}

function memoryStats(m: MemoryUsage, now: number): MemoryStats {
  const out: MemoryStats = { time: nsToIso(m.timestamp, now) };
  for (const k of ['availableBytes', 'usageBytes', 'workingSetBytes', 'rssBytes', 'pageFaults', 'majorPageFaults'] as const) {
    const v = u64(m[k]);
    if (v !== undefined) out[k] = v;
  }
  return out;
}

function fsBounds(fs: HostFs | undefined, now: number): FsStats {
  if (!fs) return { time: new Date(now).toISOString() };
  return {
    time: new Date(now).toISOString(),
    availableBytes: fs.availableBytes,
    capacityBytes: fs.capacityBytes,
    ...(fs.inodes !== undefined ? { inodes: fs.inodes } : {}),
    ...(fs.inodesFree !== undefined ? { inodesFree: fs.inodesFree } : {}),
  };
}

function fsStats(fs: HostFs, now: number): FsStats {
  const inodesUsed = fs.inodes !== undefined && fs.inodesFree !== undefined ? fs.inodes - fs.inodesFree : undefined;
  return { ...fsBounds(fs, now), usedBytes: fs.usedBytes, ...(inodesUsed !== undefined ? { inodesUsed } : {}) };
}

/** A container's writable layer, bounded by the image filesystem (upstream: rootfs capacity is imagefs's). */
function rootfsStats(s: CriContainerStats, imageFs: FsStats | undefined, now: number): FsStats {
  const layer = s.writableLayer;
  const used = u64(layer?.usedBytes);
  const inodesUsed = u64(layer?.inodesUsed);
  const bounds: FsStats = imageFs ? { ...imageFs } : { time: new Date(now).toISOString() };
  delete bounds.usedBytes;
  delete bounds.inodesUsed;
  return { ...bounds, time: nsToIso(layer?.timestamp ?? '0', now), ...(used !== undefined ? { usedBytes: used } : {}), ...(inodesUsed !== undefined ? { inodesUsed } : {}) };
}

/** The pod's CPU as the sum of its containers' (no PodSandboxStats). */
function sumCpu(cs: ContainerStats[], now: number): CPUStats | undefined {
  const with_ = cs.filter((c) => c.cpu);
  if (with_.length === 0) return undefined;
  const out: CPUStats = { time: new Date(now).toISOString(), usageCoreNanoSeconds: with_.reduce((n, c) => n + (c.cpu?.usageCoreNanoSeconds ?? 0), 0) };
  if (with_.every((c) => c.cpu?.usageNanoCores !== undefined)) out.usageNanoCores = with_.reduce((n, c) => n + (c.cpu?.usageNanoCores ?? 0), 0);
  return out;
}

/** The pod's memory as the sum of its containers' (no PodSandboxStats). */
function sumMemory(cs: ContainerStats[], now: number): MemoryStats | undefined {
  const with_ = cs.filter((c) => c.memory);
  if (with_.length === 0) return undefined;
  const out: MemoryStats = { time: new Date(now).toISOString() };
  for (const k of ['usageBytes', 'workingSetBytes', 'rssBytes', 'pageFaults', 'majorPageFaults'] as const) {
    if (with_.some((c) => c.memory?.[k] !== undefined)) out[k] = with_.reduce((n, c) => n + (c.memory?.[k] ?? 0), 0);
  }
  return out;
}

function networkStats(own: NonNullable<CriPodSandboxStats['linux']>, now: number): NetworkStats | undefined {
  const n = own.network;
  if (!n) return undefined;
  const iface = (i: NonNullable<typeof n.defaultInterface>) => ({
    name: i.name,
    ...(u64(i.rxBytes) !== undefined ? { rxBytes: u64(i.rxBytes) } : {}),
    ...(u64(i.rxErrors) !== undefined ? { rxErrors: u64(i.rxErrors) } : {}),
    ...(u64(i.txBytes) !== undefined ? { txBytes: u64(i.txBytes) } : {}),
    ...(u64(i.txErrors) !== undefined ? { txErrors: u64(i.txErrors) } : {}),
  });
  const def = n.defaultInterface ? iface(n.defaultInterface) : { name: '' };
  return { time: nsToIso(n.timestamp, now), ...def, interfaces: n.interfaces.map(iface) };
}
