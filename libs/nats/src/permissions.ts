/**
 * Who may do what on NATS: one user per service plus `admin` (tools and
 * tests), each with least-privilege publish/subscribe permissions derived
 * from one table (NATS_ACCESS) of the subject families of @app/contracts
 * each service publishes, subscribes to, asks or answers, and the KV
 * buckets it writes and reads. The nats-server `authorization` block is
 * generated from it (natsAuthorization), so the table is the one place to
 * change when a service starts using a subject or a bucket: one line.
 * See docs/adr/0012-nats-users-and-local-access.md.
 *
 * What the table guarantees (test/nats-permissions.spec.ts, and the real
 * server in test/security.e2e.spec.ts):
 *  - only cri-gateway subscribes to `cri.<node>.runtime|image.*`;
 *  - only sync-loop publishes `kubelet.<node>.work.<shard>.<uid>`;
 *  - only a bucket's writer publishes `$KV.<bucket>.>` (the `leases` bucket:
 *    each writer only its own keys); nobody but admin purges or deletes a
 *    bucket's stream;
 *  - each service reads replies only on its own inbox prefix
 *    (`_INBOX_<service>`, set on its connection), and answers a request only
 *    once, to the inbox that asked (`allow_responses`).
 *
 *  - each service publishes trace records only under its own name
 *    (`trace.<node>.<service>.*`, issue 28 item 16).
 *
 * Per node (issue 28 item 17): a config rendered for its nodes
 * (`natsAuthorization(password, nodes)`) puts each node's name in every
 * subject and KV key its services' users may touch, so on a NATS shared by
 * several nodes one node's services cannot reach another's: node-scoped
 * subjects are `<family>.<node>...`, KV writes `$KV.<bucket>.<node>.>`, KV
 * reads and watches name the node's keys in the JetStream API subject
 * (`DIRECT.GET.KV_<b>.$KV.<b>.<node>.>`, `CONSUMER.CREATE.KV_<b>.*.$KV.<b>.<node>.>`),
 * and the forms that carry the key in the body only (a plain DIRECT.GET,
 * STREAM.MSG.GET, a CONSUMER.CREATE without a filter) are not granted. A
 * server for one node keeps the user names (`pod-worker`); a server for
 * several names them `<service>@<node>` (natsUserName), each with its own
 * inbox. Without nodes (the checked-in config, which does not know the
 * node's name) the node token is `*`.
 */
import { SERVICE_NAMES, Subjects, nodeToken, subjectMatches, type ServiceName } from '@app/contracts';

/** A NATS user: a service's own, or `admin` for the project's tools and tests. */
export type NatsUser = ServiceName | 'admin';
export const NATS_ADMIN_USER = 'admin' as const;
export const NATS_USERS: readonly NatsUser[] = [...SERVICE_NAMES, NATS_ADMIN_USER];

/** One user of a rendered config: its name, whose it is, and the node it is held to (undefined: every node). */
export interface NatsUserEntry {
  name: string;
  user: NatsUser;
  node?: string;
}

/**
 * A service's user name on a server for `nodes`: the service's name on a
 * server of one node (or of any), `<service>@<node>` on a server shared by
 * several. `admin` is always `admin`.
 */
export function natsUserName(user: NatsUser, node: string | undefined, nodes: readonly string[] | undefined): string {
  return user === NATS_ADMIN_USER || node === undefined || (nodes?.length ?? 0) <= 1 ? user : `${user}@${nodeToken(node)}`;
}

/** The users of a config for `nodes` (undefined or empty: one set, any node). */
export function natsUsersOf(nodes?: readonly string[]): NatsUserEntry[] {
  if (!nodes || nodes.length === 0) return NATS_USERS.map((user) => ({ name: user, user }));
  const services = SERVICE_NAMES.flatMap((user) => nodes.map((node) => ({ name: natsUserName(user, node, nodes), user, node })));
  return [...services, { name: NATS_ADMIN_USER, user: NATS_ADMIN_USER }];
}

