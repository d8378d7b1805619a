/**
 * GetContainerEvents relayed to `cri.<node>.events` for an evented PLEG.
 * containerd 1.6 (Debian 12) does not implement it: the relay then says
 * "unsupported by this runtime" (in /readyz and /info) and asks again only
 * rarely, in case the runtime was upgraded underneath. Other stream errors
 * are retried with a backoff.
 */
import { Clock } from '@app/clock';
import { Subjects } from '@app/contracts';
import { CriError } from '@app/cri';
import type { NatsBus } from '@app/nats';
import type { Logger } from '@app/observability';
import type { CheckResult } from '@app/service';
import { RuntimeConnection } from './runtime-connection.js';

export type RelayState = 'starting' | 'streaming' | 'unsupported' | 'reconnecting' | 'stopped';

export const UNSUPPORTED_RETRY_MS = 5 * 60_000;

export class ContainerEventsRelay {
  private stateValue: RelayState = 'starting';
  private detail = '';
  private relayed = 0;
  private readonly abort = new AbortController();
  private loop?: Promise<void>;
  private cancelStream?: () => void;

  constructor(
    private readonly connection: RuntimeConnection,
    private readonly bus: Pick<NatsBus, 'publish'>,
    private readonly node: string,
    private readonly clock: Clock,
    private readonly logger: Logger,
  ) {}

  get state(): RelayState {
    return this.stateValue;
  }

  /** Shown in /readyz; never makes the gateway unready (the generic PLEG does not need events). */
  report(): CheckResult {
    switch (this.stateValue) {
      case 'unsupported':
        return { ok: true, detail: `GetContainerEvents unsupported by this runtime (${this.detail}); PLEG relists instead` };
      case 'streaming':
        return { ok: true, detail: `relaying to ${Subjects.criEvents.build(this.node)} (${this.relayed} events)` };
      case 'starting':
      case 'reconnecting':
      case 'stopped':
        return { ok: true, detail: `${this.stateValue}${this.detail ? `: ${this.detail}` : ''}` };
    }
  }

  start(): void {
    this.loop ??= this.run();
  }

  async stop(): Promise<void> {
    this.abort.abort();
    this.cancelStream?.();
    await this.loop;
    this.stateValue = 'stopped';
  }

  private async run(): Promise<void> {
    let backoff = 1000;
    const subject = Subjects.criEvents.build(this.node);
    while (!this.abort.signal.aborted) {
      const stream = this.connection.containerEvents((event) => {
        if (this.stateValue !== 'streaming') {
          this.stateValue = 'streaming';
          backoff = 1000;
        }
        this.relayed++;
        this.bus.publish(subject, event, event.podSandboxStatus?.metadata?.uid ? { podUid: event.podSandboxStatus.metadata.uid } : {});
      });
      this.cancelStream = () => stream.cancel();
      let wait: number;
      try {
        await stream.done;
        this.detail = 'the stream ended';
        this.stateValue = 'reconnecting';
        wait = backoff;
      } catch (err) {
        if (this.abort.signal.aborted) return;
        const e = err instanceof CriError ? err : new CriError('Unknown', String(err));
        if (e.code === 'Unimplemented') {
          if (this.stateValue !== 'unsupported') {
            this.logger.warn({ err: e.description }, 'GetContainerEvents unsupported by this runtime; the PLEG will relist');
          }
          this.stateValue = 'unsupported';
          this.detail = e.description;
          wait = UNSUPPORTED_RETRY_MS;
        } else {
          if (this.stateValue !== 'reconnecting') this.logger.warn({ code: e.code, err: e.description }, 'container event stream failed; reconnecting');
          this.stateValue = 'reconnecting';
          this.detail = `${e.code}: ${e.description}`;
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
