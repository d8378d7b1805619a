/**
 * What the kubelet API server depends on (kubelet-server.ts): the
 * apiserver's reviews, the node's pods, the runtime's streaming and the log
 * server. The adapters are in adapters/, the module binds them
 * (kubelet-server.module.ts); the fakes are in testing.ts.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Duplex } from 'node:stream';
import type { EventMessage, Pod, PodList, SyncLoopMonitorRecord } from '@app/contracts';

/** user.Info: who made a request. */
export interface UserInfo {
  name: string;
  uid?: string;
  groups: string[];
  extra?: Record<string, string[]>;
}

/** authorizer.Attributes of a request to the kubelet API (always a resource request on `nodes`). */
export interface NodeRequestAttributes {
  user: UserInfo;
  verb: string;
  resource: 'nodes';
  subresource: string;
  name: string;
  apiVersion: 'v1';
  path: string;
}

/** A TokenReview against the apiserver (the webhook token authenticator). */
export abstract class TokenReviewer {
  /** The token's user, or undefined when the apiserver says it is not authenticated; rejects when it could not be asked. */
  abstract review(token: string): Promise<UserInfo | undefined>;
}

/** A SubjectAccessReview against the apiserver (the webhook authorizer). */
export abstract class AccessReviewer {
  /** Whether the apiserver allows it; rejects when it could not be asked. */
  abstract review(attrs: NodeRequestAttributes): Promise<{ allowed: boolean; reason?: string }>;
}

/** The node's pods with their statuses, as `/pods` serves them (a standby reads `pod-status` afresh). */
export abstract class KubeletPods {
  abstract listPods(): Promise<PodList>;
  abstract getPod(namespace: string, name: string): Promise<Pod | undefined>;
}

/** remotecommand's Options: the streams an exec or attach asks for. */
export interface StreamOptions {
  stdin: boolean;
  stdout: boolean;
  stderr: boolean;
  tty: boolean;
}

/**
 * The pods' events, as the status manager keeps them (recorder.Eventf's
 * broadcaster: it alone holds them, in memory, the newest of each pod).
 */
export abstract class PodEvents {
  /** A pod's latest events, oldest first; empty for a pod the node has none of. */
  abstract eventsOf(namespace: string, name: string): Promise<{ items: EventMessage[] }>;
}

/**
 * The runtime's streaming (kubelet's streamingRuntime, the CRI's Exec,
 * Attach and PortForward): each answers the URL of the runtime's own
 * streaming server the client's stream is proxied to. Plus ExecSync for
 * `/run`.
 */
export abstract class StreamingRuntime {
  abstract getExec(containerId: string, cmd: string[], opts: StreamOptions): Promise<URL>;
  abstract getAttach(containerId: string, opts: StreamOptions): Promise<URL>;
  /** The pod's newest sandbox's port-forward URL; rejects with a KubeletServerError(404) when the pod has no sandbox. */
  abstract getPortForward(podUid: string, ports: number[]): Promise<URL>;
  /** RunInContainer: stdout then stderr of the command; rejects when it exits non-zero. */
  abstract runInContainer(containerId: string, cmd: string[]): Promise<Buffer>;
}

/** The log server's reply (../logs/serve-container-logs.ts). */
export abstract class ContainerLogServer {
  abstract serve(target: { namespace: string; pod: string; container: string }, query: Record<string, unknown>, req: IncomingMessage, res: ServerResponse): Promise<void>;
}

/**
 * The node's log files for `/logs/` (the kubelet's logServer: an
 * http.FileServer of /var/log, enableSystemLogHandler): a directory's
 * listing or a file's content. `path` is the request's, below `/logs/`,
 * already split and decoded; `directory` when it ended with a `/`.
 */
export abstract class SystemLogServer {
  abstract serve(path: readonly string[], directory: boolean, req: IncomingMessage, res: ServerResponse): Promise<void>;
}

/** `/stats/summary` and `/metrics/resource`, as the plain port serves them, and `/metrics`. */
export abstract class NodeStats {
  /** The Summary as JSON text. */
  abstract summary(): Promise<unknown>;
  abstract resourceMetrics(): Promise<string>;
  /** `/metrics`: the kubelet's own metrics in the Prometheus text format (this process's registry: the status group's kubelet metrics). */
  abstract metrics(): Promise<string>;
}

/**
 * proxyStream: the client's upgrade request sent to `location` (path and
 * query replaced by its), the answer passed back, then both sockets piped
 * until either closes.
 */
export abstract class UpgradeProxy {
  abstract proxy(req: IncomingMessage, client: Duplex, head: Buffer, location: URL): Promise<void>;
}

/** A request the server refuses with this status and message. */
export class KubeletServerError extends Error {
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message);
  }
}

/** The node's sync loop monitor, as the leading sync loop last wrote it (the `pods` bucket's `<node>.sync-loop-monitor`), for `/healthz`. */
export abstract class SyncLoopMonitorReader {
  /** The record, or undefined when no sync loop ever wrote one; rejects when it cannot be read. */
  abstract get(): Promise<SyncLoopMonitorRecord | undefined>;
}
