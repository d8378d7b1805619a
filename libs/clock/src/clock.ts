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
