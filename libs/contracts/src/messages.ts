/**
 * The payloads that travel on our subjects. Each carries a `type` versioned in
 * its name (`kubelet.v1.pod_update`); fields are only ever added, never
 * repurposed, so a v1 reader keeps working when a field appears.
 */
import type { NodeCondition, Pod, Service } from './kube.js';
import type { PodOperation, ProbeType } from './subjects.js';
import { POD_OPERATIONS, PROBE_TYPES } from './subjects.js';
import { classifyTypeMismatch, parseMessageType, type ContractClaim, type ContractRange, type TypeMismatch } from './skew.js';
import { S, among, arr, bool, checkField, checkedFields, describe, num, obj, objectSchema, optional, str, type FieldSpec, type FieldsOf, type JsonSchema } from './schema.js';

export const MessageTypes = {
  podUpdate: 'kubelet.v1.pod_update',
  sourcesReady: 'kubelet.v1.sources_ready',
  podLifecycleEvent: 'kubelet.v1.pod_lifecycle_event',
  probeResult: 'kubelet.v1.probe_result',
  updatePodOptions: 'kubelet.v1.update_pod_options',
  workDone: 'kubelet.v1.work_done',
  workAccepted: 'kubelet.v1.work_accepted',
  statusCommand: 'kubelet.v1.status_command',
  proberCommand: 'kubelet.v1.prober_command',
  event: 'kubelet.v1.event',
  sourcesSnapshot: 'kubelet.v1.sources_snapshot',
  containerEventsStatus: 'kubelet.v1.container_events_status',
  apiObjectRequest: 'kubelet.v1.api_object_request',
  apiObject: 'kubelet.v1.api_object',
  serviceAccountTokenRequest: 'kubelet.v1.service_account_token_request',
  serviceAccountToken: 'kubelet.v1.service_account_token',
  inspectPod: 'kubelet.v1.inspect_pod',
  serviceListRequest: 'kubelet.v1.service_list_request',
  serviceList: 'kubelet.v1.service_list',
  podResyncRequest: 'kubelet.v1.pod_resync_request',
  podResync: 'kubelet.v1.pod_resync',
  nodeConditions: 'kubelet.v1.node_conditions',
} as const;
export type MessageType = (typeof MessageTypes)[keyof typeof MessageTypes];

/** configCh's PodUpdate: the pods of one source and what happened to them. */
export interface PodUpdateMessage {
  type: typeof MessageTypes.podUpdate;
  op: PodOperation;
  /** kubetypes source: "file", "http" or "api". */
  source: string;
  pods: Pod[];
}

/** sourcesReady: these sources have each delivered one full listing. */
export interface SourcesReadyMessage {
  type: typeof MessageTypes.sourcesReady;
  sources: string[];
}

/** pleg.PodLifecycleEventType */
export const POD_LIFECYCLE_EVENT_TYPES = ['ContainerStarted', 'ContainerDied', 'ContainerRemoved', 'PodSync', 'ContainerChanged'] as const;
export type PodLifecycleEventType = (typeof POD_LIFECYCLE_EVENT_TYPES)[number];

/** pleg.PodLifecycleEvent: ID is the pod UID, data the container ID where there is one. */
export interface PodLifecycleEventMessage {
  type: typeof MessageTypes.podLifecycleEvent;
  id: string;
  eventType: PodLifecycleEventType;
  data?: string;
}

/**
 * A pod worker asks the PLEG to inspect one pod now: its sync that ended at
 * `syncEnd` (ms since the epoch, the pod worker's clock) changed the pod in
 * the runtime. The cache entry it writes is newer than `syncEnd`, so the pod
 * worker's next GetNewerThan is answered by it, not by the next relist.
 */
export interface InspectPodMessage {
  type: typeof MessageTypes.inspectPod;
  podUid: string;
  syncEnd: number;
}

export const PROBE_RESULTS = ['Success', 'Failure', 'Unknown'] as const;
export type ProbeResultValue = (typeof PROBE_RESULTS)[number];

/** results.Update: one probe's result changed (or a liveness failure repeated). */
export interface ProbeResultMessage {
  type: typeof MessageTypes.probeResult;
  probeType: ProbeType;
  podUid: string;
  containerId: string;
  containerName?: string;
  result: ProbeResultValue;
  message?: string;
  /** The probe's own terminationGracePeriodSeconds, for the kill a liveness or startup failure causes. */
  terminationGracePeriodSeconds?: number;
}

