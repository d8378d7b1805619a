import { Clock, type Timer } from '@app/clock';
import { MessageError } from '@app/contracts';
import type { Logger } from '@app/observability';
import type { SyncLoop } from './sync-loop.js';

/** Runs every handler and tick one at a time, like the kubelet's single syncLoop goroutine. */
export class SyncLoopRunner {
  private chain: Promise<void> = Promise.resolve();
  private timers: Timer[] = [];
  private stopped = false;
  /** what -> the last error logged for it, so a lasting failure is logged once, not every tick. */
  private readonly lastError = new Map<string, string>();
  restored = false;

  constructor(
    readonly loop: SyncLoop,
    private readonly clock: Clock,
    private readonly logger: Logger,
  ) {}

  /** Queues `fn` behind whatever is running; errors are logged, never thrown. */
  run(what: string, fn: () => unknown): Promise<void> {
    this.chain = this.chain.then(async () => {
      if (this.stopped) return;
      try {
        await fn();
        if (this.lastError.delete(what)) this.logger.info({ what }, 'sync loop step works again');
      } catch (err) {
        const message = (err as Error).message;
        if (err instanceof MessageError) this.logger.warn({ what, err: message }, 'dropped a malformed message');
        else if (this.lastError.get(what) !== message) this.logger.error({ what, err: message }, 'sync loop step failed (logged again only if the error changes)');
        if (!(err instanceof MessageError)) this.lastError.set(what, message);
      }
    });
    return this.chain;
  }

  every(what: string, periodMs: number, fn: () => Promise<unknown>): void {
    const tick = () => {
      if (this.stopped) return;
      void this.run(what, fn).then(() => {
        if (!this.stopped) this.timers.push(this.clock.setTimer(periodMs, tick));
      });
    };
    this.timers.push(this.clock.setTimer(periodMs, tick));
  }

  async stop(): Promise<void> {
    this.stopped = true;
    for (const t of this.timers) t.cancel();
    await this.chain;
  }
}