/** The service (or admin) a user name stands for: `pod-worker` and `pod-worker@node-a` are the pod worker's. */
export function natsUserOf(name: string): NatsUser | undefined {
  const base = name.split('@')[0] ?? '';
  return (NATS_USERS as readonly string[]).includes(base) && (base !== NATS_ADMIN_USER || name === base) ? (base as NatsUser) : undefined;
}

/** A family of subjects, as in @app/contracts Subjects: what one kind of message is sent on. */
export type SubjectFamily = Exclude<keyof typeof Subjects, 'serviceInfo' | 'serviceCommand'>;

/** Some subjects of a family only: its last token one of `only` (the CRI methods a service may call). */
export interface FamilySubset {
  family: SubjectFamily;
  only: readonly string[];
}

/**
 * The RuntimeService calls that only read (libs/cri's `list` deadline class):
 * whoever may call only these cannot change what runs on the node.
 */
export const CRI_RUNTIME_READS = [
  'Version',
  'Status',
  'RuntimeConfig',
  'ListPodSandbox',
  'PodSandboxStatus',
  'ListContainers',
  'ContainerStatus',
  'ContainerStats',
  'ListContainerStats',
  'PodSandboxStats',
  'ListPodSandboxStats',
  'ListMetricDescriptors',
  'ListPodSandboxMetrics',
] as const;

/**
 * The RuntimeService calls that open a stream into a container (kubectl
 * exec, attach, port-forward): only the kubelet server may ask for them.
 */
export const CRI_RUNTIME_STREAMING = ['Exec', 'Attach', 'PortForward'] as const;

/** The RuntimeService calls that change what runs (the pod worker's): every one that is neither a read nor a stream. */
export const CRI_RUNTIME_CHANGES = [
  'RunPodSandbox',
  'StopPodSandbox',
  'RemovePodSandbox',
  'CreateContainer',
  'StartContainer',
  'StopContainer',
  'RemoveContainer',
  'UpdateContainerResources',
  'ReopenContainerLog',
  'ExecSync',
  'UpdateRuntimeConfig',
  'CheckpointContainer',
  'UpdatePodSandboxResources',
] as const;

/** A bucket written by a service: all of it, or only some keys under each node (`<node>.<key>`). */
export interface BucketWrite {
  /** The bucket's name (BUCKETS[..].name): the stream is `KV_<bucket>`. */
  bucket: string;
  /** Key patterns after the node token (`pod-worker-shard.*`); absent: every key. */
  keys?: readonly string[];
}

/** What one service does on NATS. Every permission of its user is derived from this. */
export interface NatsAccess {
  /** Events and commands it sends. */
  publishes: readonly SubjectFamily[];
  /** Events and commands it listens to. */
  subscribes: readonly SubjectFamily[];
  /** Request/reply it asks: it publishes there, the reply comes to its own inbox. */
  requests: readonly (SubjectFamily | FamilySubset)[];
  /** Request/reply it answers (subscribe; the reply through allow_responses). */
  serves: readonly SubjectFamily[];
  /** KV buckets it writes (and so reads). */
  writes: readonly BucketWrite[];
  /** KV buckets it reads or watches. */
  reads: readonly string[];
  /**
   * How it answers a request: how many messages (-1: any number) within how
   * long of it. Default: one, within 2 minutes.
   */
  answers?: { max: number; expires: string };
  /** Whether it reads pods' trace records from KUBELET_TRACES (traceRead): the console's timeline. */
  readsTraces?: boolean;
  /** Whether it reads NATS monitoring over NATS (MONITORING_READ): the console's topology graph. */
  readsMonitoring?: boolean;
  /** Whether it relays the events to the apiserver through KUBELET_EVENTS (EVENT_RELAY): the status manager. */
  relaysEvents?: boolean;
}

/**
 * The table. DESIGN.md's subjects (from -> to) and buckets (one writer per
 * bucket); each app's main.ts declares the buckets it opens, and a service
 * that declares one not granted here refuses to start (bootstrap).
 */