/** kubetypes.SyncPodType */
export const SYNC_POD_TYPES = ['SyncPodSync', 'SyncPodUpdate', 'SyncPodCreate', 'SyncPodKill'] as const;
export type SyncPodType = (typeof SYNC_POD_TYPES)[number];

/** The kubelet's KillPodOptions. */
export interface KillPodOptions {
  /** PodTerminationGracePeriodSecondsOverride. */
  gracePeriodOverride?: number;
  reason?: string;
  message?: string;
  /**
   * PodStatusFunc, as data: the status the pod ends with, set on every
   * status generated while it terminates (the eviction manager's Failed /
   * Evicted with its message and the DisruptionTarget condition).
   */
  podStatus?: { phase: 'Failed'; reason: string; message: string; disruptionTarget?: { reason: string; message: string } };
}

/** The kubelet's UpdatePodOptions, as dispatchWork sends it. */
export interface UpdatePodOptionsMessage {
  type: typeof MessageTypes.updatePodOptions;
  updateType: SyncPodType;
  /** RFC 3339: when the sync loop first saw the change (for pod start latency). */
  startTime: string;
  pod: Pod;
  killPodOptions?: KillPodOptions;
  /** Set when the pod exists only in the runtime (HandlePodCleanups' orphans): `pod` is built from its labels. */
  runningPodOnly?: boolean;
}

/**
 * The reply to a dispatchWork request: the replica that owns the pod's
 * shard now has the update (handed to UpdatePod). A dispatch that gets no
 * such reply reached no owner (the shard was changing hands), and the sync
 * loop sends it again.
 */
export interface WorkAcceptedMessage {
  type: typeof MessageTypes.workAccepted;
  podUid: string;
  shard: number;
}

/** completeWork: requeue this pod after `requeueAfterMs`. */
export interface WorkDoneMessage {
  type: typeof MessageTypes.workDone;
  podUid: string;
  requeueAfterMs: number;
  error?: string;
}

/** A statusManager call; `verb` is in the subject too. */
export interface StatusCommandMessage {
  type: typeof MessageTypes.statusCommand;
  podUid: string;
  /** Verb-specific arguments (a PodStatus, a container ID and readiness, ...). */
  args: Record<string, unknown>;
}

/** A probeManager call; `verb` is in the subject. */
export interface ProberCommandMessage {
  type: typeof MessageTypes.proberCommand;
  pods: Pod[];
  /** CleanupPods: the UIDs whose probe workers may keep running (the others stop). */
  podUids?: string[];
}

/** recorder.Eventf, as a core/v1 Event would carry it. */
export interface EventMessage {
  type: typeof MessageTypes.event;
  involvedObject: { kind: string; namespace?: string; name: string; uid?: string; fieldPath?: string };
  eventType: 'Normal' | 'Warning';
  reason: string;
  message: string;
  source: { component: string; host: string };
  timestamp: string;
}

/** The reply to `Subjects.sourcesSnapshot`: each configured source's current listing. */
export interface SourcesSnapshotMessage {
  type: typeof MessageTypes.sourcesSnapshot;
  sources: { source: string; ready: boolean; pods: Pod[] }[];
}

/**
 * On `cri.<node>.events` beside the CRI's ContainerEventResponse (which has
 * no `type`): the relay's state, on every change and every 30s, so an
 * evented PLEG knows whether events flow.
 */
export interface ContainerEventsStatusMessage {
  type: typeof MessageTypes.containerEventsStatus;
  state: 'starting' | 'streaming' | 'unsupported' | 'reconnecting' | 'stopped';
  detail: string;
  /**
   * Which stream: it changes whenever the relay opens a new one (a
   * reconnect, a restarted cri-gateway). Events made between two streams
   * were never relayed, so a PLEG that sees it change relists. Absent from
   * relays older than it.
   */
  stream?: string;
}

/**
 * The apiserver objects a pod needs (ADR 0014): configMap and secret
 * volumes, imagePullSecrets (namespaced), runtimeClassName (cluster-scoped).
 */
