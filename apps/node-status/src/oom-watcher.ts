/**
 * The kubelet's OOM watcher (pkg/kubelet/oom/oom_watcher_linux.go) with
 * cadvisor's OOM parser (utils/oomparser/oomparser.go): the kernel's log
 * (/dev/kmsg) read as it grows, each OOM kill parsed from its lines, and a
 * Warning event `SystemOOM` on the Node for every OOM kill of the whole
 * system ("System OOM encountered, victim process: <name>, pid: <pid>").
 *
 *   "<comm> invoked oom-killer: ..."            an OOM kill starts
 *   "oom-kill:constraint=...,oom_memcg=<cg>,task_memcg=<cg>,task=<name>,pid=<pid>,uid=<uid>"
 *                                               a cgroup's OOM (kernel 5.0 and later): it ends here
 *   "Task in <cg> killed as a result of limit of <cg>"
 *                                               the same before 5.0
 *   "Killed process <pid> (<name>) ..."          it ends (a system OOM prints `global_oom`,
 *                                               which neither line above matches)
 *
 * As upstream, only an OOM whose victim container is `/` (a system OOM) is
 * an event: a container over its own memory limit is a cgroup's OOM, shown
 * as its terminated state's reason `OOMKilled`, not a Node event. Unlike
 * cadvisor, which replays the whole kernel log at every start (old OOMs
 * reported again after each restart), the watcher starts at the log's end:
 * a new leader reports only the OOMs that happen while it leads.
 */
import type { Clock, Timer } from '@app/clock';
import type { EventRecorder } from '@app/contracts';
import type { Logger } from '@app/observability';

/** oomparser.OomInstance */
export interface OomInstance {
  pid: number;
  processName: string;
  /** The memory cgroup of the killed process. */
  containerName: string;
  /** The memory cgroup whose limit was hit: `/` for the whole system. */
  victimContainerName: string;
  constraint?: string;
}

const legacyContainerRegexp = /Task in (.*) killed as a result of limit of (.*)/;
const containerRegexp = /oom-kill:constraint=(.*),nodemask=(.*),cpuset=(.*),mems_allowed=(.*),oom_memcg=(.*),task_memcg=(.*),task=(.*),pid=(.*),uid=(.*)/;
const lastLineRegexp = /Killed process ([0-9]+) \((.+)\)/;
const firstLineRegexp = /invoked oom-killer:/;

/** The message of a /dev/kmsg record (`<prio>,<seq>,<usec>,<flags>;<message>`, continuation lines dropped). */
export function kmsgMessage(record: string): string {
  const semi = record.indexOf(';');
  const body = semi >= 0 ? record.slice(semi + 1) : record;
  return body.split('\n')[0] ?? '';
}

/**
 * StreamOoms as a state machine over the kernel log's messages: feed each
 * message, get an OomInstance when one ends.
 */
export class OomParser {
  private current?: OomInstance;

  feed(message: string): OomInstance | undefined {
    if (!this.current) {
      if (firstLineRegexp.test(message)) this.current = { pid: 0, processName: '', containerName: '/', victimContainerName: '/' };
      return undefined;
    }
    const oom = this.current;
    const m = containerRegexp.exec(message);
    if (m) {
      // getContainerName: the kernel 5.0+ summary line ends the instance.
      oom.containerName = m[6] ?? '/';
      oom.victimContainerName = m[5] ?? '/';
      oom.constraint = m[1] ?? '';
      oom.pid = Number(m[8]);
      oom.processName = m[7] ?? '';
      return this.finish();
    }
    const legacy = legacyContainerRegexp.exec(message);
    if (legacy) {
      oom.containerName = legacy[1] ?? '/';
      oom.victimContainerName = legacy[2] ?? '/';
    }
    const last = lastLineRegexp.exec(message);
    if (last) {
      oom.pid = Number(last[1]);
      oom.processName = last[2] ?? '';
      return this.finish();
    }
    return undefined;
  }

  private finish(): OomInstance | undefined {
    const done = this.current;
    this.current = undefined;
    return done;
  }
}

/** The SystemOOM event's message, as realWatcher.Start formats it. */
export function systemOOMMessage(oom: OomInstance): string {
  const base = 'System OOM encountered';
  return oom.processName !== '' && oom.pid !== 0 ? `${base}, victim process: ${oom.processName}, pid: ${oom.pid}` : base;
}

/** The kernel's log, read as it grows. */
export abstract class KernelLog {
  /** Opens it at its end: what is already there is skipped. */
  abstract open(): Promise<void>;
  /** The records written since the last read (none when nothing new). */
  abstract readNew(): Promise<string[]>;
  abstract close(): Promise<void>;
}

export const SYSTEM_OOM_EVENT = 'SystemOOM';
/** How often the kernel log is read for new records. */
export const OOM_POLL_PERIOD_MS = 1000;

/** realWatcher: the parser on the kernel log, a Node event per system OOM. */
export class OomWatcher {
  private readonly parser = new OomParser();
  private timer?: Timer;
  private running = false;
  private opened = false;

  constructor(
    private readonly log: KernelLog,
    private readonly events: EventRecorder,
    private readonly clock: Clock,
    private readonly logger: Logger,
    private readonly pollPeriodMs = OOM_POLL_PERIOD_MS,
  ) {}

  /** Start: the kernel log from its end; an unreadable one is logged, and the watcher stays off (as upstream's NewWatcher failing). */
  async start(): Promise<void> {
    if (this.running) return;
    this.running = true;
    try {
      await this.log.open();
      this.opened = true;
    } catch (err) {
      this.running = false;
      this.logger.warn({ err: (err as Error).message }, 'OOM watcher: cannot read the kernel log; system OOMs are not reported');
      return;
    }
    this.schedule();
  }

  async stop(): Promise<void> {
    this.running = false;
    this.timer?.cancel();
    this.timer = undefined;
    if (this.opened) {
      this.opened = false;
      await this.log.close().catch(() => undefined);
    }
  }

  /** Reads what the kernel logged since the last poll and records the system OOMs in it. */
  async poll(): Promise<OomInstance[]> {
    const found: OomInstance[] = [];
    for (const record of await this.log.readNew()) {
      const oom = this.parser.feed(kmsgMessage(record));
      if (!oom) continue;
      found.push(oom);
      if (oom.victimContainerName !== '/') continue;
      this.logger.info({ pid: oom.pid, process: oom.processName }, 'Got sys oom event');
      this.events.nodeEvent('Warning', SYSTEM_OOM_EVENT, systemOOMMessage(oom));
    }
    return found;
  }

  private schedule(): void {
    if (!this.running) return;
    this.timer = this.clock.setTimer(this.pollPeriodMs, () => {
      void this.poll()
        .catch((err: unknown) => this.logger.warn({ err: (err as Error).message }, 'OOM watcher: reading the kernel log failed'))
        .finally(() => this.schedule());
    });
  }
}