export const NATS_ACCESS: Readonly<Record<ServiceName, NatsAccess>> = {
  'config-source': {
    publishes: ['podUpdate', 'sourcesReady', 'events'],
    subscribes: [],
    requests: [],
    // The apiserver objects, service account tokens and Services pod-worker asks for (ADR 0014).
    serves: ['sourcesSnapshot', 'apiObject', 'serviceAccountToken', 'serviceList'],
    writes: [],
    // The creationTimestamps of the pods the sync loop holds, so a static pod keeps its age across a restart.
    reads: ['pods'],
  },
  'sync-loop': {
    publishes: ['work', 'status', 'prober', 'events'],
    subscribes: ['podUpdate', 'sourcesReady', 'pleg', 'probeResult', 'workDone'],
    // Housekeeping reads the runtime; the container GC removes dead containers and sandboxes; the log manager
    // reopens rotated logs; the image GC measures the image filesystem and removes unused images; the eviction manager
    // reads the summary stats (the runtime's reads and ImageFsInfo); killing is the pod workers' job.
    requests: [
      'sourcesSnapshot',
      { family: 'criRuntime', only: [...CRI_RUNTIME_READS, 'RemoveContainer', 'RemovePodSandbox', 'ReopenContainerLog'] },
      { family: 'criImage', only: ['ImageFsInfo', 'ListImages', 'RemoveImage'] },
    ],
    // A status manager that starts leading asks for every pod to be synced now (its statuses repaired at once).
    serves: ['podResync'],
    writes: [{ bucket: 'pods' }, { bucket: 'leases', keys: ['setting.*', 'leader.sync-loop'] }],
    reads: ['workers', 'pod-status', 'pod-cache'],
  },
  'pod-worker': {
    // plegInspect: the pod it just changed in the runtime, inspected by the PLEG at once (docs/adr/0017).
    publishes: ['workDone', 'status', 'prober', 'events', 'plegInspect'],
    subscribes: ['work', 'probeResult'],
    // The apiserver objects its pods need (configMap and secret volumes, imagePullSecrets, RuntimeClasses) and their
    // service account tokens (projected serviceAccountToken volumes), from config-source (ADR 0014); the services
    // its containers' environment names (getServiceEnvVarMap).
    // Every runtime call but the streams (exec, attach, port-forward: the kubelet server's); ExecSync for the lifecycle hooks.
    requests: [{ family: 'criRuntime', only: [...CRI_RUNTIME_READS, ...CRI_RUNTIME_CHANGES] }, 'criImage', 'apiObject', 'serviceAccountToken', 'serviceList'],
    serves: [],
    writes: [{ bucket: 'workers' }, { bucket: 'leases', keys: ['pod-worker-shard.*', 'pod-worker-replica.*', 'setting.*'] }],
    reads: ['pods', 'pod-cache', 'pod-status', 'probe-results'],
  },
  pleg: {
    // events: the evented PLEG's fallback to the relist and its return, on the Node (docs/adr/0040).
    publishes: ['pleg', 'events'],
    subscribes: ['criEvents', 'plegInspect'],
    // Relisting only reads the runtime; evented mode asks the event relay how it is doing.
    requests: [{ family: 'criRuntime', only: CRI_RUNTIME_READS }, 'criEventsStatus'],
    serves: [],
    writes: [{ bucket: 'pod-cache' }, { bucket: 'leases', keys: ['leader.pleg'] }],
    reads: [],
  },
  prober: {
    publishes: ['probeResult', 'events'],
    subscribes: ['prober', 'status'],
    // Exec probes; httpGet, tcpSocket and grpc probes dial the pod themselves.
    requests: [{ family: 'criRuntime', only: ['ExecSync'] }],
    serves: [],
    writes: [{ bucket: 'probe-results' }],
    // The pods to probe at start, and their statuses, from KV.
    reads: ['pods', 'pod-status'],
  },
  'status-manager': {
    // The OOMKilled events of the pods' containers (oom-kills.ts).
    publishes: ['events'],
    subscribes: ['status', 'probeResult', 'events'],
    // status.Manager reads nothing of the runtime: the Node, the logs, the stats and the kubelet API are other users'.
    // podResync: at the start of its term, every pod synced now, so every status is sent to it again.
    requests: ['podResync'],
    // A pod's events, which it alone keeps: asked by the kubelet server's read port and the console.
    serves: ['podEvents'],
    writes: [{ bucket: 'pod-status' }, { bucket: 'leases', keys: ['leader.status-manager'] }],
    // workers: whether a pod's containers are gone, before its deletion is finished in the apiserver.
    reads: ['pods', 'probe-results', 'workers'],
    // The events to the apiserver from KUBELET_EVENTS, none lost while no one leads (issue 28 item 9).
    relaysEvents: true,
  },
  'kubelet-server': {
    publishes: [],
    subscribes: [],
    // /containerLogs: a container's instances (ListContainers) and its log file (ContainerStatus);
    // /stats/summary: the runtime's reads (ListContainerStats, ListPodSandboxStats...) and the image filesystem;
    // the kubelet API server: the streaming URLs of exec, attach and port-forward (Exec, Attach, PortForward), and /run (ExecSync).
    // The only user that may: a status manager or a console that is broken into cannot open a shell in a pod.
    // A pod's events are the status manager's (it keeps them in memory): asked for /pods/<ns>/<name>/events.
    requests: [
      { family: 'criRuntime', only: [...CRI_RUNTIME_READS, 'Exec', 'Attach', 'PortForward', 'ExecSync'] },
      { family: 'criImage', only: ['ImageFsInfo'] },
      'podEvents',
    ],
    serves: [],
    writes: [],
    // /pods: the desired pods joined with their statuses and the prober's results (@app/pod-manager PodReadModel).
    reads: ['pods', 'pod-status', 'probe-results'],
  },
  'node-status': {
    // The OOM watcher's SystemOOM events on the Node.
    publishes: ['events'],
    subscribes: [],
    // The Node's Ready condition (runtimeState: Status), nodeInfo.containerRuntimeVersion (Version), the Node's pod
    // CIDRs to the runtime (updatePodCIDR: UpdateRuntimeConfig): nothing else.
    requests: [{ family: 'criRuntime', only: ['Status', 'Version', 'UpdateRuntimeConfig'] }],
    // The Node's conditions as it computed them, read-only: asked by the console's fleet page from the hub.
    serves: ['nodeConditions'],
    // leases' node-labels: the API Node's labels, for the sync loop's admission (`<node>.node-labels`).
    writes: [{ bucket: 'leases', keys: ['leader.node-status', 'node-labels'] }],
    // pods: the mirror pods' static pods and the pressure record; pod-cache: the PLEG's last relist (`<node>.global`);
    // workers: whether a static pod's worker still has it (a mirror pod's deletion waits for it).
    reads: ['pods', 'pod-cache', 'workers'],
  },
  console: {
    publishes: [],
    // Every event as it is heard: the console's live feed.
    subscribes: ['events'],
    requests: ['podEvents'],
    serves: [],
    writes: [],
    reads: ['pods', 'pod-status', 'probe-results'],
    // A pod's timeline from its trace records.
    readsTraces: true,
    // The topology graph: the account's connections and subscriptions (every service's connection name).
    readsMonitoring: true,
  },
  'cri-gateway': {
    publishes: ['criEvents'],
    subscribes: [],
    requests: [],
    serves: ['criRuntime', 'criImage', 'criEventsStatus'],
    writes: [],
    reads: [],
    // A CRI call lasts as long as its caller's deadline (StopContainer: the grace period and more), and a
    // caller that asks for progress gets a sign every interval before the answer (CRI_PROGRESS_HEADER).
    answers: { max: -1, expires: '24h' },
  },
};

