/** What the log server depends on; the CRI and file adapters are beside it, the module binds them. */
import type { Pod } from '@app/contracts';

/** One instance of a container of a pod, as the runtime lists it. */
export interface LogContainer {
  id: string;
  /** Creation time, ms since the epoch: the newest instance is the current one. */
  createdAt: number;
  state: 'CONTAINER_CREATED' | 'CONTAINER_RUNNING' | 'CONTAINER_EXITED' | 'CONTAINER_UNKNOWN';
}

/** The runtime's side, read only (CRI ListContainers and ContainerStatus). */
export abstract class LogRuntime {
  /** Every instance of the pod's container `name`, by the kubelet's labels (pod namespace, name and UID; container name). */
  abstract containersOf(pod: { namespace: string; name: string; uid: string }, name: string): Promise<LogContainer[]>;
  /** The instance's log file (ContainerStatus logPath) and whether it still runs; undefined once it is gone. */
  abstract status(id: string): Promise<{ logPath: string; running: boolean } | undefined>;
}

/** The log files, read only. */
export abstract class LogFiles {
  /** The bytes of `path` from `offset` to its end now (empty when none; a missing file is empty). */
  abstract read(path: string, offset: number): Promise<Buffer>;
  /** Resolves when `path` changes (or may have), or when `signal` aborts. */
  abstract changed(path: string, signal: AbortSignal): Promise<void>;
}

/** The pods of the node with their statuses, as `/pods` serves them. */
export abstract class LogPods {
  abstract getPod(namespace: string, name: string): Promise<Pod | undefined>;
}

/** Where the log server writes a stream's output: resolves once the chunk is taken (back-pressure). */
export interface LogSink {
  write(chunk: Buffer): Promise<void>;
}
