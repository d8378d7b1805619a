export { KvPodCache, MemoryPodCache, PodCache, podCacheGlobalKey, podCacheKey } from './pod-cache.js';
export type { CacheResult } from './pod-cache.js';
export { CriKvNodeHealth } from './node-health.js';