/**
 * Each family's subjects for every node, from its @app/contracts pattern.
 * `except`: subjects the wildcard also catches that belong to another family
 * (`work.*.*` catches `work.done.*`), denied unless granted on their own.
 */
const FAMILY_SUBJECTS: Readonly<Record<SubjectFamily, { subject: string; except?: readonly string[] }>> = {
  podUpdate: { subject: anyNode(Subjects.podUpdate.pattern) },
  sourcesReady: { subject: anyNode(Subjects.sourcesReady.pattern) },
  sourcesSnapshot: { subject: anyNode(Subjects.sourcesSnapshot.pattern) },
  pleg: { subject: anyNode(Subjects.pleg.pattern) },
  plegInspect: { subject: anyNode(Subjects.plegInspect.pattern) },
  probeResult: { subject: anyNode(Subjects.probeResult.pattern) },
  // Subjects.work has no pattern (shards are subscribed by number); this is its wildcard over every shard.
  work: { subject: 'kubelet.*.work.*.*', except: [anyNode(Subjects.workDone.pattern)] },
  workDone: { subject: anyNode(Subjects.workDone.pattern) },
  status: { subject: anyNode(Subjects.status.pattern) },
  prober: { subject: anyNode(Subjects.prober.pattern) },
  events: { subject: anyNode(Subjects.events.pattern) },
  criRuntime: { subject: anyNode(Subjects.criRuntime.pattern) },
  criImage: { subject: anyNode(Subjects.criImage.pattern) },
  criEvents: { subject: anyNode(Subjects.criEvents.pattern) },
  criEventsStatus: { subject: anyNode(Subjects.criEventsStatus.pattern) },
  apiObject: { subject: anyNode(Subjects.apiObject.pattern) },
  serviceAccountToken: { subject: anyNode(Subjects.serviceAccountToken.pattern) },
  serviceList: { subject: anyNode(Subjects.serviceList.pattern) },
  podResync: { subject: anyNode(Subjects.podResync.pattern) },
  podEvents: { subject: anyNode(Subjects.podEvents.pattern) },
  nodeConditions: { subject: anyNode(Subjects.nodeConditions.pattern) },
  trace: { subject: anyNode(Subjects.trace.pattern) },
};

