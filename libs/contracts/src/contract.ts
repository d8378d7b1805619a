/**
 * What travels where: for every subject family of subjects.ts, its address
 * with the wildcard tokens named, and the messages sent on it (and, for a
 * request/reply family, the replies); for every KV bucket, its key layouts
 * and the record each key holds. With the services' table of who publishes,
 * subscribes, asks, answers, writes and reads (libs/nats NATS_ACCESS), this
 * is what the published AsyncAPI document (docs/contract/asyncapi.yaml,
 * `npm run contract`, docs/adr/0033) is generated from.
 *
 * Checked against the families themselves (contract.spec.ts): each address,
 * its parameters made `*`, is the family's subscription wildcard, and a
 * subject the family builds is one the address matches.
 */
import type { MessageTypes } from './messages.js';
import { S, objectSchema, type FieldsOf, type JsonSchema } from './schema.js';
import type { EventMessage } from './messages.js';
import type { RecordName } from './state.js';
import { POD_OPERATIONS, PROBER_VERBS, PROBE_TYPES, STATUS_VERBS, type Subjects } from './subjects.js';
import { SERVICE_NAMES } from './services.js';

/** A body that is not one of MessageTypes (it has no `type`): its name in the contract, and its schema. */
export const UNTYPED_BODIES = {
  /** The request of a family whose request carries nothing (sourcesSnapshot, criEventsStatus). */
  EmptyRequest: { description: 'an empty JSON object: the subject says it all', schema: { type: 'object', additionalProperties: true } },
  /** Subjects.podEvents' request. */
  PodEventsRequest: { description: "a pod's events are asked by its namespace and name", schema: objectSchema({ namespace: S.string(), name: S.string() } satisfies FieldsOf<{ namespace: string; name: string }>) },
  /** Subjects.podEvents' reply. */
  PodEventsReply: {
    description: "the pod's latest events, oldest first",
    schema: objectSchema({ items: S.array(S.ref<EventMessage>('event')) } satisfies FieldsOf<{ items: EventMessage[] }>),
  },
  /** The reply of every request/reply family that failed (ErrorReply). */
  ErrorReply: {
    description: 'what every request/reply family answers when the call failed: a code (a gRPC code name for the CRI: NotFound, DeadlineExceeded, ...; NotJoined, Unavailable, InvalidArgument for config-source) and what failed',
    schema: objectSchema({
      error: S.object<{ code: string; description: string }>({ code: S.string(), description: S.string() }),
    } satisfies FieldsOf<{ error: { code: string; description: string } }>),
  },
} as const satisfies Record<string, { description: string; schema: JsonSchema }>;
export type UntypedBody = keyof typeof UNTYPED_BODIES;

/**
 * A message a channel carries, by its id in the contract: one of MessageTypes (by its key: `podUpdate` is
 * `kubelet.v1.pod_update`), an untyped body, the service info, a trace record, or the CRI's event.
 */
export type ContractMessage = keyof typeof MessageTypes | UntypedBody | 'serviceInfo' | 'traceRecord' | 'cri_ContainerEventResponse';

/** A family of subjects.ts as the contract publishes it. */
export interface ChannelContract {
  /** The address with its wildcard tokens named: `kubelet.{node}.pleg.{uid}`. */
  address: string;
  /** Each `{name}` of the address: what it is, and its values when they are fixed. */
  parameters: Readonly<Record<string, { description: string; enum?: readonly string[] }>>;
  /** What is sent on it. A CRI family's are the methods' requests (`cri` below). */
  messages: readonly ContractMessage[];
  /** A request/reply family: what comes back (ErrorReply is always possible). */
  reply?: readonly ContractMessage[];
  /** The CRI service whose methods' requests and replies travel on it (generated from the CRI descriptor). */
  cri?: 'runtime' | 'image';
}

const node = { description: 'the node name, dots as underscores (nodeToken)' };
const uid = { description: 'the pod UID' };
const service = { description: 'the service name', enum: SERVICE_NAMES };

/** Every family but `serviceCommand` (the services' own commands for people and tools, not a contract between services). */
export type ContractFamily = Exclude<keyof typeof Subjects, 'serviceCommand'>;

