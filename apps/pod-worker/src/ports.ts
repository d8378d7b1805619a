/**
 * What the pod worker's logic depends on: the buckets it reads and writes,
 * what it sends, lifecycle hooks, the pods' directories, and the work
 * subjects of the shards it owns. The CRI is @app/cri's CriRuntime, events
 * go through @app/contracts' EventRecorder, the pod cache is
 * @app/pod-cache's PodCache. The adapters are in adapters/, the module
 * binds one to each port.
 */
import type { ApiObjectKind, Container, LifecycleHandler, Pod, PodRecord, PodStatus, PodSyncStatusRecord, ProberVerb, Service, StatusVerb } from '@app/contracts';
import type { ProbeResults } from './kuberuntime/pod-actions.js';

/** The `workers` KV bucket, keyed by pod UID. */
export abstract class WorkerStore {
  abstract load(uid: string): Promise<PodSyncStatusRecord | undefined>;
  abstract save(uid: string, record: PodSyncStatusRecord): Promise<void>;
  abstract delete(uid: string): Promise<void>;
}

/**
 * Every `workers` record of the node, read by the shard owner to re-derive
 * its pods (removed and terminating ones included) and to purge the records
 * of pods that finished and are gone (upstream SyncKnownPods).
 */
export abstract class WorkerRecords {
  /** Every record, each at its value at the call or newer (a listing of the bucket). */
  abstract all(): Promise<Map<string, PodSyncStatusRecord>>;
  /**
   * Every record as this process's watch-kept mirror has it (no listing; at
   * most the watch's lag old; this process's own writes at once): for the
   * periodic reconciliation, which reads again (`load`) what it acts on.
   */
  abstract mirrored(): Map<string, PodSyncStatusRecord>;
  /** One record, at its value at the call or newer. */
  abstract load(uid: string): Promise<PodSyncStatusRecord | undefined>;
  abstract delete(uid: string): Promise<void>;
}

/** completeWork: `kubelet.<node>.work.done.<uid>`. */
export abstract class WorkQueue {
  abstract enqueue(uid: string, afterMs: number, error?: string): void;
}

/**
 * The PLEG's per-pod inspection, asked right after a sync that changed the
 * pod in the runtime: `kubelet.<node>.pleg.inspect.<uid>` (docs/adr/0017).
 */
export abstract class PodInspector {
  /**
   * Asks the PLEG to inspect the pod now; `syncEnd` is when the sync that
   * changed it ended (the next sync waits for a cache entry newer than it).
   * Fire and forget: a request lost, or a PLEG away, leaves it to the next
   * relist.
   */
  abstract inspect(uid: string, syncEnd: number): void;
}

/** What the pod worker tells the status manager and the probe manager. */
export abstract class PodWorkerOutbox {
  abstract status(verb: StatusVerb, pod: Pod, args: Record<string, unknown>): void;
  abstract prober(verb: ProberVerb, pod: Pod): void;
}

/** The probe managers' results for one pod, by container ID (without the runtime prefix); undefined when there is none (or it is Unknown). */
export interface ProbeResultsView extends ProbeResults {
  readiness(containerId: string): 'Success' | 'Failure' | undefined;
}

/**
 * The results managers (the `probe-results` bucket, written by the prober
 * only): read when a pod is synced, so that a pod worker that restarted or
 * missed a probe message generates the same readiness as one that did not.
 */
export abstract class ProbeResultsReader {
  /** The current results of the pod's probe workers. Rejects when the bucket cannot be read. */
  abstract forPod(pod: Pod): Promise<ProbeResultsView>;
}

/** A pod's status as the status manager keeps it. */
export interface KeptPodStatus {
  status: PodStatus;
  /** It came from TerminatePod: that instance of the pod has finished. */
  podIsFinished: boolean;
}

/**
 * statusManager.GetPodStatus (status.PodStatusProvider): the pod's status in
 * the status manager's `pod-status` bucket, the previous status the next one
 * is generated from, whichever replica generated it.
 */
export abstract class PodStatusProvider {
  /** Undefined when the status manager has none. Rejects when the bucket cannot be read. */
  abstract getPodStatus(uid: string): Promise<KeptPodStatus | undefined>;
}

/**
 * Runs a lifecycle hook (postStart, preStop): exec in the container, an HTTP
 * GET, or a sleep; a tcpSocket hook is refused (upstream handlerRunner.Run).
 */
export abstract class HookRunner {
  /**
   * Resolves with upstream's failure message (it may carry the hook's
   * output: it belongs in the container status and the log, never in an
   * event), or undefined when the hook succeeded. `podIPs` are the pod's
   * IPs when the caller knows them; otherwise the runner finds them. Not
   * cancellable: a hook runs to its end or its timeout (upstream runs the
   * runtime's SyncPod and the kill without cancellation).
   */
  abstract run(pod: Pod, container: Container, containerId: string, handler: LifecycleHandler, podIPs: string[], timeoutSeconds: number): Promise<string | undefined>;
}

/** The pod's directories on the node (makePodDataDirs, the log directory, emptyDir volumes). */
export abstract class PodDirectories {
  /**
   * Throws a VolumeMountError when a volume cannot be set up; resolves with
   * the volumes set up before whose refresh failed (they keep their last
   * content; a FailedMount each), if any.
   */
  abstract ensure(pod: Pod): Promise<{ volume: string; message: string }[] | void>;
  abstract remove(pod: Pod): Promise<void>;
}

/** A pod-worker replica's hold on a shard. */
export interface ShardLease {
  owner: string;
  expiresAt: number;
}

/** A pod-worker replica's heartbeat: it lives, and counts in the fair share, until `expiresAt`. */
export interface ReplicaHeartbeat {
  owner: string;
  expiresAt: number;
  revision: number;
}