function anyNode(pattern: string): string {
  return pattern.replaceAll('{node}', '*');
}

/** The node token a user is held to: its node's, or `*` (every node). */
function scopeOf(node: string | undefined): string {
  return node === undefined ? '*' : nodeToken(node);
}

/** An any-node subject held to one node: the node is the second token of every family (`kubelet.<node>...`, `cri.<node>...`, `trace.<node>...`). */
function onNode(subject: string, scope: string): string {
  const t = subject.split('.');
  if (t[1] !== '*') throw new Error(`${subject}: no node token to hold to a node`);
  t[1] = scope;
  return t.join('.');
}

/** The subjects of a family, for every node. */
export function familySubject(family: SubjectFamily): string {
  return FAMILY_SUBJECTS[family].subject;
}

/** A service's own commands and `info`: `kubelet.<node>.service.<service>.*` (`node` absent: every node). */
export function serviceSubjects(service: ServiceName, command = '*', node?: string): string {
  return `kubelet.${scopeOf(node)}.service.${service}.${command}`;
}

/**
 * The inbox prefix of a user's connection: replies to its requests (CRI
 * calls, JetStream API calls, KV watches) come there, and nobody else may
 * subscribe to it. `admin` keeps nats.js's default. `user` is a user name
 * (natsUserName: `pod-worker`, or `pod-worker@node-a` on a NATS of several nodes).
 */
export function inboxPrefix(user: string): string {
  return user === NATS_ADMIN_USER ? '_INBOX' : `_INBOX_${user}`;
}

/** The JetStream stream of a KV bucket. */
export function kvStream(bucket: string): string {
  return `KV_${bucket}`;
}

/**
 * What nats.js (@nats-io/kv 3.x, @nats-io/jetstream) sends to read, watch
 * and open a bucket, as measured against nats-server 2.9.10 (the ADR has the
 * trace): `kvm.create` asks STREAM.INFO and, when the bucket is absent,
 * STREAM.CREATE (never UPDATE); `get` is a DIRECT.GET with the subject in the
 * API subject; `keys`, `watch` and `history` create an ordered consumer with
 * its filter in the API subject, ask CONSUMER.INFO, and answer its flow
 * control on `$JS.FC.<stream>.>` (without that a watch stalls silently).
 */
