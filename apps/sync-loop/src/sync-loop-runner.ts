import { Clock, type Timer } from '@app/clock';
import { MessageError } from '@app/contracts';
import type { Logger } from '@app/observability';
import type { SyncLoop } from './sync-loop.js';

/**
 * Runs every handler and tick one at a time, like the kubelet's single
 * syncLoop goroutine, and only while this instance leads: a standby drops
 * what it is given, and its ticks do not run.
 */
export class SyncLoopRunner {
  private chain: Promise<void> = Promise.resolve();
  private timers: Timer[] = [];
  private stopped = false;
  private active = false;
  /** Counts terms, so that a tick of an earlier term stops. */
  private term = 0;
  /** what -> the last error logged for it, so a lasting failure is logged once, not every tick. */
  private readonly lastError = new Map<string, string>();
  restored = false;

  constructor(
    readonly loop: SyncLoop,
    private readonly clock: Clock,
    private readonly logger: Logger,
  ) {}

  /** Whether this instance leads: handlers run and ticks tick. */
  get isActive(): boolean {
    return this.active && !this.stopped;
  }

  /** Leadership won: handlers run from now on (queue the restore first); start the ticks with `every`. */
  activate(): void {
    this.active = true;
    this.term++;
  }

  /** Leadership lost: nothing more runs, not even what is queued; the ticks stop. */
  deactivate(): void {
    this.active = false;
    this.restored = false;
    for (const t of this.timers.splice(0)) t.cancel();
  }

  /** Queues `fn` behind whatever is running; errors are logged, never thrown. Dropped unless active. */
  run(what: string, fn: () => unknown): Promise<void> {
    this.chain = this.chain.then(async () => {
      if (this.stopped || !this.active) return;
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

  /** Runs `fn` every `periodMs` for the rest of the current term. */
  every(what: string, periodMs: number, fn: () => Promise<unknown>): void {
    const term = this.term;
    const live = () => this.isActive && this.term === term;
    const tick = () => {
      if (!live()) return;
      void this.run(what, fn).then(() => {
        if (live()) this.timers.push(this.clock.setTimer(periodMs, tick));
      });
    };
    if (live()) this.timers.push(this.clock.setTimer(periodMs, tick));
  }

  async stop(): Promise<void> {
    this.stopped = true;
    for (const t of this.timers) t.cancel();
    await this.chain;
  }
}
