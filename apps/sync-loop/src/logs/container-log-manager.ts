/**
 * The container log manager (pkg/kubelet/logs/container_log_manager.go):
 * container log rotation by size and file count, run by the sync loop's
 * leader (ADR 0014), the runtime reached through cri-gateway.
 *
 * Every monitor interval (rotateLogs), for each running container of the
 * node, by up to maxWorkers at once (processContainer):
 *
 *     ContainerStatus -> its log path
 *     no log file?          ReopenContainerLog, look again
 *     size < MaxSize?       nothing to do
 *     rotateLog:
 *       cleanupUnusedLogs   `<log>.*.tmp` and a rotated log already compressed beside its `.gz`: removed
 *       removeExcessLogs    oldest first, until MaxFiles - 2 rotated logs are left
 *                           (the current log and the one rotated now make MaxFiles)
 *       compressLog         each rotated log left uncompressed -> `<rotated>.gz`
 *                           (through `<rotated>.tmp`, then the plain one removed)
 *       rotateLatestLog     `<log>` renamed `<log>.<YYYYMMDD-hhmmss>`, then ReopenContainerLog:
 *                           the runtime writes a new `<log>`; the newest rotated log stays
 *                           uncompressed, as readers may still be on it. If the reopen
 *                           fails (the container exited meanwhile), the rename is undone
 *                           and the log is tried again at the next pass.
 *
 * So a container has at most MaxFiles log files: the current one, the one
 * rotated last and MaxFiles - 2 older ones, gzip-compressed. The log server
 * (status-manager, logs/container-logs.ts) follows a log across a rotation.
 *
 * Differences from upstream, on purpose:
 *  - Only this node's containers (the kubelet's node label): several stacks
 *    may share one containerd.
 *  - The rotated log's time is UTC, where upstream's is the local time: the
 *    names sort by age even across a daylight-saving change.
 *  - A pass ends once every container was looked at, and the next starts one
 *    interval later (wait.Forever's sliding period); upstream queues the IDs
 *    for its workers, which amounts to the same with a rate-limited queue.
 *  - A container that exited before its log could be reopened is not an
 *    error (upstream logs one): it writes no more, so its log needs no
 *    rotation.
 */
import type { Clock, Timer } from '@app/clock';
import type { Logger } from '@app/observability';
import type { ContainerLogFiles, ContainerLogRuntime } from '../ports.js';

/** The rotated log's suffix, after Go's `20060102-150405` (timestampFormat). */
export const ROTATED_TIMESTAMP = /^\d{8}-\d{6}$/;
const COMPRESS_SUFFIX = '.gz';
const TMP_SUFFIX = '.tmp';

/** LogRotatePolicy: --container-log-max-size and --container-log-max-files. */
export interface LogRotatePolicy {
  /** Bytes of a container log before it is rotated; negative: no rotation. */
  maxSize: number;
  /** The most log files a container has (at least 2). */
  maxFiles: number;
}

export interface ContainerLogManagerOptions {
  policy: LogRotatePolicy;
  /** --container-log-monitor-interval. */
  monitorIntervalMs: number;
  /** --container-log-max-workers: containers looked at in parallel. */
  maxWorkers: number;
}

/** The kubelet's defaults: 10Mi, 5 files, every 10 s, one worker. */
export const DEFAULT_CONTAINER_LOG_OPTIONS: ContainerLogManagerOptions = Object.freeze({ policy: { maxSize: 10 * 1024 * 1024, maxFiles: 5 }, monitorIntervalMs: 10_000, maxWorkers: 1 });

/** `<log>.<timestamp>` for a rotation at `now` (ms since the epoch), in UTC. */
export function rotatedLogName(log: string, now: number): string {
  const d = new Date(now);
  const p = (n: number, w = 2) => String(n).padStart(w, '0');
  return `${log}.${p(d.getUTCFullYear(), 4)}${p(d.getUTCMonth() + 1)}${p(d.getUTCDate())}-${p(d.getUTCHours())}${p(d.getUTCMinutes())}${p(d.getUTCSeconds())}`;
}

/** isInUse: temporary files are not, compressed logs are, and a plain log is not once its `.gz` exists. */
export function isInUse(log: string, logs: readonly string[]): boolean {
  if (log.endsWith(TMP_SUFFIX)) return false;
  if (log.endsWith(COMPRESS_SUFFIX)) return true;
  return !logs.includes(log + COMPRESS_SUFFIX);
}

/** filterUnusedLogs: the logs in use and those a failed rotation left behind. */
export function filterUnusedLogs(logs: readonly string[]): { inuse: string[]; unused: string[] } {
  const inuse: string[] = [];
  const unused: string[] = [];
  for (const l of logs) (isInUse(l, logs) ? inuse : unused).push(l);
  return { inuse, unused };
}

/** Go's sort.Strings: byte order (the timestamps sort oldest first). */
const byteOrder = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);

/** What the container log manager works with. */
export interface ContainerLogManagerDeps {
  runtime: ContainerLogRuntime;
  files: ContainerLogFiles;
  clock: Clock;
  logger: Logger;
}

export class ContainerLogManager {
  private timer?: Timer;
  private pass?: Promise<void>;
  /** Counts starts, so that a pass of an earlier term schedules nothing. */
  private term = 0;
  private running = false;
  private stopping = false;

  private readonly runtime: ContainerLogRuntime;
  private readonly files: ContainerLogFiles;
  private readonly clock: Clock;
  private readonly logger: Logger;