function bucketReadSubjects(bucket: string, scope: string): string[] {
  const s = kvStream(bucket);
  const open = [`$JS.API.STREAM.INFO.${s}`, `$JS.API.STREAM.CREATE.${s}`];
  const consumers = [`$JS.API.CONSUMER.INFO.${s}.*`, `$JS.API.CONSUMER.DELETE.${s}.*`, `$JS.FC.${s}.>`];
  if (scope === '*') {
    return [...open, `$JS.API.DIRECT.GET.${s}`, `$JS.API.DIRECT.GET.${s}.>`, `$JS.API.STREAM.MSG.GET.${s}`, `$JS.API.CONSUMER.CREATE.${s}`, `$JS.API.CONSUMER.CREATE.${s}.>`, ...consumers];
  }
  // Held to one node: only the requests that name a key of the node's in their subject.
  const keys = `$KV.${bucket}.${scope}.>`;
  return [...open, `$JS.API.DIRECT.GET.${s}.${keys}`, `$JS.API.CONSUMER.CREATE.${s}.*.${keys}`, ...consumers];
}

/**
 * What a service may publish to record its hops (docs/adr/0015-tracing.md):
 * `trace.<node>.<service>.<uid>` (Subjects.trace), under its own name only,
 * into KUBELET_TRACES, and making the stream or setting its limits and
 * subjects at boot (without `$JS.API.INFO`: ensureTraceStream skips the API
 * check). Only a service with `readsTraces` reads the records (traceRead).
 */
export function tracePublish(service: ServiceName, scope = '*'): string[] {
  return [
    // Subjects.trace.ofService, for one node or every node.
    `trace.${scope}.${service}.*`,
    '$JS.API.STREAM.INFO.KUBELET_TRACES',
    '$JS.API.STREAM.CREATE.KUBELET_TRACES',
    '$JS.API.STREAM.UPDATE.KUBELET_TRACES',
  ];
}

/**
 * What reading a pod's records takes (trace-reader.ts, @nats-io/jetstream
 * 3.x): the stream's info with a subject filter, an ordered consumer created
 * with its filter in the API subject, pulled (`CONSUMER.MSG.NEXT`) into the
 * reader's own inbox, and deleted or re-created on a gap. Never a change to
 * the stream, never another stream. Held to a node, the filter must be that
 * node's records (`trace.<node>.*.*`).
 */
export function traceRead(scope = '*'): string[] {
  const create =
    scope === '*'
      ? ['$JS.API.CONSUMER.CREATE.KUBELET_TRACES', '$JS.API.CONSUMER.CREATE.KUBELET_TRACES.>']
      : [`$JS.API.CONSUMER.CREATE.KUBELET_TRACES.*.${onNode(anyNode(Subjects.trace.pattern), scope)}`];
  return ['$JS.API.STREAM.INFO.KUBELET_TRACES', ...create, '$JS.API.CONSUMER.INFO.KUBELET_TRACES.*', '$JS.API.CONSUMER.DELETE.KUBELET_TRACES.*', '$JS.API.CONSUMER.MSG.NEXT.KUBELET_TRACES.*'];
}

/**
 * NATS monitoring, asked over NATS (topology.ts sampleMonitoring): nats-server
 * answers `$SYS.REQ.ACCOUNT.PING.*` for the asker's own account (the
 * services' connections, their names, addresses and subscriptions), and
 * `$JS.API.INFO` with its JetStream totals. The monitoring HTTP port is off:
 * it has no authentication (docs/adr/0029).
 */
export const MONITORING_SUBJECTS = {
  connz: '$SYS.REQ.ACCOUNT.PING.CONNZ',
  statz: '$SYS.REQ.ACCOUNT.PING.STATZ',
  jetstream: '$JS.API.INFO',
} as const;
export const MONITORING_READ: readonly string[] = Object.values(MONITORING_SUBJECTS);

/**
 * What relaying the events takes (libs/nats event-stream.ts, @nats-io/jetstream
 * 3.x): making KUBELET_EVENTS and the node's durable consumer at boot, pulling
 * from it (`CONSUMER.MSG.NEXT`) and acknowledging each event (`$JS.ACK`),
 * and the OOMKilled event's publish with a message ID (a plain publish on
 * the events subject, the stream's ack to its own inbox). Never another
 * stream.
 */
