import { cpus, totalmem } from 'node:os';
import { env } from '@app/config';
import { DEFAULT_SHARD_COUNT } from '@app/contracts';
import { nodeInfoFrom, parseMapStringString, type NodeInfo } from '@app/kube';
import type { FullConfig } from '@app/service';

/** sync-loop's own environment variables, on top of the shared ones (@app/config sharedSchema). */
export const syncLoopConfigSchema = {
  POD_WORKER_SHARDS: env.int({ default: DEFAULT_SHARD_COUNT, min: 1, max: 1024, describe: 'how many pod-worker shards pods are spread over (the same on every service)' }),
  NODE_CPU: env.string({ default: String(cpus().length), describe: 'the node\'s allocatable CPU for admission, as a quantity ("2", "1500m")', pattern: /^\d+(\.\d+)?m?$/, patternHint: 'a CPU quantity like 2, 0.5 or 1500m' }),
  NODE_MEMORY: env.string({ default: String(totalmem()), describe: 'the node\'s allocatable memory for admission, as a quantity ("8Gi")', pattern: /^\d+(\.\d+)?([kMGTPE]i?|e\d+)?$/, patternHint: 'a memory quantity like 8Gi, 512Mi or 1000000000' }),
  NODE_MAX_PODS: env.int({ default: 110, min: 1, describe: 'the most pods the node admits, like --max-pods' }),
  NODE_LABELS: env.optionalString({ describe: 'extra node labels for nodeSelector admission, "key=value" pairs separated by ","' }),
  SYNC_TICK: env.duration({ default: 1000, describe: 'the syncCh period: pods due in the work queue and past activeDeadlineSeconds' }),
  HOUSEKEEPING_PERIOD: env.duration({ default: 2000, describe: 'the housekeepingCh period (HandlePodCleanups)' }),
  SYNC_FREQUENCY: env.duration({ default: 60_000, describe: 'when an admitted pod whose work-done never came (a lost message) is synced again, like --sync-frequency' }),
  SOURCES_RESYNC_PERIOD: env.duration({ default: 30_000, describe: 'how often the podManager is checked against config-source\'s full listings' }),
};

export type SyncLoopConfig = FullConfig<typeof syncLoopConfigSchema>;

/** The node admission checks pods against, from NODE_CPU, NODE_MEMORY, NODE_MAX_PODS and NODE_LABELS; throws on a bad NODE_LABELS. */
export function nodeInfoOf(cfg: SyncLoopConfig): NodeInfo {
  return nodeInfoFrom({ name: cfg.NODE_NAME, cpu: cfg.NODE_CPU, memory: cfg.NODE_MEMORY, maxPods: cfg.NODE_MAX_PODS, labels: parseMapStringString(cfg.NODE_LABELS, 'NODE_LABELS') });
}
