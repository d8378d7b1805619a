/**
 * The payloads that travel on our subjects. Each carries a `type` versioned in
 * its name (`kubelet.v1.pod_update`); fields are only ever added, never
 * repurposed, so a v1 reader keeps working when a field appears.
 */
import type { Pod, Service } from './kube.js';
import type { PodOperation, ProbeType } from './subjects.js';
import { POD_OPERATIONS, PROBE_TYPES } from './subjects.js';

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
  | PodResyncMessage;

export type MessageOf<T extends MessageType> = Extract<Message, { type: T }>;

/** A message that is not what its subject promises; `reason` names the field. */
export class MessageError extends Error {
  constructor(readonly reason: string) {
    super(reason);
    this.name = 'MessageError';
  }
}

type Check = (m: Record<string, unknown>) => string | undefined;

const str = (f: string): Check => (m) => (typeof m[f] === 'string' && (m[f]).length > 0 ? undefined : `field "${f}" must be a non-empty string`);
const num = (f: string): Check => (m) => (typeof m[f] === 'number' && Number.isFinite(m[f]) ? undefined : `field "${f}" must be a number`);
const arr = (f: string): Check => (m) => (Array.isArray(m[f]) ? undefined : `field "${f}" must be an array`);
const obj = (f: string): Check => (m) => (isRecord(m[f]) ? undefined : `field "${f}" must be an object`);
const among = (f: string, values: readonly string[]): Check => (m) =>
  typeof m[f] === 'string' && values.includes(m[f]) ? undefined : `field "${f}" must be one of ${values.join(', ')}`;

const bool = (f: string): Check => (m) => (typeof m[f] === 'boolean' ? undefined : `field "${f}" must be a boolean`);
/** A namespaced kind names its namespace; a cluster-scoped one has none. */
const namespaceOfKind: Check = (m) => {
  const namespaced = isNamespacedKind(m['kind'] as ApiObjectKind);
  if (namespaced) return typeof m['namespace'] === 'string' && m['namespace'].length > 0 ? undefined : `field "namespace" must be a non-empty string for a ${String(m['kind'])}`;
  return m['namespace'] === undefined || m['namespace'] === '' ? undefined : `field "namespace" must be absent for a ${String(m['kind'])}`;
};

const REQUIRED: Record<MessageType, Check[]> = {
  [MessageTypes.podUpdate]: [among('op', POD_OPERATIONS), str('source'), arr('pods')],
  [MessageTypes.sourcesReady]: [arr('sources')],
  [MessageTypes.podLifecycleEvent]: [str('id'), among('eventType', POD_LIFECYCLE_EVENT_TYPES)],
  [MessageTypes.probeResult]: [among('probeType', PROBE_TYPES), str('podUid'), str('containerId'), among('result', PROBE_RESULTS)],
  [MessageTypes.updatePodOptions]: [among('updateType', SYNC_POD_TYPES), str('startTime'), obj('pod')],
  [MessageTypes.workDone]: [str('podUid'), num('requeueAfterMs')],
  [MessageTypes.workAccepted]: [str('podUid'), num('shard')],
  [MessageTypes.statusCommand]: [str('podUid'), obj('args')],
  [MessageTypes.proberCommand]: [arr('pods')],
  [MessageTypes.sourcesSnapshot]: [arr('sources')],
  [MessageTypes.containerEventsStatus]: [str('state')],
  [MessageTypes.apiObjectRequest]: [among('kind', API_OBJECT_KINDS), str('name'), namespaceOfKind],
  [MessageTypes.apiObject]: [among('kind', API_OBJECT_KINDS), str('name'), bool('found')],
  [MessageTypes.serviceAccountTokenRequest]: [str('namespace'), str('serviceAccountName'), str('podName'), str('podUid'), num('expirationSeconds')],
  [MessageTypes.serviceAccountToken]: [str('token'), str('expirationTimestamp')],
  [MessageTypes.inspectPod]: [str('podUid'), num('syncEnd')],
  [MessageTypes.serviceListRequest]: [str('namespace')],
  [MessageTypes.serviceList]: [arr('services')],
  [MessageTypes.podResyncRequest]: [str('reason')],
  [MessageTypes.podResync]: [bool('leading'), num('pods')],
  [MessageTypes.event]: [obj('involvedObject'), among('eventType', ['Normal', 'Warning']), str('reason'), str('message'), obj('source'), str('timestamp')],
};

export function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/**
 * Checks that `value` is a message of type `expected` with its required
 * fields; throws MessageError naming the first thing that is wrong.
 */
export function decodeMessage<T extends MessageType>(expected: T, value: unknown): MessageOf<T> {
  if (!isRecord(value)) throw new MessageError(`expected a JSON object of type ${expected}`);
  if (value['type'] !== expected) {
    throw new MessageError(`expected type "${expected}", got ${JSON.stringify(value['type'] ?? null)}`);
  }
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
