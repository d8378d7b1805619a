import { release } from 'node:os';
import { ConfigError, cgroupsSchema, env, machineAppArmor, machineHugePages, nodeResourcesSchema, type EnvField } from '@app/config';
import { DEFAULT_SHARD_COUNT } from '@app/contracts';
import { LEGACY_CONTAINER_LOGS_DIR, QuantityError, configuredCapacity, nodeAllocatable, nodeInfoFrom, nodeReservationsFrom, parseEvictionHard, parseMapStringString, parseQuantityNanos, type EvictionThreshold, type NodeInfo } from '@app/kube';
import type { FullConfig } from '@app/service';
import { imageGCPolicyProblems, type ImageGCPolicy } from './images/image-gc-manager.js';
import { syncLoopHealthThreshold } from './sync-loop-monitor.js';

/**
 * A size in bytes as a Kubernetes quantity ("10Mi", "500k", "1G"), as the
 * container log manager's parseMaxSize takes it: a whole number of bytes
 * (Quantity.AsInt64); negative turns rotation off.
 */
export function logMaxSize(opts: { default: string; describe: string }): EnvField<number> {
  const parse = (s: string) => {
    let nanos: bigint;
    try {
      nanos = parseQuantityNanos(s);
    } catch (err) {
      if (err instanceof QuantityError) return { ok: false as const, reason: `must be a quantity of bytes like 10Mi, 512Ki or 1G (negative: no rotation), got "${s}"` };
      throw err;
    }
    if (nanos % 1_000_000_000n !== 0n) return { ok: false as const, reason: `must be a whole number of bytes, got "${s}"` };
    const bytes = nanos / 1_000_000_000n;
    if (bytes > BigInt(Number.MAX_SAFE_INTEGER) || bytes < -BigInt(Number.MAX_SAFE_INTEGER)) return { ok: false as const, reason: `is too large, got "${s}"` };
    return { ok: true as const, value: Number(bytes) };
  };
  return { describe: opts.describe, parse: (raw) => parse(raw ?? opts.default) };
}

/**
 * The log monitor's period: at least a second, as a rotated log's name
 * (`<log>.<YYYYMMDD-hhmmss>`) has a second's resolution and two rotations of
 * one log in the same second would collide. (Upstream's kubelet asks for at
 * least 3s; a second is what the names need.)
 */
function logMonitorInterval(opts: { default: number; describe: string }): EnvField<number> {
  const field = env.duration(opts);
  return {
    describe: opts.describe,
    parse: (raw) => {
      const r = field.parse(raw);
      return r.ok && r.value < 1000 ? { ok: false, reason: `must be at least 1s (rotated logs are named to the second), got "${raw ?? ''}"` } : r;
    },
  };
}

