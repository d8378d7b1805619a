/**
 * The kubelet server's `GET /containerLogs/<namespace>/<pod>/<container>`:
 * k8s.io/kubernetes pkg/kubelet/server/server.go getContainerLogs, the
 * kubelet's GetKubeletContainerLogs / validateContainerLogStatus and
 * kuberuntime/logs/logs.go ReadLogs.
 *
 *   open(ns, pod, container, options)       -- every error here, before a byte is written
 *     pod of the node?         no -> 404 pod "<pod>" does not exist
 *     container in its spec?   no -> 404 container "<c>" not found in pod "<pod>"
 *     the instances of <c> in the runtime (CRI labels), newest first:
 *       current  = the newest (created only: 400 waiting to start; none: the
 *                  terminated one of the status, from its file, else 400)
 *       previous = the newest dead one created before the current one
 *                  (none: 400 previous terminated container not found)
 *     its logPath (CRI ContainerStatus)
 *   run(sink, signal)                       -- the stream
 *     the file decoded, sinceSeconds/sinceTime then tailLines applied,
 *     timestamps, limitBytes; with follow: every line written after, until
 *     the container has exited and the file is drained, the client goes
 *     away (signal) or limitBytes is reached.
 *
 * Follow waits for the file to change, or FOLLOW_CHECK_MS at most, and then
 * asks the runtime whether the container still runs (upstream: fsnotify and
 * a 5 s state check). It survives the container log manager's rotation
 * (sync-loop's container-log-manager.ts): the open file is read to its end
 * after the rename, then the runtime's new file at the same path from its
 * start. tailLines, sinceSeconds and previous read the current file only, as
 * upstream's (the rotated files are not read back).
 */
import { join } from 'node:path';
import type { Clock } from '@app/clock';
import type { ContainerStatus, Pod } from '@app/contracts';
import { ByteLimit, decodeCriLog, formatLine, selectLines, type LogLine, type LogOptions } from './cri-log.js';
import type { LogContainer, LogFiles, LogPods, LogRuntime, LogSink } from './ports.js';

const EMPTY = Buffer.alloc(0);

/** How long follow waits for the file before asking whether the container still runs. */
export const FOLLOW_CHECK_MS = 1000;

/** A request the server refuses, with the HTTP status and upstream's message. */
export class ContainerLogsError extends Error {
  constructor(
    readonly status: 400 | 404,
    message: string,
  ) {
    super(message);
  }
}

/** One opened container log: where it is and what to send. */
export interface ContainerLogStream {
  containerId: string;
  logPath: string;
  run(sink: LogSink, signal: AbortSignal): Promise<void>;
}

export class ContainerLogs {
  constructor(
    private readonly pods: LogPods,
    private readonly runtime: LogRuntime,
    private readonly files: LogFiles,
    private readonly clock: Clock,
    /** The root of the pods' log directories (POD_LOGS_DIR): a finished pod's logs are read there; none: only from the runtime's containers. */
    private readonly podLogsDir?: string,
  ) {}

  async open(namespace: string, podName: string, containerName: string, opts: LogOptions): Promise<ContainerLogStream> {
    const pod = await this.pods.getPod(namespace, podName);
    if (!pod) throw new ContainerLogsError(404, `pod "${podName}" does not exist`);
    if (!containerInSpec(pod, containerName)) throw new ContainerLogsError(404, `container "${containerName}" not found in pod "${podName}"`);
    const instances = await this.runtime.containersOf({ namespace, name: podName, uid: pod.metadata.uid ?? '' }, containerName);
    const target = chooseInstance(instances, opts.previous);
    if (!target) {
      if (opts.previous) throw new ContainerLogsError(400, `previous terminated container "${containerName}" in pod "${podName}" not found`);
      const finished = instances.length === 0 ? await this.finishedLog(pod, containerName, opts) : undefined;
      if (finished) return finished;
      throw new ContainerLogsError(400, waitingMessage(pod, containerName));
    }
    const status = await this.runtime.status(target.id);
    if (!status) throw new ContainerLogsError(400, `container "${containerName}" in pod "${podName}" is not available`);
    return { containerId: target.id, logPath: status.logPath, run: (sink, signal) => this.stream(target.id, status.logPath, status.running, opts, sink, signal) };
  }