/** The leases bucket, with compare-and-set: the shards' leases and the replicas' heartbeats. */
export abstract class LeaseStore {
  /** The lease and its revision, or undefined when there is none. */
  abstract get(shard: number): Promise<{ lease: ShardLease; revision: number } | undefined>;
  /** Creates (revision 0) or replaces the lease at `revision`; false when someone else changed it first. */
  abstract put(shard: number, lease: ShardLease, revision: number): Promise<boolean>;
  abstract release(shard: number, revision: number): Promise<void>;
  /** Writes this replica's heartbeat (its own key: no compare-and-set). */
  abstract announce(owner: string, expiresAt: number): Promise<void>;
  /** Every replica's heartbeat, live or expired. */
  abstract replicas(): Promise<ReplicaHeartbeat[]>;
  /** Removes a replica's heartbeat (at `revision` when given, so a fresh one is kept). */
  abstract withdraw(owner: string, revision?: number): Promise<void>;
  /**
   * Calls `listener` each time a shard's lease is released (deleted), by
   * any replica, until the returned function is called. Best effort: one
   * missed leaves the shard to the next round.
   */
  abstract onRelease(listener: () => void): () => void;
}

/** The podManager (the sync loop's `pods` bucket), read when a shard is taken over to resync its pods. */
export abstract class DesiredPods {
  /** Every desired pod of the node, by UID, each at its value at the call or newer (a listing of the bucket). */
  abstract all(): Promise<Map<string, PodRecord>>;
  /** Every desired pod as this process's watch-kept mirror has it (no listing; at most the watch's lag old). */
  abstract mirrored(): Map<string, PodRecord>;
  /** One desired pod, at its value at the call or newer. */
  abstract get(uid: string): Promise<PodRecord | undefined>;
}

/** The work subject of a shard: `kubelet.<node>.work.<shard>.<uid>`. */
export abstract class WorkSubscriptions {
  /**
   * Delivers every message sent to the shard until the returned function is
   * called. `onMessage` says whether this replica took the work, resolving
   * once it is stored (UpdatePod saved the record): a request taken is
   * answered (`kubelet.v1.work_accepted`) only then; one not taken, or whose
   * promise rejects, is left unanswered, and the sync loop sends it again.
   */
  abstract follow(shard: number, onMessage: (subject: string, data: Uint8Array) => boolean | Promise<boolean>): () => void;
}

/** An apiserver object's payload, as config-source's watch of it holds it. */
export interface ApiObjectPayload {
  /** ConfigMap: text. Secret: base64, as the API gives it. */
  data: Record<string, string>;
  /** ConfigMap: base64. */
  binaryData: Record<string, string>;
  /** Secret: its type (`kubernetes.io/dockerconfigjson`, ...). */
  secretType?: string;
  /** RuntimeClass: its CRI runtime handler. */
  handler?: string;
}

/**
 * Why an object could not be read: `NotJoined` (the node has no
 * apiserver), `Unavailable` (config-source could not list it, or did not
 * answer); the message says what failed.
 */
export class ApiObjectsError extends Error {
  constructor(
    readonly code: string,
    message: string,
  ) {
    super(message);
    this.name = 'ApiObjectsError';
  }
}

/**
 * The apiserver objects a pod references (configMap and secret volumes,
 * imagePullSecrets, its RuntimeClass), asked of config-source, which alone
 * holds the node's credentials (ADR 0013, 0014). Read at every sync, so a
 * change reaches the pod at its next one.
 */
export abstract class ApiObjects {
  /**
   * The object, or undefined when it does not exist; rejects with an
   * ApiObjectsError when that cannot be said. `namespace` is '' for a
   * cluster-scoped kind (RuntimeClass).
   */
  abstract get(kind: ApiObjectKind, namespace: string, name: string): Promise<ApiObjectPayload | undefined>;
  /**
   * The services of `namespace` and of `default` (upstream's serviceLister,
   * for a container's service environment variables); rejects with an
   * ApiObjectsError: `NotJoined` (no apiserver: no services), `Unavailable`
   * (not listed once yet).
   */
  abstract services(namespace: string): Promise<Service[]>;
}

/**
 * A projected serviceAccountToken source's token (the kubelet's token
 * manager), asked of config-source at every sync: it keeps the token and
 * requests a new one past 80 % of its TTL, so the file is rewritten then.
 */
export abstract class ServiceAccountTokens {
  /** The token of the pod's service account bound to the pod; rejects with an ApiObjectsError when there is none to give. */
  abstract get(pod: Pod, audience: string | undefined, expirationSeconds: number): Promise<string>;
}

/**
 * The legacy container log symlinks (kuberuntime_container.go startContainer,
 * legacy.go): each started container's log file linked from
 * /var/log/containers, where log shippers look for it.
 */
export abstract class ContainerLogLinks {
  /** Links the container's log file, if it exists; a failure is the caller's to log, never the container's. */
  abstract link(container: { id: string; name: string; podName: string; podNamespace: string }, logFile: string): Promise<void>;
}

/**
 * The files the kubelet makes on the host for a container about to start:
 * its pod's managed hosts file (kubelet_pods.go ensureHostsFile) and the
 * instance's termination message file (kuberuntime_container.go makeMounts).
 */
export abstract class ContainerFiles {
  /** Writes the hosts file at `path` (mode 0644), making its directory. */
  abstract writeHostsFile(path: string, content: string): Promise<void>;
  /** The node's own /etc/hosts, for a hostNetwork pod's. */
  abstract nodeHostsFile(): Promise<string>;
  /** Creates an empty file under a new random name in `dir` (made if missing), mode 0666 whatever the umask, so any user in the container can write it; its path. */
  abstract createTerminationMessageFile(dir: string): Promise<string>;
}
