/**
 * The PLEG's two modes and the switch between them.
 *  - generic: relist every RELIST_PERIOD (1s);
 *  - evented: the runtime's container events (GetContainerEvents, relayed
 *    by cri-gateway on `cri.<node>.events`) each make the PLEG inspect that
 *    pod at once; a relist every EVENTED_RELIST_PERIOD (300s) is the safety
 *    net (KEP-3386).
 * An event is a hint, not a state: the pod is read from the runtime after
 * the event arrived and written with the same monotonic writer as an
 * immediate inspection, stamped with the PLEG's own clock, never the
 * runtime's. So an event for an older state that arrives after a newer
 * inspection cannot move the cache back, and a pod worker never sees it go
 * back in time (docs/adr/0040, kubernetes#121003, #123087).
 * Evented mode falls back to the 1s relist at once, and says so (the log,
 * `mode`, the PlegModeReporter: metrics and an event on the Node), when the
 * relay says its stream broke, is not offered or stopped, when it says
 * nothing for 90s, or when events arrive more than eventedLagMs after the
 * runtime made them. It returns to events, with a relist at once, once the
 * relay has said it streams for eventedReturnAfterMs (doubling with each
 * fallback soon after a return, up to 5 minutes). A new stream (a reconnect,
 * a restarted cri-gateway) seen while evented means events may have been
 * missed between the two: a relist at once.
 */
import { Clock, type Timer } from '@app/clock';
import { MessageTypes, type ContainerEventsStatusMessage, type InspectPodMessage } from '@app/contracts';
import type { ContainerEventResponse } from '@app/cri';
import { currentTrace, nextSpan, runInTrace } from '@app/tracing';
import type { Logger } from '@app/observability';
import type { GenericPleg } from './generic-pleg.js';
import type { PlegModeReporter } from './ports.js';

export type PlegMode = 'generic' | 'evented';

export interface PlegRunnerOptions {
  relistPeriodMs: number;
  eventedRelistPeriodMs: number;
  /** Silence from the relay after which evented mode gives up. */
  eventedSilenceMs: number;
  /** An event arriving later than this after the runtime made it: the stream lags, and evented mode falls back. Default 10s. */
  eventedLagMs?: number;
  /** After a fallback, how long the relay must say it streams before events are used again. Default 30s. */
  eventedReturnAfterMs?: number;
}

const DEFAULT_LAG_MS = 10_000;
const DEFAULT_RETURN_AFTER_MS = 30_000;
/** The longest wait before events are used again, however often they failed. */
const MAX_RETURN_AFTER_MS = 300_000;
/** A fallback this long after a return starts the doubling of the wait over. */
const STABLE_MS = 300_000;

/** How often evented mode checks that the relay still speaks. */
const EVENTED_CHECK_MS = 10_000;

/** What the PLEG's modes work with. */
export interface PlegRunnerDeps {
  pleg: GenericPleg;
  clock: Clock;
  logger: Logger;
  /** Asks cri-gateway how its event relay is doing; undefined when it does not answer. Default: it never answers. */
  askRelay?: () => Promise<ContainerEventsStatusMessage | undefined>;
  /** Told of each fallback and return, and of events' latency. Default: nobody. */
  reporter?: PlegModeReporter;
}

const NO_REPORTER: PlegModeReporter = { connected: () => undefined, fellBack: () => undefined, latency: () => undefined };

export class PlegRunner {
  private desired: PlegMode;
  private effective: PlegMode = 'generic';
  private fallbackReason = '';
  private timer?: Timer;
  private stopped = true;
  private lastRelayMessageAt = 0;
  private lastRelistAt?: number;
  /** The last relist failed: the next comes at the generic period, whatever the mode. */
  private relistFailing = false;
  /** The relay's stream last heard of (ContainerEventsStatusMessage.stream). */
  private relayStream?: string;
  /** Since when the relay has said it streams, while fallen back; undefined once it says otherwise. */
  private streamingSince?: number;
  private lastReturnAt?: number;
  private fallbacksInARow = 0;
  /** Pods being inspected for an event, and whether another event for the pod came meanwhile. */
  private readonly inspecting = new Map<string, { again: boolean }>();

  private readonly pleg: GenericPleg;
  private readonly clock: Clock;
  private readonly logger: Logger;
  private readonly askRelay: () => Promise<ContainerEventsStatusMessage | undefined>;
  private readonly reporter: PlegModeReporter;
  private readonly lagMs: number;
  private readonly returnAfterMs: number;

  constructor(
    deps: PlegRunnerDeps,
    private readonly options: PlegRunnerOptions,
    mode: PlegMode,
  ) {
    ({ pleg: this.pleg, clock: this.clock, logger: this.logger, askRelay: this.askRelay = () => Promise.resolve(undefined), reporter: this.reporter = NO_REPORTER } = deps);
    this.desired = mode;
    this.lagMs = options.eventedLagMs ?? DEFAULT_LAG_MS;
    this.returnAfterMs = options.eventedReturnAfterMs ?? DEFAULT_RETURN_AFTER_MS;
  }