export const API_OBJECT_KINDS = ['ConfigMap', 'Secret', 'RuntimeClass'] as const;
export type ApiObjectKind = (typeof API_OBJECT_KINDS)[number];

/**
 * The group-resource upstream's managers name an object by in their errors
 * (configmap_manager.go `corev1.Resource("configmap")`, the RuntimeClass
 * lister's `runtimeclass.node.k8s.io`): `configmap "x" not found`.
 */
export function apiObjectResource(kind: ApiObjectKind): string {
  switch (kind) {
    case 'ConfigMap':
      return 'configmap';
    case 'Secret':
      return 'secret';
    case 'RuntimeClass':
      return 'runtimeclass.node.k8s.io';
  }
}

/** Whether objects of `kind` live in a namespace. */
export function isNamespacedKind(kind: ApiObjectKind): boolean {
  return kind !== 'RuntimeClass';
}

/**
 * pod-worker -> config-source, request/reply on Subjects.apiObject: one object, as the watch-based
 * manager of config-source holds it. `namespace` for the namespaced kinds.
 */
export interface ApiObjectRequestMessage {
  type: typeof MessageTypes.apiObjectRequest;
  kind: ApiObjectKind;
  namespace?: string;
  name: string;
}

/**
 * The reply: the object's payload, or `found: false` (it does not exist).
 * A failure is an ErrorReply instead: `NotJoined` (config-source has no
 * KUBECONFIG), `Unavailable` (the object's watch has not listed it yet:
 * what failed is in the description), `InvalidArgument`. It may carry a
 * secret: it crosses NATS in this reply only (never a stream or a bucket)
 * and is never logged.
 */
export interface ApiObjectReplyMessage {
  type: typeof MessageTypes.apiObject;
  kind: ApiObjectKind;
  namespace?: string;
  name: string;
  found: boolean;
  /** ConfigMap: its data (text). Secret: its data, base64 as the API gives it. */
  data?: Record<string, string>;
  /** ConfigMap: its binaryData, base64. */
  binaryData?: Record<string, string>;
  /** Secret: its type (`kubernetes.io/dockerconfigjson`, `Opaque`, ...). */
  secretType?: string;
  /** RuntimeClass: its handler (the CRI runtime handler). */
  handler?: string;
}

/**
 * pod-worker -> config-source, request/reply on Subjects.serviceAccountToken: a token of the pod's service
 * account bound to the pod (TokenRequest), as the kubelet's token manager
 * gets it for a projected serviceAccountToken source.
 */
export interface ServiceAccountTokenRequestMessage {
  type: typeof MessageTypes.serviceAccountTokenRequest;
  namespace: string;
  serviceAccountName: string;
  podName: string;
  podUid: string;
  /** The source's audience; none: the apiserver's. */
  audiences?: string[];
  expirationSeconds: number;
}

/** The reply: the token (a credential: in this reply only, never logged). Errors as ErrorReply (`NotJoined`, `Unavailable`). */
export interface ServiceAccountTokenMessage {
  type: typeof MessageTypes.serviceAccountToken;
  token: string;
  /** RFC 3339. */
  expirationTimestamp: string;
}

/**
 * pod-worker -> config-source, request/reply on Subjects.serviceList: the services a container of a
 * pod of `namespace` learns of through its environment (upstream's
 * serviceLister, a watch of every Service).
 */
export interface ServiceListRequestMessage {
  type: typeof MessageTypes.serviceListRequest;
  namespace: string;
}

/**
 * The reply: the services of the namespace asked for and of `default` (the
 * master services, `kubernetes`, are there), as the apiserver gives them
 * (metadata and spec: name, namespace, clusterIP, ports). Which of them make
 * variables is the pod worker's (envvars.ts). Errors as ErrorReply:
 * `NotJoined` (no KUBECONFIG: no services, as a kubelet without a master),
 * `Unavailable` (the services have not been listed once yet).
 */
export interface ServiceListMessage {
  type: typeof MessageTypes.serviceList;
  services: Service[];
}

