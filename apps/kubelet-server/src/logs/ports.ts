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
  /**
   * Opens `path` for reading; undefined when there is no such file (a
   * container that has not written yet, or a log being rotated). The handle
   * keeps reading the same file once it is renamed, as an open file
   * descriptor does: the log manager's rotation renames the log away and the
   * runtime reopens a new one at `path`.
   */
  abstract open(path: string): Promise<LogFile | undefined>;
  /** Resolves when `path` changes, is renamed or is created (or may have), or when `signal` aborts. */
  abstract changed(path: string, signal: AbortSignal): Promise<void>;
}

/** An open log file. */
export interface LogFile {
  /** The bytes from `offset` to the file's end now (empty when none). */
  read(offset: number): Promise<Buffer>;
  /** Whether the path it was opened at now names another file (the runtime reopened the log after a rotation). */
  replaced(): Promise<boolean>;
  close(): Promise<void>;
}

/** The pods of the node with their statuses, as `/pods` serves them. */
export abstract class LogPods {
  abstract getPod(namespace: string, name: string): Promise<Pod | undefined>;
}

/** Where the log server writes a stream's output: resolves once the chunk is taken (back-pressure). */
export interface LogSink {
  write(chunk: Buffer): Promise<void>;
}