  constructor(
    deps: ContainerLogManagerDeps,
    private readonly options: ContainerLogManagerOptions = DEFAULT_CONTAINER_LOG_OPTIONS,
  ) {
    ({ runtime: this.runtime, files: this.files, clock: this.clock, logger: this.logger } = deps);
    if (options.policy.maxFiles <= 1) throw new Error(`invalid MaxFiles ${options.policy.maxFiles}, must be > 1`);
  }

  /** Whether rotation is on (upstream's stub manager when MaxSize is negative). */
  get enabled(): boolean {
    return this.options.policy.maxSize >= 0;
  }

  /** Start: a pass every monitor interval, each after the previous one ended, until stop. */
  start(): void {
    if (!this.enabled || this.running) return;
    this.running = true;
    this.stopping = false;
    const term = ++this.term;
    this.logger.info({ workers: this.options.maxWorkers, monitorPeriodMs: this.options.monitorIntervalMs, ...this.options.policy }, 'Initializing container log rotate workers');
    const tick = () => {
      if (!this.running || term !== this.term) return;
      this.pass = this.rotateLogs()
        .catch((err: unknown) => this.logger.error({ err: (err as Error).message }, 'Failed to rotate container logs'))
        .finally(() => {
          if (this.running && term === this.term) this.timer = this.clock.setTimer(this.options.monitorIntervalMs, tick);
        });
    };
    this.timer = this.clock.setTimer(this.options.monitorIntervalMs, tick);
  }

  /** Stops the passes (leadership lost, shutdown); resolves once a pass in flight ended. */
  async stop(): Promise<void> {
    this.running = false;
    this.stopping = true;
    this.timer?.cancel();
    await this.pass;
  }

  /** rotateLogs and the workers: every running container's log looked at once. */
  async rotateLogs(): Promise<void> {
    const ids = await this.runtime.runningContainers();
    const queue = [...ids];
    const worker = async () => {
      for (let id = queue.shift(); id !== undefined; id = queue.shift()) {
        // A pass stopped by a lost leadership ends after the container in hand.
        if (this.stopping) return;
        await this.processContainer(id);
      }
    };
    await Promise.all(Array.from({ length: Math.max(1, Math.min(this.options.maxWorkers, queue.length)) }, worker));
  }

  /** processContainer: one container's log rotated if it is over MaxSize; errors are logged, never thrown. */
  async processContainer(id: string): Promise<void> {
    let path = '';
    try {
      const status = await this.runtime.containerLog(id);
      if (!status || !status.logPath) return;
      path = status.logPath;
      let size = await this.files.size(path);
      if (size === undefined) {
        await this.runtime.reopenContainerLog(id);
        size = await this.files.size(path);
        if (size === undefined) throw new Error(`container log ${path} is still missing after reopening it`);
      }
      if (size < this.options.policy.maxSize) return;
      await this.rotateLog(id, path);
    } catch (err) {
      // Exited meanwhile (or removed): it writes no more, its log needs nothing.
      const running = await this.runtime.containerLog(id).then(
        (s) => s?.running === true,
        () => undefined,
      );
      const what = { containerId: id, path, err: (err as Error).message };
      if (running === false) this.logger.debug(what, 'container stopped while its log was rotated; left as it is');
      else this.logger.warn(what, 'Failed to rotate log for container');
    }
  }

  /** rotateLog: the rotated logs tidied and compressed, then the current one rotated. */
  async rotateLog(id: string, log: string): Promise<void> {
    let logs = await this.cleanupUnusedLogs(await this.files.rotated(log));
    logs = await this.removeExcessLogs(logs);
    for (const l of logs) if (!l.endsWith(COMPRESS_SUFFIX)) await this.compressLog(l);
    await this.rotateLatestLog(id, log);
  }

  private async cleanupUnusedLogs(logs: string[]): Promise<string[]> {
    const { inuse, unused } = filterUnusedLogs(logs);
    for (const l of unused) await this.files.remove(l);
    return inuse;
  }

  /** Keeps MaxFiles - 2 rotated logs, removing the oldest first so as not to break a reader of the newer ones. */
  private async removeExcessLogs(logs: string[]): Promise<string[]> {
    const sorted = [...logs].sort(byteOrder);
    const excess = Math.max(0, sorted.length - Math.max(0, this.options.policy.maxFiles - 2));
    for (const l of sorted.slice(0, excess)) await this.files.remove(l);
    return sorted.slice(excess);
  }

  private async compressLog(log: string): Promise<void> {
    const tmp = log + TMP_SUFFIX;
    try {
      await this.files.gzip(log, tmp);
      await this.files.rename(tmp, log + COMPRESS_SUFFIX);
    } finally {
      // Best effort: gone already once renamed.
      await this.files.remove(tmp).catch(() => undefined);
    }
    await this.files.remove(log);
  }

  /** The current log renamed, and the runtime asked to reopen it; renamed back if it cannot, to be tried again next time. */
  private async rotateLatestLog(id: string, log: string): Promise<void> {
    const rotated = rotatedLogName(log, this.clock.now());
    await this.files.rename(log, rotated);
    try {
      await this.runtime.reopenContainerLog(id);
    } catch (err) {
      await this.files.rename(rotated, log).catch((renameErr: unknown) => {
        // The original log is lost under its rotated name: say so.
        this.logger.error({ rotatedLog: rotated, newLog: log, containerId: id, err: (renameErr as Error).message }, 'Failed to rename rotated log');
      });
      throw new Error(`failed to reopen container log ${id}: ${(err as Error).message}`);
    }
  }
}