/** An event about a pod, as the kubelet's recorder makes it (source component "kubelet"). */
export function podEvent(
  pod: Pod,
  eventType: 'Normal' | 'Warning',
  reason: string,
  message: string,
  host: string,
  opts: { fieldPath?: string; at?: Date } = {},
): EventMessage {
  return {
    type: MessageTypes.event,
    involvedObject: { kind: 'Pod', namespace: pod.metadata.namespace ?? '', name: pod.metadata.name ?? '', uid: pod.metadata.uid ?? '', ...(opts.fieldPath ? { fieldPath: opts.fieldPath } : {}) },
    eventType,
    reason,
    message,
    source: { component: 'kubelet', host },
    timestamp: (opts.at ?? new Date()).toISOString(),
  };
}

/** Subjects.podResync's request: why every pod is to be synced now (for the logs). */
export interface PodResyncRequestMessage {
  type: typeof MessageTypes.podResyncRequest;
  /** Who asks and why: "status-manager@<node>#<instance> started leading". */
  reason: string;
}

/** Subjects.podResync's reply: whether the answering sync loop leads, and how many pods it dispatched. */
export interface PodResyncMessage {
  type: typeof MessageTypes.podResync;
  leading: boolean;
  pods: number;
}

/**
 * Subjects.nodeConditions' reply: the Node's conditions as node-status last
 * computed them (nodestatus.go's setters: MemoryPressure, DiskPressure,
 * PIDPressure, Ready). A standby, or a node that has not computed them yet
 * (no apiserver to keep a Node in), answers none.
 */
export interface NodeConditionsMessage {
  type: typeof MessageTypes.nodeConditions;
  node: string;
  /** Whether the answering instance leads (only the leader keeps the Node). */
  leading: boolean;
  conditions: NodeCondition[];
}

export type Message =
  | PodUpdateMessage
  | SourcesReadyMessage
  | PodLifecycleEventMessage
  | ProbeResultMessage
  | UpdatePodOptionsMessage
  | WorkDoneMessage
  | WorkAcceptedMessage
  | StatusCommandMessage
  | ProberCommandMessage
  | EventMessage
  | SourcesSnapshotMessage
  | ContainerEventsStatusMessage
  | ApiObjectRequestMessage
  | ApiObjectReplyMessage
  | ServiceAccountTokenRequestMessage
  | ServiceAccountTokenMessage
  | InspectPodMessage
  | ServiceListRequestMessage
  | ServiceListMessage
  | PodResyncRequestMessage
  | PodResyncMessage
  | NodeConditionsMessage;

export type MessageOf<T extends MessageType> = Extract<Message, { type: T }>;

/**
 * A message that is not what its subject promises; `reason` names the field.
 * `refusal` says when it is a matter of versions (docs/adr/0034): a type
 * version this build does not read (`unsupported-version`), or a kind it
 * does not know at all (`unknown-kind`, ignored).
 */
export class MessageError extends Error {
  constructor(
    readonly reason: string,
    readonly refusal?: TypeMismatch['refusal'],
  ) {
    super(reason);
    this.name = 'MessageError';
  }
}

/** Per kind (`work_done`), the versions of it this build reads. */
export const READABLE_MESSAGE_VERSIONS: ReadonlyMap<string, readonly number[]> = (() => {
  const out = new Map<string, number[]>();
  for (const type of Object.values(MessageTypes)) {
    const name = parseMessageType(type);
    if (name) out.set(name.kind, [...(out.get(name.kind) ?? []), name.version]);
  }
  return out;
})();

/** Why a message of type `got` is not read where `expected` is due. */
function typeMismatchError(expected: MessageType, got: unknown): MessageError {
  const wanted = parseMessageType(expected);
  const seen = JSON.stringify(got ?? null);
  const mismatch: TypeMismatch = wanted ? classifyTypeMismatch(wanted, got, READABLE_MESSAGE_VERSIONS) : { refusal: 'no-type' };
  switch (mismatch.refusal) {
    case 'unsupported-version':
      return new MessageError(
        `refused type ${seen}: version ${mismatch.version} of ${mismatch.kind} is not one this service reads (it reads ${mismatch.reads.map((v) => `v${v}`).join(', ')}; docs/adr/0034-version-skew-policy.md)`,
        'unsupported-version',
      );
    case 'unknown-kind':
      return new MessageError(`ignored type ${seen}: a message kind this service does not know (expected type "${expected}")`, 'unknown-kind');
    case 'wrong-kind':
    case 'no-type':
      return new MessageError(`expected type "${expected}", got ${seen}`);
  }
}