/** sync-loop's own environment variables, on top of the shared ones (@app/config sharedSchema). */
export const syncLoopConfigSchema = {
  POD_WORKER_SHARDS: env.int({ default: DEFAULT_SHARD_COUNT, min: 1, max: 1024, describe: 'how many pod-worker shards pods are spread over (the same on every service)' }),
  // The node's capacity, reservations and labels: the same settings as the status manager's Node.
  ...nodeResourcesSchema,
  SYNC_TICK: env.duration({ default: 1000, describe: 'the syncCh period: pods due in the work queue and past activeDeadlineSeconds' }),
  HOUSEKEEPING_PERIOD: env.duration({ default: 2000, describe: 'the housekeepingCh period (HandlePodCleanups)' }),
  SYNC_FREQUENCY: env.duration({ default: 60_000, describe: 'when an admitted pod whose work-done never came (a lost message) is synced again, like --sync-frequency' }),
  POD_LOGS_DIR: env.string({ default: '/var/log/pods', describe: 'the root of the pods\' log directories (the pod worker\'s POD_LOGS_DIR): the container GC removes logs there' }),
  LEGACY_CONTAINER_LOGS_DIR: env.string({ default: LEGACY_CONTAINER_LOGS_DIR, describe: 'the containers\' log symlinks (the pod worker\'s LEGACY_CONTAINER_LOGS_DIR): the container GC removes a removed container\'s and the dead ones' }),
  CONTAINER_GC_PERIOD: env.duration({ default: 60_000, describe: 'how often dead containers, sandboxes and deleted pods\' logs are garbage collected (the kubelet\'s ContainerGCPeriod)' }),
  MINIMUM_CONTAINER_TTL: env.duration({ default: 0, describe: 'a dead container younger than this is not collected, like --minimum-container-ttl-duration' }),
  MAXIMUM_DEAD_CONTAINERS_PER_CONTAINER: env.int({ default: 1, min: -1, max: 1_000_000, describe: 'dead instances kept per container, like --maximum-dead-containers-per-container (-1: no limit)' }),
  MAXIMUM_DEAD_CONTAINERS: env.int({ default: -1, min: -1, max: 1_000_000, describe: 'dead containers kept on the node, like --maximum-dead-containers (-1: no limit)' }),
  IMAGE_GC_PERIOD: env.duration({ default: 5 * 60_000, describe: 'how often unused images are garbage collected (the kubelet\'s ImageGCPeriod)' }),
  IMAGE_GC_HIGH_THRESHOLD_PERCENT: env.int({ default: 85, min: 0, max: 100, describe: 'image filesystem usage at or above which unused images are removed, like --image-gc-high-threshold (100: off unless IMAGE_MAXIMUM_GC_AGE)' }),
  IMAGE_GC_LOW_THRESHOLD_PERCENT: env.int({ default: 80, min: 0, max: 100, describe: 'the usage image GC frees down to, like --image-gc-low-threshold (less than the high threshold)' }),
  IMAGE_MINIMUM_GC_AGE: env.duration({ default: 2 * 60_000, describe: 'an image detected less than this ago is never garbage collected, like --minimum-image-gc-age' }),
  IMAGE_MAXIMUM_GC_AGE: env.duration({ default: 0, describe: 'an image unused for longer than this is removed whatever the usage, like imageMaximumGCAge (0: off)' }),
  POD_ROOT_DIR: env.string({ default: '/var/lib/kubelet-split/pods', describe: 'the root of the pods\' directories (the pod worker\'s POD_ROOT_DIR): housekeeping removes those of pods no one knows (cleanupOrphanedPodDirs)' }),
  // The pod cgroups (the pod worker's settings): housekeeping removes those of pods no one knows (cleanupOrphanedPodCgroups).
  ...cgroupsSchema,
  ORPHAN_GRACE_PERIOD: env.duration({ default: 10_000, describe: 'how long a pod directory or pod cgroup must belong to no known pod before housekeeping removes it' }),
  CONTAINER_LOG_MAX_SIZE: logMaxSize({ default: '10Mi', describe: 'a container log is rotated once it is this big, a quantity like 10Mi (--container-log-max-size; negative: no rotation)' }),
  CONTAINER_LOG_MAX_FILES: env.int({ default: 5, min: 2, max: 1_000_000, describe: 'the most log files a container keeps, the current one included (--container-log-max-files)' }),
  CONTAINER_LOG_MONITOR_INTERVAL: logMonitorInterval({ default: 10_000, describe: 'how often container logs are checked for rotation (--container-log-monitor-interval)' }),
  CONTAINER_LOG_MAX_WORKERS: env.int({ default: 1, min: 1, max: 64, describe: 'how many container logs are checked and rotated at once (--container-log-max-workers)' }),
  EVICTION_PRESSURE_TRANSITION_PERIOD: env.duration({ default: 5 * 60_000, describe: 'how long a node pressure condition stays after its threshold was last met, like --eviction-pressure-transition-period' }),
  ALLOWED_UNSAFE_SYSCTLS: env.optionalString({ describe: 'unsafe sysctls (or prefix* patterns) pods may set beside the safe ones, separated by ",", like --allowed-unsafe-sysctls' }),
  SYNC_LOOP_HEALTH_THRESHOLD: env.duration({ default: 0, describe: 'how long the sync loop may go without an iteration before the kubelet server\'s /healthz fails (0: the kubelet\'s, twice SYNC_FREQUENCY and at least 5m)' }),
  SOURCES_RESYNC_PERIOD: env.duration({ default: 30_000, describe: 'how often the podManager is checked against config-source\'s full listings' }),
};