  get mode(): { desired: PlegMode; effective: PlegMode; fallbackReason?: string } {
    return { desired: this.desired, effective: this.effective, ...(this.fallbackReason ? { fallbackReason: this.fallbackReason } : {}) };
  }

  start(): void {
    this.stopped = false;
    this.setMode(this.desired, 'start');
  }

  stop(): void {
    this.stopped = true;
    this.timer?.cancel();
  }

  /** Switches mode now (a command over NATS or HTTP); evented mode may fall back by itself later. */
  setMode(mode: PlegMode, why = 'requested'): void {
    this.desired = mode;
    this.effective = mode;
    this.fallbackReason = '';
    this.streamingSince = undefined;
    this.fallbacksInARow = 0;
    this.lastRelayMessageAt = this.clock.now();
    this.lastRelistAt = undefined; // relist at once in the new mode
    this.pleg.relistPeriodChanged(mode === 'evented' ? this.options.eventedRelistPeriodMs : this.options.relistPeriodMs);
    this.logger.info({ mode, why }, 'PLEG mode');
    this.schedule(0);
    if (mode === 'evented') this.reporter.connected(false);
    // Evented mode on a runtime that does not stream events falls back at once, not at the relay's next heartbeat.
    if (mode === 'evented') {
      void this.askRelay().then(
        (s) => s && this.onRelayStatus(s),
        () => undefined,
      );
    }
  }

  /** A message on `cri.<node>.events`: a container event, or the relay's status. Ignored while stopped (a standby). */
  async onRuntimeMessage(msg: unknown): Promise<void> {
    if (this.stopped) return;
    this.lastRelayMessageAt = this.clock.now();
    if (isStatus(msg)) {
      this.onRelayStatus(msg);
      return;
    }
    if (this.effective !== 'evented') return;
    await this.onContainerEvent(msg as ContainerEventResponse);
  }

  /**
   * `kubelet.<node>.pleg.inspect.<uid>`: a pod worker changed the pod in the
   * runtime; it is inspected now, in either mode. Ignored while stopped (a
   * standby). A failure waits for the next relist, the safety net.
   */
  async onInspectRequest(m: InspectPodMessage): Promise<void> {
    if (this.stopped) return;
    try {
      await this.pleg.inspectPod(m.podUid, m.syncEnd);
    } catch (err) {
      this.logger.warn({ uid: m.podUid, err: (err as Error).message }, 'PLEG: the inspection a pod worker asked for failed; the next relist will see the pod');
    }
  }

  private onRelayStatus(s: ContainerEventsStatusMessage): void {
    if (this.desired !== 'evented') return;
    const newStream = s.stream !== undefined && this.relayStream !== undefined && s.stream !== this.relayStream;
    if (s.stream !== undefined) this.relayStream = s.stream;
    switch (s.state) {
      case 'streaming':
        if (this.effective === 'generic') {
          this.streamingSince ??= this.clock.now();
        } else if (newStream) {
          // A stream this PLEG did not see open: what happened between the two was never relayed.
          this.logger.info({ stream: s.stream }, 'a new container event stream: relisting now for what the last one missed');
          this.relistNow();
        }
        return;
      case 'starting':
        return;
      case 'unsupported':
        this.streamingSince = undefined;
        this.fallBack(`the runtime does not stream container events: ${s.detail}`, false);
        return;
      case 'reconnecting':
      case 'stopped':
        this.streamingSince = undefined;
        this.fallBack(`the container event stream ${s.state === 'stopped' ? 'stopped (cri-gateway shutting down)' : `broke: ${s.detail}`}`);
        return;
    }
  }

  private async onContainerEvent(e: ContainerEventResponse): Promise<void> {
    const uid = e.podSandboxStatus?.metadata?.uid;
    if (!uid) return;
    const madeAt = runtimeTimeMs(e.createdAt);
    if (madeAt !== undefined) {
      const lag = this.clock.now() - madeAt;
      this.reporter.latency(Math.max(0, lag) / 1000);
      if (lag > this.lagMs) {
        this.fallBack(`container events arrive ${Math.round(lag / 1000)}s after the runtime made them (more than ${Math.round(this.lagMs / 1000)}s)`);
        return;
      }
    }
    // The inspection, its cache write and its events are hops of this pod (in the relay message's trace, when it carried one).
    await runInTrace({ ...(currentTrace() ?? { trace: nextSpan() }), podUid: uid }, () => this.inspectForEvent(uid));
  }