export const CHANNELS: Readonly<Record<ContractFamily, ChannelContract>> = {
  podUpdate: { address: 'kubelet.{node}.config.{op}', parameters: { node, op: { description: 'the PodUpdate operation (kubetypes.PodOperation)', enum: POD_OPERATIONS } }, messages: ['podUpdate'] },
  sourcesReady: { address: 'kubelet.{node}.config.ready', parameters: { node }, messages: ['sourcesReady'] },
  sourcesSnapshot: { address: 'kubelet.{node}.sources.snapshot', parameters: { node }, messages: ['EmptyRequest'], reply: ['sourcesSnapshot'] },
  pleg: { address: 'kubelet.{node}.pleg.{uid}', parameters: { node, uid }, messages: ['podLifecycleEvent'] },
  plegInspect: { address: 'kubelet.{node}.pleg.inspect.{uid}', parameters: { node, uid }, messages: ['inspectPod'] },
  probeResult: {
    address: 'kubelet.{node}.probe.{probeType}.{uid}',
    parameters: { node, probeType: { description: 'the probe', enum: PROBE_TYPES }, uid },
    messages: ['probeResult'],
  },
  work: {
    address: 'kubelet.{node}.work.{shard}.{uid}',
    parameters: { node, shard: { description: 'the pod-worker shard that owns the pod: shardOf(uid), FNV-1a of the UID modulo 16' }, uid },
    messages: ['updatePodOptions'],
    reply: ['workAccepted'],
  },
  workDone: { address: 'kubelet.{node}.work.done.{uid}', parameters: { node, uid }, messages: ['workDone'] },
  status: {
    address: 'kubelet.{node}.status.{verb}.{uid}',
    parameters: { node, verb: { description: 'the statusManager call', enum: STATUS_VERBS }, uid },
    messages: ['statusCommand'],
  },
  prober: { address: 'kubelet.{node}.prober.{verb}', parameters: { node, verb: { description: 'the probeManager call', enum: PROBER_VERBS } }, messages: ['proberCommand'] },
  events: { address: 'kubelet.{node}.events.{uid}', parameters: { node, uid: { description: 'the UID of the object the event is about (the pod, or the node)' } }, messages: ['event'] },
  criRuntime: { address: 'cri.{node}.runtime.{method}', parameters: { node, method: { description: 'the RuntimeService method' } }, messages: [], cri: 'runtime' },
  criImage: { address: 'cri.{node}.image.{method}', parameters: { node, method: { description: 'the ImageService method' } }, messages: [], cri: 'image' },
  serviceInfo: { address: 'kubelet.{node}.service.{service}.info', parameters: { node, service }, messages: ['EmptyRequest'], reply: ['serviceInfo'] },
  criEvents: { address: 'cri.{node}.events', parameters: { node }, messages: ['cri_ContainerEventResponse', 'containerEventsStatus'] },
  criEventsStatus: { address: 'kubelet.{node}.service.cri-gateway.events', parameters: { node }, messages: ['EmptyRequest'], reply: ['containerEventsStatus'] },
  apiObject: { address: 'kubelet.{node}.service.config-source.object', parameters: { node }, messages: ['apiObjectRequest'], reply: ['apiObject'] },
  serviceAccountToken: {
    address: 'kubelet.{node}.service.config-source.token',
    parameters: { node },
    messages: ['serviceAccountTokenRequest'],
    reply: ['serviceAccountToken'],
  },
  serviceList: { address: 'kubelet.{node}.service.config-source.services', parameters: { node }, messages: ['serviceListRequest'], reply: ['serviceList'] },
  podResync: { address: 'kubelet.{node}.service.sync-loop.resync', parameters: { node }, messages: ['podResyncRequest'], reply: ['podResync'] },
  podEvents: { address: 'kubelet.{node}.service.status-manager.events', parameters: { node }, messages: ['PodEventsRequest'], reply: ['PodEventsReply'] },
  nodeConditions: { address: 'kubelet.{node}.service.node-status.conditions', parameters: { node }, messages: ['EmptyRequest'], reply: ['nodeConditions'] },
  trace: {
    address: 'trace.{node}.{service}.{uid}',
    parameters: { node, service: { description: 'the service that did the hop (each may publish under its own name only)', enum: SERVICE_NAMES }, uid },
    messages: ['traceRecord'],
  },
};