export function eventRelay(scope = '*'): string[] {
  // The node's durable consumer only (event-stream.ts eventConsumerName): `status-manager_<node>`, any node's for `*`;
  // made only with its own node's filter (nats.js 3.x sends `CONSUMER.CREATE.<stream>.<durable>.<filter>`), so that a
  // node's status manager cannot redefine its consumer to read another node's events.
  const consumer = scope === '*' ? '*' : `status-manager_${scope}`;
  return [
    '$JS.API.STREAM.INFO.KUBELET_EVENTS',
    '$JS.API.STREAM.CREATE.KUBELET_EVENTS',
    `$JS.API.CONSUMER.CREATE.KUBELET_EVENTS.${consumer}.${onNode(anyNode(Subjects.events.pattern), scope)}`,
    `$JS.API.CONSUMER.INFO.KUBELET_EVENTS.${consumer}`,
    `$JS.API.CONSUMER.MSG.NEXT.KUBELET_EVENTS.${consumer}`,
    `$JS.ACK.KUBELET_EVENTS.${consumer}.>`,
  ];
}

/** A put, create, update, delete or purge of a key is a publish on `$KV.<bucket>.<key>`. */
function bucketWriteSubjects(w: BucketWrite, scope: string): string[] {
  if (w.keys) return w.keys.map((k) => `$KV.${w.bucket}.${scope}.${k}`);
  return [scope === '*' ? `$KV.${w.bucket}.>` : `$KV.${w.bucket}.${scope}.>`];
}

/** One direction of a user's permissions, as nats-server takes it. */
export interface SubjectPermission {
  allow: readonly string[];
  deny: readonly string[];
}

export interface UserPermissions {
  publish: SubjectPermission;
  subscribe: SubjectPermission;
  /** Publishing a reply to a request it received, once, within `expires`. */
  allowResponses?: { max: number; expires: string };
}

function familiesOf(list: readonly (SubjectFamily | FamilySubset)[], scope: string): { allow: string[]; except: string[] } {
  const allow: string[] = [];
  const except: string[] = [];
  for (const f of list) {
    if (typeof f === 'string') {
      allow.push(onNode(FAMILY_SUBJECTS[f].subject, scope));
      except.push(...(FAMILY_SUBJECTS[f].except ?? []).map((e) => onNode(e, scope)));
    } else {
      const stem = onNode(FAMILY_SUBJECTS[f.family].subject, scope).replace(/\.\*$/, '');
      allow.push(...f.only.map((last) => `${stem}.${last}`));
    }
  }
  return { allow, except };
}

function direction(allow: readonly string[], except: readonly string[]): SubjectPermission {
  const unique = [...new Set(allow)];
  // A family caught by another's wildcard is denied, unless the user is granted it in its own right.
  const deny = [...new Set(except)].filter((d) => !unique.includes(d));
  return { allow: unique, deny };
}

/**
 * A user's permissions, derived from NATS_ACCESS: on `node`'s subjects and
 * keys only, or on every node's when `node` is absent. `name` is its user
 * name in the config (natsUserName), whose inbox it reads.
 */
export function natsPermissions(user: NatsUser, node?: string, name: string = user): UserPermissions {
  if (user === NATS_ADMIN_USER) return { publish: { allow: ['>'], deny: [] }, subscribe: { allow: ['>'], deny: [] } };
  const scope = scopeOf(node);
  const a = NATS_ACCESS[user];
  const out = familiesOf([...a.publishes, ...a.requests], scope);
  const inn = familiesOf([...a.subscribes, ...a.serves], scope);
  const buckets = [...new Set([...a.writes.map((w) => w.bucket), ...a.reads])];
  const publish = [
    ...out.allow,
    ...(buckets.length > 0 ? ['$JS.API.INFO'] : []),
    ...buckets.flatMap((b) => bucketReadSubjects(b, scope)),
    ...a.writes.flatMap((w) => bucketWriteSubjects(w, scope)),
    ...tracePublish(user, scope),
    ...(a.readsTraces ? traceRead(scope) : []),
    ...(a.readsMonitoring ? MONITORING_READ : []),
    ...(a.relaysEvents ? eventRelay(scope) : []),
  ];
  // What it answers under its own `service.<service>.*` (config-source's apiObject, ...) is in that entry already.
  const own = serviceSubjects(user, '*', node);
  const subscribe = [...inn.allow.filter((s) => !covers(own, s)), own, `${inboxPrefix(name)}.>`];
  return {
    publish: direction(publish, out.except),
    subscribe: direction(subscribe, inn.except),
    allowResponses: a.answers ?? { max: 1, expires: '2m' },
  };
}

