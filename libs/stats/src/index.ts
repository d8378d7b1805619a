/**
 * The kubelet's stats provider (pkg/kubelet/stats, server/stats): the
 * Summary API from the CRI and the host's files, read by the status
 * manager's `/stats/summary` and `/metrics/resource` and by the sync loop's
 * eviction manager (its summaryProvider), so both see one measure.
 */
export { CPU_CACHE_PERIOD_MS, CpuUsageCache, CriStatsProvider, SummaryProvider } from './cri-stats-provider.js';
export type { CriStatsOptions } from './cri-stats-provider.js';
export { HostStatsReader, netDev } from './host-node-stats.js';
export { HostStats, StatsPods } from './ports.js';
export type { CpuSample, HostFs, HostMemory, HostNodeStats } from './ports.js';
export { renderResourceMetrics } from './resource-metrics.js';
export type * from './summary-types.js';
export { VOLUME_PLUGIN_DIRS, VolumeStatsCache, isLocalEphemeralVolume } from './volume-stats.js';
export type { PodVolumeStats, VolumeStatsOptions } from './volume-stats.js';