/** A record a KV key holds: one of state.ts's, or one defined with the code that writes it. */
export type KvRecordName = RecordName | 'LeaderElectionRecord' | 'SharedSettingRecord' | 'ShardLease' | 'ReplicaHeartbeat';

/** One key layout of a bucket: the key after the bucket's name, and what it holds. */
export interface KvKeyLayout {
  /** With its variable tokens named: `{node}.pod.{uid}`. */
  key: string;
  parameters: Readonly<Record<string, { description: string; enum?: readonly string[] }>>;
  record: KvRecordName;
  description: string;
}

/**
 * The KV buckets (libs/nats BUCKETS) and their key layouts. A key's writer
 * is who may write it (NATS_ACCESS `writes`, held to the keys it names); a
 * deleted or purged key is a record gone (a pod removed, a lease released).
 */
export const KV_LAYOUTS: Readonly<Record<string, readonly KvKeyLayout[]>> = {
  pods: [
    { key: '{node}.pod.{uid}', parameters: { node, uid }, record: 'PodRecord', description: "a desired pod in the sync loop's podManager" },
    { key: '{node}.queue.{uid}', parameters: { node, uid }, record: 'WorkQueueRecord', description: "when the pod is due for its next sync (the kubelet's workQueue)" },
    { key: '{node}.node-pressure', parameters: { node }, record: 'NodePressureRecord', description: "what the eviction manager observed at its last synchronize (the Node's pressure conditions)" },
    { key: '{node}.sync-loop-monitor', parameters: { node }, record: 'SyncLoopMonitorRecord', description: "the syncLoopMonitor: read by the kubelet server's /healthz" },
  ],
  workers: [{ key: '{node}.{uid}', parameters: { node, uid }, record: 'PodSyncStatusRecord', description: "the pod worker's podSyncStatus" }],
  'pod-status': [{ key: '{node}.{uid}', parameters: { node, uid }, record: 'VersionedPodStatusRecord', description: "the status manager's versioned status" }],
  'pod-cache': [
    { key: '{node}.pod.{uid}', parameters: { node, uid }, record: 'PodCacheEntry', description: "the runtime's view of one pod as the PLEG last inspected it (the podCache)" },
    { key: '{node}.global', parameters: { node }, record: 'PodCacheGlobal', description: "the cache's clock: every pod is at least this fresh; the PLEG's health" },
  ],
  'probe-results': [
    {
      key: '{node}.{uid}.{container}.{probeType}',
      parameters: { node, uid, container: { description: 'the container name' }, probeType: { description: 'the probe', enum: PROBE_TYPES } },
      record: 'ProbeResultRecord',
      description: "one probe worker's result (the results managers); the probe_result messages are hints of a change",
    },
  ],
  leases: [
    {
      key: '{node}.leader.{service}',
      parameters: { node, service: { description: 'the single-active service', enum: ['sync-loop', 'pleg', 'status-manager', 'node-status'] } },
      record: 'LeaderElectionRecord',
      description: "a single-active service's leader lease, written by compare-and-set only (the revision that won it is the term's fencing token)",
    },
    { key: '{node}.setting.{name}', parameters: { node, name: { description: 'the setting (the shard count, ...)' } }, record: 'SharedSettingRecord', description: 'a setting every replica must agree on: the first to record it wins (create only)' },
    {
      key: '{node}.pod-worker-shard.{shard}',
      parameters: { node, shard: { description: 'the shard number' } },
      record: 'ShardLease',
      description: "a pod-worker replica's hold on a shard, by compare-and-set (pod-worker replicas only)",
    },
    {
      key: '{node}.pod-worker-replica.{owner}',
      parameters: { node, owner: { description: "the replica's name as a key token" } },
      record: 'ReplicaHeartbeat',
      description: "a pod-worker replica's heartbeat: it counts in the fair share of shards until expiresAt (pod-worker replicas only)",
    },
  ],
};

