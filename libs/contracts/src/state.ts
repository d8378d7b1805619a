/**
 * What the KV buckets hold (DESIGN.md "State: JetStream KV, one writer per
 * bucket"). Keys are `<node token>.<...>`; values are these JSON records.
 * Each has exactly one writing service; readers must accept records written
 * by a newer version (fields are only added).
 */
import type { Pod, PodStatus } from './kube.js';
import { PROBE_RESULTS, type ProbeResultValue } from './messages.js';
import { S, describe, objectSchema, optional, type FieldSpec, type FieldsOf, type JsonSchema } from './schema.js';
import { PROBE_TYPES, SubjectTokenError, nodeToken, type ProbeType } from './subjects.js';

/** `pods` bucket, key `<node>.pod.<uid>`: a desired pod in the sync loop's podManager. */
export interface PodRecord {
  pod: Pod;
  /** The config source it came from ("file", "http", "api"). */
  source: string;
  /** When the sync loop first took it in (ms since the epoch). */
  addedAt: number;
  /** Whether canAdmitPod let it run. A rejected pod is Failed and never dispatched. */
  admitted: boolean;
  rejection?: { reason: string; message: string };
  /** A DELETE (graceful deletion) or REMOVE was asked for. */
  terminationRequested?: boolean;
}

/** `pods` bucket, key `<node>.queue.<uid>`: when the pod is due for its next sync (the kubelet's workQueue). */
export interface WorkQueueRecord {
  dueAt: number;
}

/** The node conditions the eviction manager reports (v1.NodeConditionType). */
export type NodePressureCondition = 'MemoryPressure' | 'DiskPressure' | 'PIDPressure';

/**
 * `pods` bucket, key `<node>.node-pressure` (NODE_PRESSURE_KEY): what the
 * sync loop's eviction manager observed at its last synchronize
 * (docs/adr/0014-node-resources.md), read by the status manager for the
 * Node's MemoryPressure, DiskPressure and PIDPressure conditions.
 */
export interface NodePressureRecord {
  /** When it was observed (ms since the epoch). */
  observedAt: number;
  /** The conditions observed within the pressure transition period (nodeConditionsObservedSince). */
  conditions: NodePressureCondition[];
  /** The hard thresholds met now, as `<signal><<quantity>` (memory.available<100Mi). */
  thresholdsMet: string[];
  /** Each observed signal: available and capacity, in bytes, inodes or PIDs. */
  observations: Record<string, { available: number; capacity: number }>;
  /** When each condition's threshold was last met (ms since the epoch): a new leader holds the transition period on from there. */
  lastObservedAt?: Partial<Record<NodePressureCondition, number>>;
}

/** The key of the node's NodePressureRecord in the `pods` bucket. */
export const nodePressureKey = (node: string): string => `${nodeToken(node)}.node-pressure`;

/**
 * `leases` bucket (a key of one writer, as the leader keys are), key `<node>.node-labels` (nodeLabelsKey): the Node's labels
 * as the API has them (its metadata.labels, a label someone else set
 * included), written by node-status whenever it reads the Node and they
 * changed; the sync loop's admission matches pods' node selectors and
 * affinity against them, as upstream's kubelet matches against its node
 * lister's Node. None yet (no cluster, or not registered): the node's own
 * labels.
 */
export interface NodeLabelsRecord {
  /** When node-status read them (ms since the epoch). */
  observedAt: number;
  labels: Record<string, string>;
}

/** The key of the node's NodeLabelsRecord in the `leases` bucket. */
export const nodeLabelsKey = (node: string): string => `${nodeToken(node)}.node-labels`;

/**
 * `pods` bucket, key `<node>.sync-loop-monitor`: the kubelet's
 * syncLoopMonitor (kubelet.go syncLoop stores the time before and after each
 * syncLoopIteration), written by the leading sync loop as its syncCh tick
 * runs (not while the runtime or the PLEG is unhealthy, as upstream's loop
 * skips its iterations then), and read by the kubelet server's `/healthz`
 * (SyncLoopHealthCheck).
 */
export interface SyncLoopMonitorRecord {
  /** LatestLoopEntryTime, ms since the epoch. */
  latestLoopEntryTime: number;
  /** How old it may be before the sync loop counts as stuck: max(2 × resyncInterval, 5 min) upstream. */
  healthThresholdMs: number;
  /** Who wrote it: `<service>@<node>#<instance>`, for people. */
  writer?: string;
}

/** The key of the node's SyncLoopMonitorRecord in the `pods` bucket. */
export const syncLoopMonitorKey = (node: string): string => `${nodeToken(node)}.sync-loop-monitor`;

