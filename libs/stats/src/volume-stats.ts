/**
 * The pods' volume stats (pkg/kubelet/server/stats/fs_resource_analyzer.go
 * and volume_stat_calculator.go, with pkg/volume's MetricsDu): for each
 * volume of a pod that has a directory under the pod's
 * `<POD_ROOT_DIR>/<uid>/volumes/<plugin>/<name>` (emptyDir, configMap,
 * secret, downwardAPI, projected; a hostPath has no metrics, as upstream's
 * MetricsNil), usedBytes and inodesUsed from a du-like walk, capacity,
 * available, inodes and inodesFree from statfs of the volume's path (a
 * memory-backed one: its tmpfs).
 *
 * Walking every volume at every request would cost what upstream avoids:
 * each pod's figures are kept for the aggregation period
 * (--volume-stats-agg-period, 1 minute), computed on the first request
 * that wants them and refreshed in the background by a request that finds
 * them older (the stale ones are served meanwhile, as upstream serves its
 * calculator's latest).
 */
import { join } from 'node:path';
import type { Clock } from '@app/clock';
import type { Pod, Volume } from '@app/contracts';
import type { HostStats } from './ports.js';
import type { VolumeStats } from './summary-types.js';

/** The volume plugins' directory names (pkg/volume: `kubernetes.io~<plugin>`) that have metrics (MetricsDu). */
export const VOLUME_PLUGIN_DIRS: readonly string[] = ['kubernetes.io~empty-dir', 'kubernetes.io~configmap', 'kubernetes.io~secret', 'kubernetes.io~downward-api', 'kubernetes.io~projected'];

/** util.IsLocalEphemeralVolume: a disk-backed emptyDir, a configMap (or a gitRepo): counted in the pod's ephemeral-storage. */
export function isLocalEphemeralVolume(v: Volume): boolean {
  const record = v as unknown as Record<string, unknown>;
  if (record['gitRepo'] || v.configMap) return true;
  return v.emptyDir !== undefined && (v.emptyDir.medium ?? '') === '';
}

export interface PodVolumeStats {
  /** The volumes counted in the pod's ephemeral storage. */
  ephemeral: VolumeStats[];
  persistent: VolumeStats[];
}

export interface VolumeStatsOptions {
  podRootDir: string;
  /** --volume-stats-agg-period. */
  periodMs: number;
}

interface Entry {
  computedAt: number;
  stats: PodVolumeStats;
  refreshing?: Promise<void>;
}

/** fsResourceAnalyzer: one calculator's latest figures per pod. */
export class VolumeStatsCache {
  private readonly pods = new Map<string, Entry>();
  /** How many times a pod's volumes were walked (for tests and the log). */
  walks = 0;

  constructor(
    private readonly host: HostStats,
    private readonly clock: Clock,
    private readonly options: VolumeStatsOptions,
  ) {}

  /** The pod's volume stats: cached ones within the period, else computed now (the first time) or refreshed behind the stale ones. */
  async podVolumeStats(pod: Pod): Promise<PodVolumeStats> {
    const uid = pod.metadata.uid ?? '';
    const entry = this.pods.get(uid);
    const now = this.clock.now();
    if (!entry) {
      const stats = await this.calculate(pod);
      this.pods.set(uid, { computedAt: now, stats });
      return stats;
    }
    if (now - entry.computedAt >= this.options.periodMs && !entry.refreshing) {
      entry.refreshing = this.calculate(pod).then(
        (stats) => void this.pods.set(uid, { computedAt: this.clock.now(), stats }),
        () => void this.pods.delete(uid),
      );
    }
    return entry.stats;
  }

  /** Waits for the refreshes under way (tests). */
  async settled(): Promise<void> {
    await Promise.all([...this.pods.values()].flatMap((e) => (e.refreshing ? [e.refreshing] : [])));
  }

  /** Forgets the pods no longer listed (the calculators of removed pods stop). */
  prune(live: ReadonlySet<string>): void {
    for (const uid of this.pods.keys()) if (!live.has(uid)) this.pods.delete(uid);
  }

  /** calcAndStoreStats */
  private async calculate(pod: Pod): Promise<PodVolumeStats> {
    this.walks++;
    const out: PodVolumeStats = { ephemeral: [], persistent: [] };
    const volumesDir = join(this.options.podRootDir, pod.metadata.uid ?? '', 'volumes');
    const time = new Date(this.clock.now()).toISOString();
    for (const v of pod.spec.volumes ?? []) {
      for (const plugin of VOLUME_PLUGIN_DIRS) {
        const path = join(volumesDir, plugin, v.name);
        const used = await this.host.dirUsage(path);
        if (!used) continue;
        const fs = await this.host.fsInfo(path);
        const stats: VolumeStats = {
          name: v.name,
          time,
          ...(fs ? { availableBytes: fs.availableBytes, capacityBytes: fs.capacityBytes } : {}),
          usedBytes: used.usedBytes,
          ...(fs?.inodes !== undefined ? { inodes: fs.inodes } : {}),
          ...(fs?.inodesFree !== undefined ? { inodesFree: fs.inodesFree } : {}),
          inodesUsed: used.inodesUsed,
        };
        (isLocalEphemeralVolume(v) ? out.ephemeral : out.persistent).push(stats);
        break;
      }
    }
    return out;
  }
}
