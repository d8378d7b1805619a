/**
 * Every NATS subject of kubelet-split, in one place (DESIGN.md, "Subjects
 * mirror the kubelet's channels"). Each family has:
 *  - `pattern`: a template with `{node}` for Nest's @EventPattern/@MessagePattern
 *    (the transport fills in the node when it subscribes);
 *  - `wildcard(node, ...)`: what to subscribe to;
 *  - `build(node, ...)`: the subject to publish on;
 *  - `parse(subject)`: the tokens back, or undefined when it is not one of ours.
 */
import type { ServiceName } from './services.js';

/** PodUpdate operations, as config.PodConfig emits them (kubetypes.PodOperation). */
export const POD_OPERATIONS = ['add', 'update', 'remove', 'reconcile', 'delete'] as const;
export type PodOperation = (typeof POD_OPERATIONS)[number];

export const PROBE_TYPES = ['liveness', 'readiness', 'startup'] as const;
export type ProbeType = (typeof PROBE_TYPES)[number];

/** statusManager calls, by their kubelet names. */
export const STATUS_VERBS = ['SetPodStatus', 'TerminatePod', 'SetContainerReadiness', 'SetContainerStartup', 'RemoveOrphanedStatuses'] as const;
export type StatusVerb = (typeof STATUS_VERBS)[number];

/** probeManager calls, by their kubelet names. */
export const PROBER_VERBS = ['AddPod', 'RemovePod', 'CleanupPods', 'StopLivenessAndStartup'] as const;
export type ProberVerb = (typeof PROBER_VERBS)[number];

/** The fixed number of pod-worker shards; pods are placed by `shardOf`. */
export const DEFAULT_SHARD_COUNT = 16;

/** Thrown when a subject token would be unsafe (empty, has '.', '*', '>' or whitespace). */
export class SubjectTokenError extends Error {
  constructor(what: string, token: string) {
    super(`invalid ${what} "${token}" for a NATS subject token`);
    this.name = 'SubjectTokenError';
  }
}

function token(what: string, value: string): string {
  if (value.length === 0 || /[.*>\s]/.test(value)) throw new SubjectTokenError(what, value);
  return value;
}

/**
 * A Kubernetes node name may be an FQDN; NATS tokens may not contain dots.
 * Dots become underscores, which a node name cannot contain, so it reverses.
 */
export function nodeToken(node: string): string {
  return token('node name', node.replaceAll('.', '_'));
}

/** The inverse of `nodeToken`. */
export function nodeFromToken(t: string): string {
  return t.replaceAll('_', '.');
}

/**
 * The pod-worker shard that owns a pod: FNV-1a of the UID modulo the shard
 * count. Stable across processes and restarts, which the shard leases need.
 */
export function shardOf(uid: string, shardCount: number = DEFAULT_SHARD_COUNT): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < uid.length; i++) {
    h ^= uid.charCodeAt(i);
    h = Math.imul(h, 0x01000193) >>> 0;
  }
  return h % shardCount;
}

/** NATS subject matching: `*` is one token, `>` the rest (at least one token). */
export function subjectMatches(wildcard: string, subject: string): boolean {
  const w = wildcard.split('.');
  const s = subject.split('.');
  for (let i = 0; i < w.length; i++) {
    if (w[i] === '>') return s.length > i;
    if (i >= s.length) return false;
    if (w[i] !== '*' && w[i] !== s[i]) return false;
  }
  return w.length === s.length;
}

/** Fills `{node}` (and `{service}`) in a pattern template. */
export function resolvePattern(pattern: string, node: string, service?: string): string {
  const withNode = pattern.replaceAll('{node}', nodeToken(node));
  return service === undefined ? withNode : withNode.replaceAll('{service}', token('service', service));
}

function split(subject: string, prefix: string, count: number): string[] | undefined {
  const parts = subject.split('.');
  if (parts.length !== count || parts[0] !== prefix) return undefined;
  return parts;
}

function oneOf<T extends string>(values: readonly T[], v: string | undefined): v is T {
  return v !== undefined && (values as readonly string[]).includes(v);
}