/** `workers` bucket, key `<node>.<uid>`: the pod worker's podSyncStatus. */
export interface PodSyncStatusRecord {
  /** ms since the epoch; absent until the first sync. */
  syncedAt?: number;
  terminatingAt?: number;
  terminatedAt?: number;
  /** The grace period the termination runs with, in seconds. */
  gracePeriod?: number;
  /** The worker is done with this UID (TerminatedPod completed). */
  finished?: boolean;
  /**
   * A SyncPodCreate for this UID arrived while it was terminating (a static
   * pod's manifest moved out and back): once the worker finished, the pod is
   * started anew if it is still desired (pod_workers.go restartRequested).
   */
  restartRequested?: boolean;
  /**
   * The pod the worker last took (upstream's activeUpdate.Pod), so that a
   * replica taking the shard over can finish a pod that is no longer in the
   * podManager with its own grace period and hooks. Absent for a runtime
   * pod killed on its own (runningPodOnly).
   */
  pod?: Pod;
}

/**
 * The fields of a PodSyncStatusRecord this build knows (a field added to the
 * interface and not here fails to compile): a rewrite keeps any other field
 * it read (skew.ts rewriteRecord, docs/adr/0034).
 */
export const POD_SYNC_STATUS_FIELDS = {
  syncedAt: true,
  terminatingAt: true,
  terminatedAt: true,
  gracePeriod: true,
  finished: true,
  restartRequested: true,
  pod: true,
} as const satisfies Record<keyof PodSyncStatusRecord, true>;

/** The pod worker's state for a UID, as HandlePodCleanups classifies it (SyncKnownPods). */
export type PodWorkerState = 'SyncPod' | 'TerminatingPod' | 'TerminatedPod';

export function podWorkerState(s: PodSyncStatusRecord): PodWorkerState {
  if (s.terminatedAt !== undefined || s.finished) return 'TerminatedPod';
  if (s.terminatingAt !== undefined) return 'TerminatingPod';
  return 'SyncPod';
}

/** `pod-status` bucket, key `<node>.<uid>`: the status manager's versioned status. */
export interface VersionedPodStatusRecord {
  version: number;
  podName: string;
  podNamespace: string;
  status: PodStatus;
  /** The status came from TerminatePod: that instance of the pod has finished (a static pod re-added under its UID starts again). */
  podIsFinished?: boolean;
}

/**
 * `pod-cache` bucket, key `<node>.pod.<uid>`: the runtime's view of one pod
 * as the PLEG last inspected it (the kubelet's kubecontainer.PodStatus in the
 * podCache). Sandbox and container statuses are the CRI's, in its JSON form.
 */
export interface PodCacheEntry {
  uid: string;
  name: string;
  namespace: string;
  /** When the PLEG's relist that produced this began (ms since the epoch); never goes back. */
  timestamp: number;
  /** PodSandboxStatus of each sandbox, newest first. */
  sandboxStatuses: unknown[];
  /** ContainerStatus of each container. */
  containerStatuses: unknown[];
  /** The pod's IPs, from its newest ready sandbox. */
  ips: string[];
}

/** `pod-cache` bucket, key `<node>.global`: the cache's clock; every pod is at least this fresh. */
export interface PodCacheGlobal {
  timestamp: number;
  /** The PLEG is unhealthy once `timestamp` (its last successful relist) is older than this (pleg/generic.go RelistThreshold); absent: 3 minutes. */
  relistThresholdMs?: number;
  /**
   * The PLEG's last sign of life (ms since the epoch): each write of this record, a relist's and, while the
   * runtime's events are used and relists are 5 minutes apart, a heartbeat's. Absent from a PLEG that writes none.
   */
  aliveAt?: number;
  /** The PLEG is unhealthy once `aliveAt` is older than this: RELIST_THRESHOLD as configured, never widened for evented mode. */
  aliveThresholdMs?: number;
}

/**
 * `probe-results` bucket, key `<node>.<uid>.<container>.<probeType>`
 * (probeResultKey): one probe worker's result, as the prober's results
 * managers (pkg/kubelet/prober/results) keep it. The prober is the only
 * writer; the pod worker reads it when it generates a status, the status
 * manager when it restores. The probe_result messages are hints of a change.
 */
export interface ProbeResultRecord {
  podUid: string;
  containerName: string;
  probeType: ProbeType;
  /** The container the result is for, without the runtime prefix: a reader ignores a result for another container. */
  containerId: string;
  result: ProbeResultValue;
  /** The probe's output when it failed (or warned). */
  message?: string;
  /** When the result was set (ms since the epoch). */
  time: number;
}