type Check = (m: Record<string, unknown>) => string | undefined;

/** A namespaced kind names its namespace; a cluster-scoped one has none. */
const namespaceOfKind: Check = (m) => {
  const namespaced = isNamespacedKind(m['kind'] as ApiObjectKind);
  if (namespaced) return typeof m['namespace'] === 'string' && m['namespace'].length > 0 ? undefined : `field "namespace" must be a non-empty string for a ${String(m['kind'])}`;
  return m['namespace'] === undefined || m['namespace'] === '' ? undefined : `field "namespace" must be absent for a ${String(m['kind'])}`;
};

const pods = arr(S.ref<Pod>('Pod'));
const podUid = describe('the pod UID', str());

const killPodOptions = S.object<KillPodOptions>({
  gracePeriodOverride: optional(describe('PodTerminationGracePeriodSecondsOverride, seconds', S.integer())),
  reason: optional(S.string()),
  message: optional(S.string()),
  podStatus: optional(
    describe(
      'PodStatusFunc as data: the status the pod ends with (an eviction)',
      S.object<NonNullable<KillPodOptions['podStatus']>>({
        phase: S.string(['Failed'] as const),
        reason: S.string(),
        message: S.string(),
        disruptionTarget: optional(S.object<{ reason: string; message: string }>({ reason: S.string(), message: S.string() })),
      }),
    ),
  ),
});

/**
 * StatusCommandMessage's `args`, which the code types as a plain object: the
 * keys the status manager reads (status-manager.ts handleCommand), by verb.
 * Written here by hand, as the only place they are listed.
 */
const statusArgs: FieldSpec<Record<string, unknown>, false> = {
  optional: false,
  schema: {
    type: 'object',
    description:
      "the verb's arguments (the verb is in the subject). SetPodStatus, TerminatePod: status. SetContainerReadiness: containerId, ready. SetContainerStartup: containerId, started. RemoveOrphanedStatuses: none. A pod worker adds podName, podNamespace and podAnnotations to every call (the status manager needs them when the pod's record is gone)",
    properties: {
      status: S.ref('PodStatus').schema,
      containerId: { type: 'string' },
      ready: { type: 'boolean' },
      started: { type: 'boolean' },
      podName: { type: 'string' },
      podNamespace: { type: 'string' },
      podAnnotations: { type: 'object', additionalProperties: { type: 'string' } },
    },
    additionalProperties: true,
  },
};

/**
 * Every message's fields (schema.ts): what decodeMessage checks (the
 * checked builders, in this order) and what the published JSON Schema says.
 */
