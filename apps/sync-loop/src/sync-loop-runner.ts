import { Clock, type Timer } from '@app/clock';
import { MessageError } from '@app/contracts';
import type { Logger } from '@app/observability';
import type { SyncLoop } from './sync-loop.js';

/** syncLoop's back-off while the runtime or the PLEG is unhealthy: 100ms, doubling, at most 5s. */
export const GATE_BACKOFF = { baseMs: 100, maxMs: 5000 } as const;

/**
 * Runs every handler and tick one at a time, like the kubelet's single
 * syncLoop goroutine, and only while this instance leads: a standby drops
 * what it is given, and its ticks do not run.
 *
 * Upstream's syncLoop skips whole iterations while runtimeState.runtimeErrors()
 * says the runtime or the PLEG is unhealthy. Here only the gated ticks
 * (syncCh, housekeeping) wait behind `tickGate`, backing off as upstream
 * does: the config, PLEG, probe and work-done messages, and the periodic
 * reconciliation with the config sources, are still taken in, so that
 * nothing sent meanwhile is lost, and their syncs fail and back off in the
 * pod workers while the runtime is away.
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
  /** Why the ticks must wait (RuntimeState.runtimeErrors), or undefined when they need not. */
  tickGate?: () => string | undefined;
  /** The gate's current back-off per tick. */
  private readonly gateBackoff = new Map<string, number>();
  private gateError?: string;

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
        this.failed(what, err);
      }
    });
    return this.chain;
  }

  /**
   * Queues `fn` as run does, but its error rejects the promise returned (and is not logged here: the caller says
   * what it means); the chain goes on. Resolves without running `fn` unless active.
   */
  attempt(what: string, fn: () => unknown): Promise<void> {
    let failure: { err: unknown } | undefined;
    return this.run(what, async () => {
      try {
        await fn();
      } catch (err) {
        failure = { err };
      }
    }).then(() => {
      if (failure) throw failure.err;
    });
  }

  /** A step's error: logged (a lasting one once, until it changes), never thrown. */
  private failed(what: string, err: unknown): void {
    const message = (err as Error).message;
    if (err instanceof MessageError) this.logger.warn({ what, err: message }, 'dropped a malformed message');
    else if (this.lastError.get(what) !== message) this.logger.error({ what, err: message }, 'sync loop step failed (logged again only if the error changes)');
    if (!(err instanceof MessageError)) this.lastError.set(what, message);
  }

  /**
   * Runs `fn` every `periodMs` (after the previous run ends) for the rest of the current term; a `gated` tick waits
   * behind `tickGate`. With `prepare`, each tick first runs `prepare` off the chain (its slow reads, which must not
   * hold up the loop's handlers), then queues `fn` with its result; a `prepare` that throws is logged as a failed step.
   */
  every<T = void>(what: string, periodMs: number, fn: (prepared: T) => Promise<unknown>, opts: { gated?: boolean; prepare?: () => Promise<T> } = {}): void {
    const term = this.term;
    const live = () => this.isActive && this.term === term;
    const tick = () => {
      if (!live()) return;
      const wait = opts.gated ? this.gated(what) : undefined;
      if (wait !== undefined) {
        this.timers.push(this.clock.setTimer(wait, tick));
        return;
      }
      const { prepare } = opts;
      const step = prepare
        ? prepare().then(
            (prepared) => (live() ? this.run(what, () => fn(prepared)) : undefined),
            (err: unknown) => this.failed(what, err),
          )
        : this.run(what, () => fn(undefined as T));
      void step.then(() => {
        if (live()) this.timers.push(this.clock.setTimer(periodMs, tick));
      });
    };
    if (live()) this.timers.push(this.clock.setTimer(periodMs, tick));
  }

  /** The wait before `what` tries again while the gate is shut; undefined when it is open. */
  private gated(what: string): number | undefined {
    const err = this.tickGate?.();
    if (err === undefined) {
      this.gateBackoff.delete(what);
      if (this.gateError !== undefined) this.logger.info('runtime and PLEG healthy: pod synchronization resumes');
      this.gateError = undefined;
      return undefined;
    }
    if (this.gateError === undefined) this.logger.error({ err }, 'Skipping pod synchronization');
    this.gateError = err;
    const wait = this.gateBackoff.get(what) ?? GATE_BACKOFF.baseMs;
    this.gateBackoff.set(what, Math.min(wait * 2, GATE_BACKOFF.maxMs));
    return wait;
  }

  async stop(): Promise<void> {
    this.stopped = true;
    for (const t of this.timers) t.cancel();
    await this.chain;
  }
}
