/**
 * The PLEG's two modes and the switch between them.
 *  - generic: relist every RELIST_PERIOD (1s);
 *  - evented: the runtime's container events (GetContainerEvents, relayed
 *    by cri-gateway on `cri.<node>.events`) update the cache and send the
 *    events; a relist every EVENTED_RELIST_PERIOD (300s) is the safety net.
 *    When the relay says events do not flow (unsupported, or reconnecting
 *    three times in a row) or says nothing for 90s, it falls back to
 *    generic by itself.
 * The mode can be switched while running. Cache timestamps come from the
 * PLEG's own monotonic clock in both modes, never from the runtime's
 * events, so a pod worker never sees the cache go back in time
 * (kubernetes#121003, #123087).
 */
import { Clock, type Timer } from '@app/clock';
import { MessageTypes, type ContainerEventsStatusMessage, type InspectPodMessage, type PodLifecycleEventMessage, type PodLifecycleEventType } from '@app/contracts';
import type { ContainerEventResponse } from '@app/cri';
import { currentTrace, nextSpan, runInTrace } from '@app/tracing';
import type { Logger } from '@app/observability';
import type { GenericPleg } from './generic-pleg.js';
import { PlegEventSink } from './ports.js';

export type PlegMode = 'generic' | 'evented';

export interface PlegRunnerOptions {
  relistPeriodMs: number;
  eventedRelistPeriodMs: number;
  /** Silence from the relay after which evented mode gives up. */
  eventedSilenceMs: number;
}

/** How often evented mode checks that the relay still speaks. */
const EVENTED_CHECK_MS = 10_000;

const EVENT_TYPES: Partial<Record<string, PodLifecycleEventType>> = {
  CONTAINER_STARTED_EVENT: 'ContainerStarted',
  CONTAINER_STOPPED_EVENT: 'ContainerDied',
  CONTAINER_DELETED_EVENT: 'ContainerRemoved',
};

/** What the PLEG's modes work with. */
export interface PlegRunnerDeps {
  pleg: GenericPleg;
  sink: PlegEventSink;
  clock: Clock;
  logger: Logger;
  /** Asks cri-gateway how its event relay is doing; undefined when it does not answer. Default: it never answers. */
  askRelay?: () => Promise<ContainerEventsStatusMessage | undefined>;
}

export class PlegRunner {
  private desired: PlegMode;
  private effective: PlegMode = 'generic';
  private fallbackReason = '';
  private timer?: Timer;
  private stopped = true;
  private badStatuses = 0;
  private lastRelayMessageAt = 0;
  private lastRelistAt?: number;

  private readonly pleg: GenericPleg;
  private readonly sink: PlegEventSink;
  private readonly clock: Clock;
  private readonly logger: Logger;
  private readonly askRelay: () => Promise<ContainerEventsStatusMessage | undefined>;

  constructor(
    deps: PlegRunnerDeps,
    private readonly options: PlegRunnerOptions,
    mode: PlegMode,
  ) {
    ({ pleg: this.pleg, sink: this.sink, clock: this.clock, logger: this.logger, askRelay: this.askRelay = () => Promise.resolve(undefined) } = deps);
    this.desired = mode;
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
    this.badStatuses = 0;
    this.lastRelayMessageAt = this.clock.now();
    this.lastRelistAt = undefined; // relist at once in the new mode
    this.pleg.relistPeriodChanged(mode === 'evented' ? this.options.eventedRelistPeriodMs : this.options.relistPeriodMs);
    this.logger.info({ mode, why }, 'PLEG mode');
    this.schedule(0);
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
    if (this.effective !== 'evented') return;
    if (s.state === 'streaming') {
      this.badStatuses = 0;
      return;
    }
    if (s.state === 'unsupported') this.fallBack(`the runtime does not stream container events: ${s.detail}`);
    else if (s.state === 'reconnecting' && ++this.badStatuses >= 3) this.fallBack(`the container event stream keeps failing: ${s.detail}`);
  }

  private async onContainerEvent(e: ContainerEventResponse): Promise<void> {
    const sandbox = e.podSandboxStatus;
    const uid = sandbox?.metadata?.uid;
    if (!sandbox || !uid) return;
    // The cache write and the event are hops of this pod (in the relay message's trace, when it carried one).
    await runInTrace({ ...(currentTrace() ?? { trace: nextSpan() }), podUid: uid }, () => this.applyContainerEvent(e, sandbox, uid));
  }

  private async applyContainerEvent(e: ContainerEventResponse, sandbox: NonNullable<ContainerEventResponse['podSandboxStatus']>, uid: string): Promise<void> {
    const entry = {
      uid,
      name: sandbox.metadata?.name ?? '',
      namespace: sandbox.metadata?.namespace ?? '',
      timestamp: this.pleg.nextTimestamp(),
      sandboxStatuses: [sandbox],
      containerStatuses: e.containersStatuses,
      ips: sandbox.network?.ip ? [sandbox.network.ip] : [],
    };
    const written =
      e.containerEventType === 'CONTAINER_DELETED_EVENT' && e.containerId === sandbox.id ? await this.pleg.forget(uid, entry.timestamp) : await this.pleg.observe(entry);
    const type = EVENT_TYPES[e.containerEventType];
    if (written && type) {
      const event: PodLifecycleEventMessage = { type: MessageTypes.podLifecycleEvent, id: uid, eventType: type, data: e.containerId };
      this.sink.publish(event);
    }
  }

  private fallBack(reason: string): void {
    if (this.effective === 'generic') return;
    this.logger.warn({ reason }, 'evented PLEG falls back to the generic relist');
    this.effective = 'generic';
    this.fallbackReason = reason;
    this.lastRelistAt = undefined;
    this.pleg.relistPeriodChanged(this.options.relistPeriodMs);
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
    const now = this.clock.now();
    const period = this.effective === 'evented' ? this.options.eventedRelistPeriodMs : this.options.relistPeriodMs;
    if (this.lastRelistAt === undefined || now - this.lastRelistAt >= period) {
      this.lastRelistAt = now;
      try {
        await this.pleg.relist();
      } catch (err) {
        this.logger.warn({ err: (err as Error).message }, 'PLEG relist failed');
      }
    }
    // In evented mode, wake up often enough to notice a silent relay.
    this.schedule(this.effective === 'evented' ? Math.min(period, EVENTED_CHECK_MS) : period);
  }
}

function isStatus(m: unknown): m is ContainerEventsStatusMessage {
  return typeof m === 'object' && m !== null && (m as { type?: unknown }).type === MessageTypes.containerEventsStatus;
}