export const MESSAGE_FIELDS: { readonly [T in MessageType]: FieldsOf<MessageOf<T>> } = {
  [MessageTypes.podUpdate]: { op: among(POD_OPERATIONS), source: describe('the kubetypes source: "file", "http" or "api"', str()), pods },
  [MessageTypes.sourcesReady]: { sources: arr(S.string()) },
  [MessageTypes.podLifecycleEvent]: {
    id: describe('the pod UID', str()),
    eventType: among(POD_LIFECYCLE_EVENT_TYPES),
    data: optional(describe('the container ID, where there is one', S.string())),
  },
  [MessageTypes.probeResult]: {
    probeType: among(PROBE_TYPES),
    podUid,
    containerId: str(),
    result: among(PROBE_RESULTS),
    containerName: optional(S.string()),
    message: optional(S.string()),
    terminationGracePeriodSeconds: optional(S.integer()),
  },
  [MessageTypes.updatePodOptions]: {
    updateType: among(SYNC_POD_TYPES),
    startTime: str(),
    pod: obj(S.ref<Pod>('Pod')),
    killPodOptions: optional(killPodOptions),
    runningPodOnly: optional(S.boolean()),
  },
  [MessageTypes.workDone]: { podUid, requeueAfterMs: num(), error: optional(S.string()) },
  [MessageTypes.workAccepted]: { podUid, shard: num() },
  [MessageTypes.statusCommand]: { podUid, args: obj(statusArgs) },
  [MessageTypes.proberCommand]: { pods, podUids: optional(S.array(S.string())) },
  [MessageTypes.sourcesSnapshot]: {
    sources: arr(S.object<SourcesSnapshotMessage['sources'][number]>({ source: S.string(), ready: S.boolean(), pods: S.array(S.ref<Pod>('Pod')) })),
  },
  [MessageTypes.containerEventsStatus]: {
    state: str(['starting', 'streaming', 'unsupported', 'reconnecting', 'stopped'] as const),
    detail: S.string(),
    stream: optional(describe('changes with every stream the relay opens; events between two were not relayed', S.string())),
  },
  [MessageTypes.apiObjectRequest]: { kind: among(API_OBJECT_KINDS), name: str(), namespace: optional(describe('for the namespaced kinds (ConfigMap, Secret) only', S.string())) },
  [MessageTypes.apiObject]: {
    kind: among(API_OBJECT_KINDS),
    name: str(),
    found: bool(),
    namespace: optional(S.string()),
    data: optional(describe('ConfigMap: its data (text). Secret: its data, base64', S.map(S.string()))),
    binaryData: optional(S.map(S.string())),
    secretType: optional(S.string()),
    handler: optional(S.string()),
  },
  [MessageTypes.serviceAccountTokenRequest]: {
    namespace: str(),
    serviceAccountName: str(),
    podName: str(),
    podUid,
    expirationSeconds: num(),
    audiences: optional(S.array(S.string())),
  },
  [MessageTypes.serviceAccountToken]: { token: str(), expirationTimestamp: describe('RFC 3339', str()) },
  [MessageTypes.inspectPod]: { podUid, syncEnd: describe("when the sync that changed the pod ended: ms since the epoch, the pod worker's clock", num()) },
  [MessageTypes.serviceListRequest]: { namespace: str() },
  [MessageTypes.serviceList]: { services: arr(S.ref<Service>('Service')) },
  [MessageTypes.podResyncRequest]: { reason: str() },
  [MessageTypes.podResync]: { leading: bool(), pods: num() },
  [MessageTypes.nodeConditions]: { node: str(), leading: bool(), conditions: arr(S.ref<NodeCondition>('NodeCondition')) },
  [MessageTypes.event]: {
    involvedObject: obj(
      S.object<EventMessage['involvedObject']>({
        kind: S.string(),
        name: S.string(),
        namespace: optional(S.string()),
        uid: optional(S.string()),
        fieldPath: optional(S.string()),
      }),
    ),
    eventType: among(['Normal', 'Warning'] as const),
    reason: str(),
    message: str(),
    source: obj(S.object<EventMessage['source']>({ component: S.string(), host: S.string() })),
    timestamp: describe('RFC 3339', str()),
  },
};

/** Checks beyond one field's: decodeMessage runs them after the fields'. */
const MESSAGE_RULES: Partial<Record<MessageType, Check[]>> = {
  [MessageTypes.apiObjectRequest]: [namespaceOfKind],
};

const REQUIRED: Record<MessageType, Check[]> = Object.fromEntries(
  (Object.keys(MESSAGE_FIELDS) as MessageType[]).map((t) => [
    t,
    [...checkedFields(MESSAGE_FIELDS[t] as Record<string, FieldSpec<unknown>>).map(({ name, check }): Check => (m) => checkField(name, check, m[name])), ...(MESSAGE_RULES[t] ?? [])],
  ]),
) as Record<MessageType, Check[]>;

/** The JSON Schema of a message of type `t` (its `type` fixed), for the published contract. */
export function messageSchema(t: MessageType): JsonSchema {
  return objectSchema(MESSAGE_FIELDS[t], t);
}

/** The fields a receiver refuses a message of type `t` without (decodeMessage), for the published contract. */
export function checkedMessageFields(t: MessageType): string[] {
  return checkedFields(MESSAGE_FIELDS[t] as Record<string, FieldSpec<unknown>>).map((f) => f.name);
}

export function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/**
 * Checks that `value` is a message of type `expected` with its required
 * fields; throws MessageError naming the first thing that is wrong.
 */
export function decodeMessage<T extends MessageType>(expected: T, value: unknown): MessageOf<T> {
  if (!isRecord(value)) throw new MessageError(`expected a JSON object of type ${expected}`);
  if (value['type'] !== expected) throw typeMismatchError(expected, value['type']);
  for (const check of REQUIRED[expected]) {
    const problem = check(value);
    if (problem) throw new MessageError(`${expected}: ${problem}`);
  }
  return value as unknown as MessageOf<T>;
}