/**
 * Whether `user` may publish to, or subscribe to, `subject`, as nats-server
 * decides it: allowed by one allow entry and by no deny entry. A
 * subscription with wildcards must lie inside an allow entry.
 */
export function permits(user: NatsUser, op: 'publish' | 'subscribe', subject: string, node?: string): boolean {
  const p = natsPermissions(user, node, natsUserName(user, node, undefined))[op];
  const inside = op === 'publish' ? subjectMatches : covers;
  return p.allow.some((a) => inside(a, subject)) && !p.deny.some((d) => inside(d, subject));
}

/** Whether every subject `sub` matches is also matched by `pattern`. */
function covers(pattern: string, sub: string): boolean {
  const p = pattern.split('.');
  const s = sub.split('.');
  for (let i = 0; i < p.length; i++) {
    if (p[i] === '>') return s.length > i;
    if (i >= s.length || s[i] === '>') return false;
    if (p[i] !== '*' && (s[i] === '*' || p[i] !== s[i])) return false;
  }
  return p.length === s.length;
}

/** Which buckets a service may open (main.ts `buckets`): those it writes or reads. */
export function grantedBuckets(service: ServiceName): readonly string[] {
  const a = NATS_ACCESS[service];
  return [...new Set([...a.writes.map((w) => w.bucket), ...a.reads])];
}

/** The name of the environment variable a generated config reads a user's password from. */
export function passwordVariable(user: string): string {
  return `NATS_PASSWORD_${user.toUpperCase().replaceAll(/[^A-Z0-9]/g, '_')}`;
}

/**
 * The nats-server `authorization { users = [...] }` block for every user
 * of a server for `nodes` (natsUsersOf; absent: every node's). `password(name)` is either a literal (a config written per run, mode 0600)
 * or `{ env: true }` for a `$NATS_PASSWORD_<USER>` reference that
 * nats-server resolves from its environment (the checked-in config).
 */
export function natsAuthorization(password: (name: string) => string | { env: true }, nodes?: readonly string[]): string {
  const q = (s: string) => JSON.stringify(s);
  const list = (xs: readonly string[]) => (xs.length <= 2 ? `[${xs.map(q).join(', ')}]` : `[\n${xs.map((x) => `          ${q(x)}`).join('\n')}\n        ]`);
  const dir = (d: SubjectPermission) =>
    d.deny.length > 0 ? `{\n        allow: ${list(d.allow)}\n        deny: ${list(d.deny)}\n      }` : `{\n        allow: ${list(d.allow)}\n      }`;
  const users = natsUsersOf(nodes).map(({ name, user, node }) => {
    const pw = password(name);
    const perms = natsPermissions(user, node, name);
    const lines = [
      `      publish: ${dir(perms.publish)}`,
      `      subscribe: ${dir(perms.subscribe)}`,
      ...(perms.allowResponses ? [`      allow_responses: { max: ${perms.allowResponses.max}, expires: ${q(perms.allowResponses.expires)} }`] : []),
    ];
    return [
      `  {`,
      `    user: ${q(name)}`,
      `    password: ${typeof pw === 'string' ? q(pw) : `$${passwordVariable(name)}`}`,
      `    permissions: {`,
      ...lines,
      `    }`,
      `  }`,
    ].join('\n');
  });
  return `authorization {\n  users = [\n${users.join('\n')}\n  ]\n}\n`;
}