  /**
   * A container of a finished pod that the runtime no longer has (removed
   * behind the node's back, or by a runtime restart): its log file may still
   * be in the pod's log directory until the pod is deleted (the container
   * GC takes it then), where the runtime wrote it
   * (`<container>/<restartCount>.log`). The pod worker leaves a finished
   * pod's dead containers to the container GC, as upstream, so their logs
   * are normally the containers' own; the file stands in otherwise, as long
   * as the status says the container terminated.
   */
  private async finishedLog(pod: Pod, containerName: string, opts: LogOptions): Promise<ContainerLogStream | undefined> {
    if (this.podLogsDir === undefined) return undefined;
    const s = pod.status ?? {};
    const status = [...(s.containerStatuses ?? []), ...(s.initContainerStatuses ?? []), ...(s.ephemeralContainerStatuses ?? [])].find((c) => c.name === containerName);
    const terminated = status?.state?.terminated;
    if (!status || !terminated?.containerID) return undefined;
    const logPath = join(this.podLogsDir, `${pod.metadata.namespace ?? ''}_${pod.metadata.name ?? ''}_${pod.metadata.uid ?? ''}`, containerName, `${status.restartCount}.log`);
    const file = await this.files.open(logPath);
    if (!file) return undefined;
    await file.close();
    const containerId = terminated.containerID.replace(/^[^:]+:\/\//, '');
    return { containerId, logPath, run: (sink, signal) => this.stream(containerId, logPath, false, opts, sink, signal) };
  }

  private async stream(id: string, path: string, running: boolean, opts: LogOptions, sink: LogSink, signal: AbortSignal): Promise<void> {
    const limit = new ByteLimit(opts.limitBytes);
    const pending = new Map<string, LogLine>();
    const write = async (lines: LogLine[]): Promise<void> => {
      for (const line of lines) {
        if (limit.exhausted || signal.aborted) return;
        await sink.write(limit.take(formatLine(line, opts.timestamps)));
      }
    };
    let file = await this.files.open(path);
    try {
      // What is in the file now: the selection applies to it only; what follows is all written.
      let buf = file ? await file.read(0) : EMPTY;
      let offset = buf.length;
      const first = decodeCriLog(buf.toString('utf8'), pending);
      let rest = first.rest;
      await write(selectLines(first.lines, opts));
      if (!opts.follow) return;
      const follow = async (chunk: Buffer): Promise<void> => {
        offset += chunk.length;
        const next = decodeCriLog(rest + chunk.toString('utf8'), pending);
        rest = next.rest;
        await write(opts.since === undefined ? next.lines : next.lines.filter((l) => l.time >= (opts.since ?? 0)));
      };
      let exited = !running;
      while (!signal.aborted && !limit.exhausted) {
        buf = file ? await file.read(offset) : EMPTY;
        if (buf.length > 0) {
          await follow(buf);
          continue;
        }
        // Drained. Rotated meanwhile (renamed away, and the runtime reopened a new
        // log at the path)? ReadLogs reopens on the new file's creation: what the
        // old one still holds first, then the new one from its start. A partial
        // entry goes on in the new file; an unterminated last line does not.
        if (!file || (await file.replaced())) {
          const next = await this.files.open(path);
          if (next) {
            if (file) {
              const tail = await file.read(offset);
              if (tail.length > 0) await follow(tail);
              await file.close();
            }
            file = next;
            offset = 0;
            rest = '';
            continue;
          }
        }
        // Drained: done if the container had exited before this last read.
        if (exited) return;
        await this.waitForChange(path, signal);
        if (signal.aborted) return;
        exited = !(await this.runtime.status(id))?.running;
      }
    } finally {
      await file?.close();
    }
  }

  private async waitForChange(path: string, signal: AbortSignal): Promise<void> {
    const stop = new AbortController();
    const onAbort = () => stop.abort();
    signal.addEventListener('abort', onAbort, { once: true });
    try {
      await Promise.race([this.files.changed(path, stop.signal), this.clock.sleep(FOLLOW_CHECK_MS, stop.signal).catch(() => undefined)]);
    } finally {
      signal.removeEventListener('abort', onAbort);
      stop.abort();
    }
  }
}

/**
 * The instance whose logs are asked for. The runtime's instances of one
 * container name, newest first (as the kubelet orders a pod's runtime
 * statuses): the current one is the newest, unless it was only created
 * (no logs yet); the previous one the newest dead one created before it.
 */
export function chooseInstance(instances: readonly LogContainer[], previous: boolean): LogContainer | undefined {
  const byAge = [...instances].sort((a, b) => b.createdAt - a.createdAt);
  const [current, ...older] = byAge;
  if (!current) return undefined;
  if (previous) return older.find((c) => c.state === 'CONTAINER_EXITED');
  if (current.state === 'CONTAINER_CREATED') return undefined;
  return current;
}

function containerInSpec(pod: Pod, name: string): boolean {
  const spec = pod.spec as Pod['spec'] & { ephemeralContainers?: { name: string }[] };
  return [...spec.containers, ...(spec.initContainers ?? []), ...(spec.ephemeralContainers ?? [])].some((c) => c.name === name);
}

/** validateContainerLogStatus's words for a container that has not run yet. */
function waitingMessage(pod: Pod, container: string): string {
  const podName = pod.metadata.name ?? '';
  const s = pod.status ?? {};
  const statuses: ContainerStatus[] = [...(s.containerStatuses ?? []), ...(s.initContainerStatuses ?? []), ...(s.ephemeralContainerStatuses ?? [])];
  const reason = statuses.find((c) => c.name === container)?.state?.waiting?.reason;
  if (reason === 'ErrImagePull') return `container "${container}" in pod "${podName}" is waiting to start: image can't be pulled`;
  if (reason === 'ImagePullBackOff') return `container "${container}" in pod "${podName}" is waiting to start: trying and failing to pull image`;
  if (reason) return `container "${container}" in pod "${podName}" is waiting to start: ${reason}`;
  return `container "${container}" in pod "${podName}" is waiting to start - no logs yet`;
}