/** Parses raw bytes as JSON; throws MessageError when they are not. */
export function parseJson(data: Uint8Array): unknown {
  const text = new TextDecoder().decode(data);
  try {
    return JSON.parse(text) as unknown;
  } catch (e) {
    throw new MessageError(`payload is not JSON: ${(e as Error).message}`);
  }
}

/** The reply to `Subjects.serviceInfo`: one instance of one service. */
export interface ServiceInfo {
  type: 'kubelet.v1.service_info';
  service: string;
  node: string;
  instance: string;
  /** The build's version (package.json's, stamped into the image at build: docs/adr/0037). */
  version: string;
  connectionName: string;
  pid: number;
  startedAt: string;
  httpPort: number;
  /** The subjects this instance subscribes to. */
  subjects: string[];
  /** Single-active services (sync-loop, pleg, status-manager): whether this instance leads. */
  leadership?: LeadershipInfo;
  /** The contract version it speaks and the peers' versions it accepts, and the peers it met outside them (docs/adr/0034). */
  contract: ContractClaim & { peersOutsidePolicy: PeerOutsidePolicy[] };
}

/** A peer heard from whose contract version is outside the policy (skew.ts judgePeer). */
export interface PeerOutsidePolicy {
  /** Its connection name `<service>@<node>#<instance>` (Kubelet-Sender), or its service when it sent no sender. */
  peer: string;
  version: number;
  why: 'peer too old' | 'peer too new';
  reason: string;
  /** ISO: when it was first and last heard from at this version. */
  firstSeen: string;
  lastSeen: string;
  /** The subject it was last heard on. */
  subject: string;
}

/** A single-active service instance's part in its leader election. */
export interface LeadershipInfo {
  role: 'leader' | 'standby';
  /** This instance (INSTANCE_ID). */
  identity: string;
  /** The leader as last seen (this instance when it leads). */
  leader?: string;
  /** The fencing token of the current term (the lease revision that won it), while leading. */
  token?: number;
  /** When this instance took its current role (ISO). */
  since: string;
}

/** The shape of every error reply on a request/reply subject. */
export interface ErrorReply {
  error: { code: string; description: string };
}

/** ServiceInfo's fields (schema.ts), for the published contract (no decoder: tools read it). */
export const SERVICE_INFO_FIELDS: FieldsOf<ServiceInfo> = {
  service: S.string(),
  node: S.string(),
  instance: describe('INSTANCE_ID', S.string()),
  connectionName: describe('`<service>@<node>#<instance>`', S.string()),
  pid: S.integer(),
  startedAt: S.dateTime(),
  httpPort: S.integer(),
  version: describe("the build's version (package.json's, or the image's stamped VERSION)", S.string()),
  subjects: describe('the subjects this instance subscribes to', S.array(S.string())),
  leadership: optional(
    describe(
      'single-active services (sync-loop, pleg, status-manager, node-status): whether this instance leads',
      S.object<LeadershipInfo>({
        role: S.string(['leader', 'standby'] as const),
        identity: S.string(),
        leader: optional(S.string()),
        token: optional(describe('the fencing token of the current term (the lease revision that won it), while leading', S.integer())),
        since: S.dateTime(),
      }),
    ),
  ),
  contract: describe(
    'the contract version it speaks, the peer versions it accepts, and the peers it met outside them (docs/adr/0034-version-skew-policy.md)',
    S.object<ContractClaim & { peersOutsidePolicy: PeerOutsidePolicy[] }>({
      version: S.integer(),
      accepts: S.object<ContractRange>({ oldest: S.integer(), newest: S.integer() }),
      peersOutsidePolicy: S.array(
        S.object<PeerOutsidePolicy>({
          peer: describe('its connection name `<service>@<node>#<instance>` (Kubelet-Sender)', S.string()),
          version: S.integer(),
          why: S.string(['peer too old', 'peer too new'] as const),
          reason: S.string(),
          firstSeen: S.dateTime(),
          lastSeen: S.dateTime(),
          subject: describe('the subject it was last heard on', S.string()),
        }),
      ),
    }),
  ),
};
