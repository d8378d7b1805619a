/**
 * Time, injected (STYLE.md 4): domain code asks a Clock for the time and
 * for timers, so tests drive backoffs, periods and deadlines with
 * `FakeClock.step()` instead of waiting.
 */

/** A timer that can be cancelled; cancelling a fired timer does nothing. */
export interface Timer {
  cancel(): void;
}

export abstract class Clock {
  /** Milliseconds since the epoch. */
  abstract now(): number;
  /** Calls `fn` once after `ms`. */
  abstract setTimer(ms: number, fn: () => void): Timer;

  /** Resolves after `ms`, or rejects with an AbortError when `signal` aborts. */
  sleep(ms: number, signal?: AbortSignal): Promise<void> {
    return new Promise((resolve, reject) => {
      if (signal?.aborted) {
        reject(abortError());
        return;
      }
      const onAbort = () => {
        timer.cancel();
        reject(abortError());
      };
      const timer = this.setTimer(ms, () => {
        signal?.removeEventListener('abort', onAbort);
        resolve();
      });
      signal?.addEventListener('abort', onAbort, { once: true });
    });
  }

  /** The current time as a Date. */
  date(): Date {
    return new Date(this.now());
  }
}

function abortError(): Error {
  const e = new Error('aborted');
  e.name = 'AbortError';
  return e;
}

/** The real clock. Timers do not keep the process alive. */
export class SystemClock extends Clock {
  now(): number {
    return Date.now();
  }
  setTimer(ms: number, fn: () => void): Timer {
    const t = setTimeout(fn, Math.max(0, ms));
    t.unref();
    return { cancel: () => clearTimeout(t) };
  }
}

interface Pending {
  at: number;
  seq: number;
  fn: () => void;
  cancelled: boolean;
}

/** A clock that only moves when told to; timers fire in order during `step`. */
export class FakeClock extends Clock {
  private current: number;
  private seq = 0;
  private pending: Pending[] = [];

  constructor(start: number = Date.UTC(2026, 0, 1)) {
    super();
    this.current = start;
  }

  now(): number {
    return this.current;
  }

  setTimer(ms: number, fn: () => void): Timer {
    const p: Pending = { at: this.current + Math.max(0, ms), seq: this.seq++, fn, cancelled: false };
    this.pending.push(p);
    return { cancel: () => (p.cancelled = true) };
  }

  /** Timers not yet fired or cancelled. */
  get waiting(): number {
    return this.pending.filter((p) => !p.cancelled).length;
  }

  /**
   * Moves time forward by `ms`, firing due timers in order; between timers
   * it lets pending promise callbacks run, so async code reacts as it would.
   */
  async step(ms: number): Promise<void> {
    const target = this.current + ms;
    for (;;) {
      await flushMicrotasks();
      this.pending = this.pending.filter((p) => !p.cancelled);
      this.pending.sort((a, b) => a.at - b.at || a.seq - b.seq);
      const next = this.pending[0];
      if (!next || next.at > target) break;
      this.pending.shift();
      this.current = Math.max(this.current, next.at);
      next.fn();
    }
    this.current = target;
    await flushMicrotasks();
  }
}

async function flushMicrotasks(): Promise<void> {
  for (let i = 0; i < 10; i++) await new Promise<void>((r) => setImmediate(r));
}