export const Subjects = {
  /** configCh: config-source -> sync-loop. `kubelet.<node>.config.<op>` (the wildcard also catches `config.ready`). */
  podUpdate: {
    pattern: 'kubelet.{node}.config.*',
    wildcard: (node: string) => `kubelet.${nodeToken(node)}.config.*`,
    build: (node: string, op: PodOperation) => `kubelet.${nodeToken(node)}.config.${token('operation', op)}`,
    parse(subject: string): { node: string; op: PodOperation } | undefined {
      const p = split(subject, 'kubelet', 4);
      if (!p || p[2] !== 'config' || !oneOf(POD_OPERATIONS, p[3])) return undefined;
      return { node: nodeFromToken(p[1] ?? ''), op: p[3] };
    },
  },

  /** sourcesReady: config-source -> sync-loop, once every source has delivered a full listing. */
  sourcesReady: {
    pattern: 'kubelet.{node}.config.ready',
    wildcard: (node: string) => `kubelet.${nodeToken(node)}.config.ready`,
    build: (node: string) => `kubelet.${nodeToken(node)}.config.ready`,
    parse(subject: string): { node: string } | undefined {
      const p = split(subject, 'kubelet', 4);
      return p && p[2] === 'config' && p[3] === 'ready' ? { node: nodeFromToken(p[1] ?? '') } : undefined;
    },
  },

  /**
   * Every source's current full listing, on request: config-source answers,
   * the sync loop asks at start and now and then, so a PodUpdate lost while
   * it was down is repaired (level-triggered). `kubelet.<node>.sources.snapshot`.
   */
  sourcesSnapshot: {
    pattern: 'kubelet.{node}.sources.snapshot',
    wildcard: (node: string) => `kubelet.${nodeToken(node)}.sources.snapshot`,
    build: (node: string) => `kubelet.${nodeToken(node)}.sources.snapshot`,
    parse(subject: string): { node: string } | undefined {
      const p = split(subject, 'kubelet', 4);
      return p && p[2] === 'sources' && p[3] === 'snapshot' ? { node: nodeFromToken(p[1] ?? '') } : undefined;
    },
  },

  /** plegCh: pleg -> sync-loop. `kubelet.<node>.pleg.<uid>`. */
  pleg: {
    pattern: 'kubelet.{node}.pleg.*',
    wildcard: (node: string) => `kubelet.${nodeToken(node)}.pleg.*`,
    build: (node: string, uid: string) => `kubelet.${nodeToken(node)}.pleg.${token('pod UID', uid)}`,
    parse(subject: string): { node: string; uid: string } | undefined {
      const p = split(subject, 'kubelet', 4);
      return p && p[2] === 'pleg' ? { node: nodeFromToken(p[1] ?? ''), uid: p[3] ?? '' } : undefined;
    },
  },

  /**
   * The PLEG's per-pod inspection (generic.go updateCache for one pod), asked
   * by a pod worker right after a sync that changed the pod in the runtime
   * (a sandbox made or stopped, a container created, started, stopped or
   * removed), so the pod cache and the PLEG's events follow at once instead
   * of at the next relist. pod-worker -> pleg. `kubelet.<node>.pleg.inspect.<uid>`
   * (five tokens: the `pleg.*` wildcard of plegCh does not catch it).
   */
  plegInspect: {
    pattern: 'kubelet.{node}.pleg.inspect.*',
    wildcard: (node: string) => `kubelet.${nodeToken(node)}.pleg.inspect.*`,
    build: (node: string, uid: string) => `kubelet.${nodeToken(node)}.pleg.inspect.${token('pod UID', uid)}`,
    parse(subject: string): { node: string; uid: string } | undefined {
      const p = split(subject, 'kubelet', 5);
      return p && p[2] === 'pleg' && p[3] === 'inspect' ? { node: nodeFromToken(p[1] ?? ''), uid: p[4] ?? '' } : undefined;
    },
  },

  /** The results managers' Updates(): prober -> sync-loop, status-manager. `kubelet.<node>.probe.<type>.<uid>`. */
  probeResult: {
    pattern: 'kubelet.{node}.probe.*.*',
    wildcard: (node: string, probeType?: ProbeType) =>
      `kubelet.${nodeToken(node)}.probe.${probeType ? token('probe type', probeType) : '*'}.*`,
    build: (node: string, probeType: ProbeType, uid: string) =>
      `kubelet.${nodeToken(node)}.probe.${token('probe type', probeType)}.${token('pod UID', uid)}`,
    parse(subject: string): { node: string; probeType: ProbeType; uid: string } | undefined {
      const p = split(subject, 'kubelet', 5);
      if (!p || p[2] !== 'probe' || !oneOf(PROBE_TYPES, p[3])) return undefined;
      return { node: nodeFromToken(p[1] ?? ''), probeType: p[3], uid: p[4] ?? '' };
    },
  },

  /**
   * dispatchWork -> podWorkers.UpdatePod: sync-loop -> the pod-worker owning the shard.
   * `kubelet.<node>.work.<shard>.<uid>`. Subscribe per shard number: `work.*.*` would catch `work.done.*`.
   * No decorator pattern: shards are taken and given back at run time.
   */
  work: {
    wildcard: (node: string, shard: number) => `kubelet.${nodeToken(node)}.work.${shardToken(shard)}.*`,
    build: (node: string, shard: number, uid: string) =>
      `kubelet.${nodeToken(node)}.work.${shardToken(shard)}.${token('pod UID', uid)}`,
    parse(subject: string): { node: string; shard: number; uid: string } | undefined {
      const p = split(subject, 'kubelet', 5);
      if (!p || p[2] !== 'work' || !/^\d+$/.test(p[3] ?? '')) return undefined;
      return { node: nodeFromToken(p[1] ?? ''), shard: Number(p[3]), uid: p[4] ?? '' };
    },
  },

  /** completeWork -> workQueue.Enqueue: pod-worker -> sync-loop. `kubelet.<node>.work.done.<uid>`. */
  workDone: {
    pattern: 'kubelet.{node}.work.done.*',
    wildcard: (node: string) => `kubelet.${nodeToken(node)}.work.done.*`,
    build: (node: string, uid: string) => `kubelet.${nodeToken(node)}.work.done.${token('pod UID', uid)}`,
    parse(subject: string): { node: string; uid: string } | undefined {
      const p = split(subject, 'kubelet', 5);
      return p && p[2] === 'work' && p[3] === 'done' ? { node: nodeFromToken(p[1] ?? ''), uid: p[4] ?? '' } : undefined;
    },
  },

  /** statusManager calls: pod-worker, prober -> status-manager. `kubelet.<node>.status.<verb>.<uid>`. */
  status: {
    pattern: 'kubelet.{node}.status.*.*',
    wildcard: (node: string) => `kubelet.${nodeToken(node)}.status.*.*`,
    build: (node: string, verb: StatusVerb, uid: string) =>
      `kubelet.${nodeToken(node)}.status.${token('status verb', verb)}.${token('pod UID', uid)}`,
    parse(subject: string): { node: string; verb: StatusVerb; uid: string } | undefined {
      const p = split(subject, 'kubelet', 5);
      if (!p || p[2] !== 'status' || !oneOf(STATUS_VERBS, p[3])) return undefined;
      return { node: nodeFromToken(p[1] ?? ''), verb: p[3], uid: p[4] ?? '' };
    },
  },

  /** probeManager calls: pod-worker, sync-loop -> prober. `kubelet.<node>.prober.<verb>`. */
  prober: {
    pattern: 'kubelet.{node}.prober.*',
    wildcard: (node: string) => `kubelet.${nodeToken(node)}.prober.*`,
    build: (node: string, verb: ProberVerb) => `kubelet.${nodeToken(node)}.prober.${token('prober verb', verb)}`,
    parse(subject: string): { node: string; verb: ProberVerb } | undefined {
      const p = split(subject, 'kubelet', 4);
      if (!p || p[2] !== 'prober' || !oneOf(PROBER_VERBS, p[3])) return undefined;
      return { node: nodeFromToken(p[1] ?? ''), verb: p[3] };
    },
  },

  /** recorder.Eventf: any service -> status-manager. `kubelet.<node>.events.<uid>`. */
  events: {
    pattern: 'kubelet.{node}.events.*',
    wildcard: (node: string) => `kubelet.${nodeToken(node)}.events.*`,
    build: (node: string, uid: string) => `kubelet.${nodeToken(node)}.events.${token('pod UID', uid)}`,
    parse(subject: string): { node: string; uid: string } | undefined {
      const p = split(subject, 'kubelet', 4);
      return p && p[2] === 'events' ? { node: nodeFromToken(p[1] ?? ''), uid: p[3] ?? '' } : undefined;
    },
  },

  /** RuntimeService calls: any -> cri-gateway, request/reply. `cri.<node>.runtime.<Method>`. */
  criRuntime: {
    pattern: 'cri.{node}.runtime.*',
    wildcard: (node: string) => `cri.${nodeToken(node)}.runtime.*`,
    build: (node: string, method: string) => `cri.${nodeToken(node)}.runtime.${token('CRI method', method)}`,
    parse(subject: string): { node: string; method: string } | undefined {
      const p = split(subject, 'cri', 4);
      return p && p[2] === 'runtime' ? { node: nodeFromToken(p[1] ?? ''), method: p[3] ?? '' } : undefined;
    },
  },

  /** ImageService calls: any -> cri-gateway, request/reply. `cri.<node>.image.<Method>`. */
  criImage: {
    pattern: 'cri.{node}.image.*',
    wildcard: (node: string) => `cri.${nodeToken(node)}.image.*`,
    build: (node: string, method: string) => `cri.${nodeToken(node)}.image.${token('CRI method', method)}`,
    parse(subject: string): { node: string; method: string } | undefined {
      const p = split(subject, 'cri', 4);
      return p && p[2] === 'image' ? { node: nodeFromToken(p[1] ?? ''), method: p[3] ?? '' } : undefined;
    },
  },

  /**
   * Who is here: every instance of every service answers a request on
   * `kubelet.<node>.service.<service>.info` with a ServiceInfo (no queue
   * group, so a request-many sees all replicas). Used by the project's tools.
   */
  serviceInfo: {
    pattern: 'kubelet.{node}.service.{service}.info',
    wildcard: (node: string, service = '*') => `kubelet.${nodeToken(node)}.service.${service === '*' ? '*' : token('service', service)}.info`,
    build: (node: string, service: string) => `kubelet.${nodeToken(node)}.service.${token('service', service)}.info`,
    parse(subject: string): { node: string; service: string } | undefined {
      const p = split(subject, 'kubelet', 5);
      return p && p[2] === 'service' && p[4] === 'info' ? { node: nodeFromToken(p[1] ?? ''), service: p[3] ?? '' } : undefined;
    },
  },

  /**
   * A service's own commands for people and tools (the NATS admin user): the
   * PLEG's mode, status-manager's pods and events; request/reply on
   * `kubelet.<node>.service.<service>.<command>`, each also on the service's
   * HTTP port. A request one service makes of another is a family of its own
   * (apiObject, criEventsStatus, ...), so the permission table can name it.
   */
  serviceCommand: {
    pattern: (command: string) => `kubelet.{node}.service.{service}.${token('command', command)}`,
    build: (node: string, service: string, command: string) => `kubelet.${nodeToken(node)}.service.${token('service', service)}.${token('command', command)}`,
  },

  /** GetContainerEvents relayed by cri-gateway: `cri.<node>.events`. */
  criEvents: {
    pattern: 'cri.{node}.events',
    wildcard: (node: string) => `cri.${nodeToken(node)}.events`,
    build: (node: string) => `cri.${nodeToken(node)}.events`,
    parse(subject: string): { node: string } | undefined {
      const p = split(subject, 'cri', 3);
      return p && p[2] === 'events' ? { node: nodeFromToken(p[1] ?? '') } : undefined;
    },
  },

  /**
   * The container event relay's state, on request: pleg asks, cri-gateway
   * answers (a ContainerEventsStatusMessage, as on `criEvents`), when it
   * switches to evented mode, so a runtime that does not stream events makes
   * it fall back to relisting at once. Upstream's evented PLEG sees the
   * GetContainerEvents stream fail itself and falls back to the generic PLEG
   * (pleg/evented.go watchEventsChannel); here the stream is cri-gateway's.
   * `kubelet.<node>.service.cri-gateway.events`.
   */
  criEventsStatus: {
    pattern: 'kubelet.{node}.service.cri-gateway.events',
    wildcard: (node: string) => serviceRequestSubject(node, 'cri-gateway', 'events'),
    build: (node: string) => serviceRequestSubject(node, 'cri-gateway', 'events'),
    parse: (subject: string): { node: string } | undefined => parseServiceRequest(subject, 'cri-gateway', 'events'),
  },

  /**
   * The apiserver objects a pod references (ADR 0014), request/reply:
   * pod-worker asks, config-source answers from its watches. The kubelet's
   * configmap.Manager GetConfigMap and secret.Manager GetSecret (their
   * watch-based managers, pkg/kubelet/util/manager) for configMap and secret
   * volumes, env and imagePullSecrets, and runtimeclass.Manager
   * LookupRuntimeHandler for a runtimeClassName: one subject, the kind in the
   * request (ApiObjectRequestMessage, answered by ApiObjectReplyMessage).
   * `kubelet.<node>.service.config-source.object`. The reply may carry a
   * secret: only pod-worker may ask.
   */
  apiObject: {
    pattern: 'kubelet.{node}.service.config-source.object',
    wildcard: (node: string) => serviceRequestSubject(node, 'config-source', 'object'),
    build: (node: string) => serviceRequestSubject(node, 'config-source', 'object'),
    parse: (subject: string): { node: string } | undefined => parseServiceRequest(subject, 'config-source', 'object'),
  },

  /**
   * A token of a pod's service account, bound to the pod, for a projected
   * serviceAccountToken volume: the kubelet's token.Manager
   * GetServiceAccountToken (pkg/kubelet/token), a TokenRequest. pod-worker
   * asks, config-source answers, request/reply (ServiceAccountTokenRequestMessage,
   * ServiceAccountTokenMessage). `kubelet.<node>.service.config-source.token`.
   * The token is a credential: only pod-worker may ask.
   */
  serviceAccountToken: {
    pattern: 'kubelet.{node}.service.config-source.token',
    wildcard: (node: string) => serviceRequestSubject(node, 'config-source', 'token'),
    build: (node: string) => serviceRequestSubject(node, 'config-source', 'token'),
    parse: (subject: string): { node: string } | undefined => parseServiceRequest(subject, 'config-source', 'token'),
  },

  /**
   * The Services a pod's containers learn of through their environment: the
   * kubelet's serviceLister, as kubelet_pods.go getServiceEnvVarMap lists it.
   * pod-worker asks, config-source answers from its watch of every Service,
   * request/reply (ServiceListRequestMessage, ServiceListMessage).
   * `kubelet.<node>.service.config-source.services`.
   */
  serviceList: {
    pattern: 'kubelet.{node}.service.config-source.services',
    wildcard: (node: string) => serviceRequestSubject(node, 'config-source', 'services'),
    build: (node: string) => serviceRequestSubject(node, 'config-source', 'services'),
    parse: (subject: string): { node: string } | undefined => parseServiceRequest(subject, 'config-source', 'services'),
  },

  /**
   * Sync every pod now, request/reply: a status manager that starts leading
   * asks the leading sync loop to dispatch a SyncPodSync for every admitted
   * pod, so the pod workers send each pod's status at once (a standby status
   * manager may not have heard them, and the next resync is a minute away).
   * A standby sync loop answers `leading: false` (the asker tries again).
   * PodResyncRequestMessage in, PodResyncMessage out.
   * `kubelet.<node>.service.sync-loop.resync`.
   */
  podResync: {
    pattern: 'kubelet.{node}.service.sync-loop.resync',
    wildcard: (node: string) => serviceRequestSubject(node, 'sync-loop', 'resync'),
    build: (node: string) => serviceRequestSubject(node, 'sync-loop', 'resync'),
    parse: (subject: string): { node: string } | undefined => parseServiceRequest(subject, 'sync-loop', 'resync'),
  },

  /**
   * A pod's latest events, request/reply: the kubelet server's read port
   * (`/pods/<ns>/<name>/events`) and the console ask, the status manager
   * answers from what it keeps in memory (recorder.Eventf's broadcaster:
   * upstream keeps no such list; ours, for `kubelet-split describe`).
   * `{"namespace", "name"}` in, `{"items": EventMessage[]}` out.
   * `kubelet.<node>.service.status-manager.events`.
   */
  podEvents: {
    pattern: 'kubelet.{node}.service.status-manager.events',
    wildcard: (node: string) => serviceRequestSubject(node, 'status-manager', 'events'),
    build: (node: string) => serviceRequestSubject(node, 'status-manager', 'events'),
    parse: (subject: string): { node: string } | undefined => parseServiceRequest(subject, 'status-manager', 'events'),
  },

  /**
   * The Node's conditions as the node itself computes them, request/reply:
   * node-status answers (every instance: the leader with the conditions of
   * its last status update, nodestatus.go's setters; a standby with none and
   * `leading: false`), the console's fleet page asks from the hub. Read-only,
   * so a fleet reader may ask (libs/nats fleetServiceReads). Upstream reads
   * them from the apiserver's Node (`kubectl get nodes`); ours also answers
   * a node whose link to the apiserver is down. EmptyRequest in,
   * NodeConditionsMessage out. `kubelet.<node>.service.node-status.conditions`.
   */
  nodeConditions: {
    pattern: 'kubelet.{node}.service.node-status.conditions',
    wildcard: (node: string) => serviceRequestSubject(node, 'node-status', 'conditions'),
    build: (node: string) => serviceRequestSubject(node, 'node-status', 'conditions'),
    parse: (subject: string): { node: string } | undefined => parseServiceRequest(subject, 'node-status', 'conditions'),
  },

  /**
   * A pod's trace records (docs/adr/0015-tracing.md): every service
   * publishes one per hop (core NATS, no reply), into the JetStream stream
   * KUBELET_TRACES, which holds the whole family; nobody subscribes: the CLI
   * (`kubelet-split trace`) and the console read a pod's records through a
   * consumer filtered on `forPod(uid)`. No kubelet counterpart (upstream
   * exports OpenTelemetry spans). `trace.<node>.<service>.<uid>`: the
   * publisher's service is in the subject, so that NATS permissions hold each
   * service to its own name (`ofService`) and a reader can check the record's
   * claimed instance against it (issue 28 item 16).
   */
  trace: {
    pattern: 'trace.{node}.*.*',
    wildcard: (node: string) => `trace.${nodeToken(node)}.*.*`,
    build: (node: string, service: ServiceName, uid: string) => `trace.${nodeToken(node)}.${token('service', service)}.${token('pod UID', uid)}`,
    /** Every record one service of one node may publish (its NATS user's grant): `trace.<node>.<service>.*`. */
    ofService: (node: string, service: ServiceName) => `trace.${nodeToken(node)}.${token('service', service)}.*`,
    /** One pod's records, whichever service (and, without `node`, whichever node) wrote them: `trace.<node|*>.*.<uid>`. */
    forPod: (uid: string, node?: string) => `trace.${node === undefined ? '*' : nodeToken(node)}.*.${token('pod UID', uid)}`,
    parse(subject: string): { node: string; service: string; uid: string } | undefined {
      const p = split(subject, 'trace', 4);
      return p ? { node: nodeFromToken(p[1] ?? ''), service: p[2] ?? '', uid: p[3] ?? '' } : undefined;
    },
  },
} as const;

/** `kubelet.<node>.service.<service>.<command>`: one service's one request/reply family. */
function serviceRequestSubject(node: string, service: ServiceName, command: string): string {
  return `kubelet.${nodeToken(node)}.service.${service}.${command}`;
}

function parseServiceRequest(subject: string, service: ServiceName, command: string): { node: string } | undefined {
  const p = split(subject, 'kubelet', 5);
  return p && p[2] === 'service' && p[3] === service && p[4] === command ? { node: nodeFromToken(p[1] ?? '') } : undefined;
}

function shardToken(shard: number): string {
  if (!Number.isInteger(shard) || shard < 0) throw new SubjectTokenError('shard', String(shard));
  return String(shard);
}