export type SyncLoopConfig = FullConfig<typeof syncLoopConfigSchema>;

/**
 * The node admission checks pods against: the allocatable the Node reports
 * (capacity from NODE_CPU, NODE_MEMORY, NODE_MAX_PODS and the machine's
 * huge pages, less KUBE_RESERVED, SYSTEM_RESERVED and EVICTION_HARD,
 * @app/kube nodeAllocatable) and the
 * labels; throws on a bad setting.
 */
export function nodeInfoOf(cfg: SyncLoopConfig): NodeInfo {
  const settings = { cpu: cfg.NODE_CPU, memory: cfg.NODE_MEMORY, maxPods: cfg.NODE_MAX_PODS, kubeReserved: cfg.KUBE_RESERVED, systemReserved: cfg.SYSTEM_RESERVED, evictionHard: cfg.EVICTION_HARD };
  // The machine's huge pages too: they come out of the memory allocatable, as on the Node.
  const allocatable = nodeAllocatable({ ...configuredCapacity(settings), ...machineHugePages() }, nodeReservationsFrom(settings));
  const labels = parseMapStringString(cfg.NODE_LABELS, 'NODE_LABELS');
  const allowedUnsafeSysctls = (cfg.ALLOWED_UNSAFE_SYSCTLS ?? '').split(',').map((s) => s.trim()).filter(Boolean);
  try {
    const node = nodeInfoFrom({ name: cfg.NODE_NAME, cpu: `${allocatable['cpu'] ?? 0}m`, memory: String(allocatable['memory'] ?? 0), maxPods: allocatable['pods'] ?? 0, labels, allowedUnsafeSysctls, kernelRelease: release() });
    // The AppArmor admit handler, which upstream adds on Linux.
    return { ...node, appArmor: machineAppArmor() };
  } catch (err) {
    throw new Error(`ALLOWED_UNSAFE_SYSCTLS: ${(err as Error).message}`);
  }
}

/** SyncLoopHealthCheck's threshold: SYNC_LOOP_HEALTH_THRESHOLD, or the kubelet's max(2 × SYNC_FREQUENCY, 5m). */
export function syncLoopHealthThresholdOf(cfg: Pick<SyncLoopConfig, 'SYNC_LOOP_HEALTH_THRESHOLD' | 'SYNC_FREQUENCY'>): number {
  return cfg.SYNC_LOOP_HEALTH_THRESHOLD > 0 ? cfg.SYNC_LOOP_HEALTH_THRESHOLD : syncLoopHealthThreshold(cfg.SYNC_FREQUENCY);
}

/** The hard eviction thresholds (EVICTION_HARD, like --eviction-hard); throws an Error naming the variable on a bad one. */
export function evictionThresholdsOf(cfg: SyncLoopConfig): EvictionThreshold[] {
  return parseEvictionHard(cfg.EVICTION_HARD, 'EVICTION_HARD');
}

/** The image GC's policy (images.ImageGCPolicy); throws ConfigError naming each bad setting (low not under high, ...). */
export function imageGCPolicyOf(cfg: Pick<SyncLoopConfig, 'IMAGE_GC_HIGH_THRESHOLD_PERCENT' | 'IMAGE_GC_LOW_THRESHOLD_PERCENT' | 'IMAGE_MINIMUM_GC_AGE' | 'IMAGE_MAXIMUM_GC_AGE'>): ImageGCPolicy {
  const policy = { highThresholdPercent: cfg.IMAGE_GC_HIGH_THRESHOLD_PERCENT, lowThresholdPercent: cfg.IMAGE_GC_LOW_THRESHOLD_PERCENT, minAgeMs: cfg.IMAGE_MINIMUM_GC_AGE, maxAgeMs: cfg.IMAGE_MAXIMUM_GC_AGE };
  const problems = imageGCPolicyProblems(policy);
  if (problems.length > 0) throw new ConfigError(problems);
  return Object.freeze(policy);
}