/**
 * The key of one probe worker's result under the node token:
 * `<uid>.<container>.<probeType>`. A UID or container name that is not a
 * NATS token throws SubjectTokenError.
 */
export function probeResultKey(podUid: string, containerName: string, probeType: ProbeType): string {
  for (const [what, value] of [
    ['pod UID', podUid],
    ['container name', containerName],
  ] as const) {
    if (value.length === 0 || /[.*>\s]/.test(value)) throw new SubjectTokenError(what, value);
  }
  return `${podUid}.${containerName}.${probeType}`;
}

/**
 * Every record's fields (schema.ts), for the published contract: the JSON
 * Schema of what a bucket's key holds. No decoder checks these (a reader
 * takes what the one writer wrote); the tables are typed against the
 * interfaces above, so they follow them.
 */
const nodePressureCondition = S.string<NodePressureCondition>(['MemoryPressure', 'DiskPressure', 'PIDPressure']);

export const RECORD_FIELDS = {
  PodRecord: {
    pod: S.ref<Pod>('Pod'),
    source: S.string(),
    addedAt: S.epochMs(),
    admitted: S.boolean(),
    rejection: optional(S.object<{ reason: string; message: string }>({ reason: S.string(), message: S.string() })),
    terminationRequested: optional(S.boolean()),
  } satisfies FieldsOf<PodRecord>,
  WorkQueueRecord: { dueAt: S.epochMs() } satisfies FieldsOf<WorkQueueRecord>,
  NodePressureRecord: {
    observedAt: S.epochMs(),
    conditions: S.array(nodePressureCondition),
    thresholdsMet: describe('`<signal><<quantity>`, e.g. memory.available<100Mi', S.array(S.string())),
    observations: S.map(S.object<{ available: number; capacity: number }>({ available: S.number(), capacity: S.number() })),
    lastObservedAt: optional(S.map(S.epochMs()) as FieldSpec<Partial<Record<NodePressureCondition, number>>, false>),
  } satisfies FieldsOf<NodePressureRecord>,
  SyncLoopMonitorRecord: {
    latestLoopEntryTime: S.epochMs(),
    healthThresholdMs: S.integer(),
    writer: optional(S.string()),
  } satisfies FieldsOf<SyncLoopMonitorRecord>,
  PodSyncStatusRecord: {
    syncedAt: optional(S.epochMs()),
    terminatingAt: optional(S.epochMs()),
    terminatedAt: optional(S.epochMs()),
    gracePeriod: optional(S.integer()),
    finished: optional(S.boolean()),
    restartRequested: optional(S.boolean()),
    pod: optional(S.ref<Pod>('Pod')),
  } satisfies FieldsOf<PodSyncStatusRecord>,
  VersionedPodStatusRecord: {
    version: S.integer(),
    podName: S.string(),
    podNamespace: S.string(),
    status: S.ref<PodStatus>('PodStatus'),
    podIsFinished: optional(S.boolean()),
  } satisfies FieldsOf<VersionedPodStatusRecord>,
  PodCacheEntry: {
    uid: S.string(),
    name: S.string(),
    namespace: S.string(),
    timestamp: S.epochMs(),
    sandboxStatuses: S.array(S.ref<unknown>('cri_PodSandboxStatus')),
    containerStatuses: S.array(S.ref<unknown>('cri_ContainerStatus')),
    ips: S.array(S.string()),
  } satisfies FieldsOf<PodCacheEntry>,
  PodCacheGlobal: {
    timestamp: describe('the last successful relist (ms since the epoch): every pod is at least this fresh', S.epochMs()),
    relistThresholdMs: optional(S.integer()),
    aliveAt: optional(describe('the PLEG\'s last sign of life (ms since the epoch): a relist, or its heartbeat while container events are used', S.epochMs())),
    aliveThresholdMs: optional(describe('the PLEG is unhealthy once aliveAt is older than this (RELIST_THRESHOLD)', S.integer())),
  } satisfies FieldsOf<PodCacheGlobal>,
  ProbeResultRecord: {
    podUid: S.string(),
    containerName: S.string(),
    probeType: S.string(PROBE_TYPES),
    containerId: S.string(),
    result: S.string(PROBE_RESULTS),
    message: optional(S.string()),
    time: S.epochMs(),
  } satisfies FieldsOf<ProbeResultRecord>,
} as const;
export type RecordName = keyof typeof RECORD_FIELDS;

/** A record's JSON Schema. */
export function recordSchema(name: RecordName): JsonSchema {
  return objectSchema(RECORD_FIELDS[name]);
}