  /**
   * The pod read from the runtime now (inspectPod: the same monotonic writer
   * and the same events as an immediate inspection). Events for a pod being
   * inspected are folded into one more inspection after it, so a burst costs
   * two reads and the last read is after the last event.
   */
  private async inspectForEvent(uid: string): Promise<void> {
    const running = this.inspecting.get(uid);
    if (running) {
      running.again = true;
      return;
    }
    const state = { again: true };
    this.inspecting.set(uid, state);
    try {
      while (state.again && this.effective === 'evented' && !this.stopped) {
        state.again = false;
        try {
          await this.pleg.inspectPod(uid);
        } catch (err) {
          this.logger.warn({ uid, err: (err as Error).message }, 'PLEG: the inspection a container event asked for failed; the next relist will see the pod');
        }
      }
    } finally {
      this.inspecting.delete(uid);
    }
  }

  private fallBack(reason: string, fault = true): void {
    if (this.effective === 'generic') return;
    const now = this.clock.now();
    this.fallbacksInARow = this.lastReturnAt !== undefined && now - this.lastReturnAt < STABLE_MS ? this.fallbacksInARow + 1 : 1;
    this.logger.warn({ reason, retryAfterMs: this.returnWaitMs() }, 'evented PLEG falls back to the generic relist');
    this.effective = 'generic';
    this.fallbackReason = reason;
    this.streamingSince = undefined;
    this.pleg.relistPeriodChanged(this.options.relistPeriodMs);
    this.reporter.fellBack(reason, fault);
    this.relistNow();
  }

  /** Events flow again: used again, with a relist at once for what happened while they did not. */
  private resume(): void {
    const was = this.fallbackReason;
    this.effective = 'evented';
    this.fallbackReason = '';
    this.streamingSince = undefined;
    this.lastReturnAt = this.clock.now();
    this.pleg.relistPeriodChanged(this.options.eventedRelistPeriodMs);
    this.logger.info({ after: was }, 'evented PLEG uses the container events again');
    this.reporter.connected(true);
    this.relistNow();
  }

  /** How long the relay must stream before events are used again: doubled for each fallback soon after a return. */
  private returnWaitMs(): number {
    return Math.min(this.returnAfterMs * 2 ** Math.max(0, this.fallbacksInARow - 1), MAX_RETURN_AFTER_MS);
  }

  private relistNow(): void {
    this.lastRelistAt = undefined;
    this.schedule(0);
  }

  private schedule(ms: number): void {
    this.timer?.cancel();
    if (this.stopped) return;
    this.timer = this.clock.setTimer(ms, () => void this.tick());
  }

  private async tick(): Promise<void> {
    if (this.stopped) return;
    if (this.effective === 'evented' && this.clock.now() - this.lastRelayMessageAt > this.options.eventedSilenceMs) {
      this.fallBack(`no word from the container event relay for ${Math.round(this.options.eventedSilenceMs / 1000)}s`);
    }
    if (this.desired === 'evented' && this.effective === 'generic' && this.streamingSince !== undefined && this.clock.now() - this.streamingSince >= this.returnWaitMs()) {
      this.resume();
    }
    const now = this.clock.now();
    const period = this.effective === 'evented' && !this.relistFailing ? this.options.eventedRelistPeriodMs : this.options.relistPeriodMs;
    if (this.lastRelistAt === undefined || now - this.lastRelistAt >= period) {
      this.lastRelistAt = now;
      try {
        await this.pleg.relist();
        this.relistFailing = false;
      } catch (err) {
        // Retried at the generic period in either mode, not 5 minutes later: until one succeeds the cache has no time,
        // the sync loop's gate stays shut (a PLEG started before cri-gateway answers) and no heartbeat is written.
        this.relistFailing = true;
        this.logger.warn({ err: (err as Error).message }, 'PLEG relist failed');
      }
    } else if (this.effective === 'evented') {
      // Between evented mode's rare relists, a sign of life for the sync loop's gate (a relist is one).
      await this.pleg.heartbeat().catch((err: Error) => this.logger.warn({ err: err.message }, 'PLEG: the heartbeat could not be written to the pod cache'));
    }
    // The mode may have changed during the relist (a fallback while it ran): the next wake-up is the mode's now.
    // In evented mode, often enough to notice a silent relay and to show it is alive.
    this.schedule(this.effective === 'evented' && !this.relistFailing ? Math.min(this.options.eventedRelistPeriodMs, EVENTED_CHECK_MS, this.pleg.heartbeatPeriodMs) : this.options.relistPeriodMs);
  }
}

/** The runtime's event time (nanoseconds since the epoch, as a decimal string) in milliseconds; undefined when absent or not a time. */
function runtimeTimeMs(createdAt: string | undefined): number | undefined {
  if (!createdAt || createdAt === '0') return undefined;
  try {
    const ms = Number(BigInt(createdAt) / 1_000_000n);
    return ms > 0 ? ms : undefined;
  } catch {
    return undefined;
  }
}

function isStatus(m: unknown): m is ContainerEventsStatusMessage {
  return typeof m === 'object' && m !== null && (m as { type?: unknown }).type === MessageTypes.containerEventsStatus;
}
