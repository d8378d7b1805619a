/**
 * GetContainerEvents relayed to `cri.<node>.events` for an evented PLEG.
 * containerd 1.6 (Debian 12) does not implement it: the relay then says
 * "unsupported by this runtime" (in /readyz and /info) and asks again only
 * rarely, in case the runtime was upgraded underneath. Other stream errors
 * are retried with a backoff. A stream counts as streaming once it has been
 * open STREAM_SETTLE_MS without an error (containerd sends nothing, not even
 * headers, before its first event). Each stream has its own name in the
 * status, so that a PLEG can tell that events may have been missed between
 * two (a reconnect, a restarted gateway) and relist.
 */
import { Clock, type Timer } from '@app/clock';
import { MessageTypes, Subjects, type ContainerEventsStatusMessage } from '@app/contracts';
import { CriError } from '@app/cri';
import type { NatsBus } from '@app/nats';
import type { Logger } from '@app/observability';
import type { CheckResult } from '@app/service';
import { RuntimeConnection } from './ports.js';

export type RelayState = 'starting' | 'streaming' | 'unsupported' | 'reconnecting' | 'stopped';

export const UNSUPPORTED_RETRY_MS = 5 * 60_000;
/** How often the relay's state is repeated on `cri.<node>.events`. */
export const STATUS_HEARTBEAT_MS = 30_000;
/** How long a new stream must stay open without an error to count as streaming. */
export const STREAM_SETTLE_MS = 1000;

export class ContainerEventsRelay {
  private state_: RelayState = 'starting';
  private heartbeat?: Timer;
  private detail = '';
  private relayed = 0;
  private readonly abort = new AbortController();
  private loop?: Promise<void>;
  private cancelStream?: () => void;
  private streams = 0;
  private stream = '';

  /** `streamPrefix` names this relay's streams (the gateway's instance and start time): unique per process. */
  constructor(
    private readonly connection: RuntimeConnection,
    private readonly bus: Pick<NatsBus, 'publish'>,
    private readonly node: string,
    private readonly clock: Clock,
    private readonly logger: Logger,
    private readonly streamPrefix = 'relay',
  ) {}

  get state(): RelayState {
    return this.state_;
  }

  /** Moves to `s`; a change is published at once. */
  private setState(s: RelayState, detail: string): void {
    const changed = s !== this.state_ || detail !== this.detail;
    this.state_ = s;
    this.detail = detail;
    if (changed) this.publishStatus();
  }

  /** The relay's state, as published on the events subject and answered on request. */
  status(): ContainerEventsStatusMessage {
    return { type: MessageTypes.containerEventsStatus, state: this.state_, detail: this.detail, ...(this.stream ? { stream: this.stream } : {}) };
  }

  /** The relay's state on the events subject, for an evented PLEG. */
  private publishStatus(): void {
    this.bus.publish(Subjects.criEvents.build(this.node), this.status());
  }

  /** Shown in /readyz; never makes the gateway unready (the generic PLEG does not need events). */
  report(): CheckResult {
    switch (this.state_) {
      case 'unsupported':
        return { ok: true, detail: `GetContainerEvents unsupported by this runtime (${this.detail}); PLEG relists instead` };
      case 'streaming':
        return { ok: true, detail: `relaying to ${Subjects.criEvents.build(this.node)} (${this.relayed} events)` };
      case 'starting':
      case 'reconnecting':
      case 'stopped':
        return { ok: true, detail: `${this.state_}${this.detail ? `: ${this.detail}` : ''}` };
    }
  }

  start(): void {
    this.loop ??= this.run();
    const beat = () => {
      this.publishStatus();
      this.heartbeat = this.clock.setTimer(STATUS_HEARTBEAT_MS, beat);
    };
    this.heartbeat = this.clock.setTimer(STATUS_HEARTBEAT_MS, beat);
  }

  async stop(): Promise<void> {
    this.heartbeat?.cancel();
    this.abort.abort();
    this.cancelStream?.();
    await this.loop;
    this.setState('stopped', '');
  }

  private async run(): Promise<void> {
    let backoff = 1000;
    const subject = Subjects.criEvents.build(this.node);
    while (!this.abort.signal.aborted) {
      const streaming = () => {
        if (this.state_ === 'streaming') return;
        this.setState('streaming', '');
        backoff = 1000;
      };
      this.stream = `${this.streamPrefix}-${++this.streams}`;
      const stream = this.connection.containerEvents((event) => {
        streaming();
        this.relayed++;
        this.bus.publish(subject, event, event.podSandboxStatus?.metadata?.uid ? { podUid: event.podSandboxStatus.metadata.uid } : {});
      });
      this.cancelStream = () => stream.cancel();
      const settled = this.clock.setTimer(STREAM_SETTLE_MS, streaming);
      let wait: number;
      try {
        await stream.done.finally(() => settled.cancel());
        this.setState('reconnecting', 'the stream ended');
        wait = backoff;
      } catch (err) {
        if (this.abort.signal.aborted) return;
        const e = err instanceof CriError ? err : new CriError('Unknown', String(err));
        if (e.code === 'Unimplemented') {
          if (this.state_ !== 'unsupported') {
            this.logger.warn({ err: e.description }, 'GetContainerEvents unsupported by this runtime; the PLEG will relist');
          }
          this.setState('unsupported', e.description);
          wait = UNSUPPORTED_RETRY_MS;
        } else {
          if (this.state_ !== 'reconnecting') this.logger.warn({ code: e.code, err: e.description }, 'container event stream failed; reconnecting');
          this.setState('reconnecting', `${e.code}: ${e.description}`);
          wait = backoff;
          backoff = Math.min(backoff * 2, 30_000);
        }
      }
      try {
        await this.clock.sleep(wait, this.abort.signal);
      } catch {
        return;
      }
    }
  }
}
