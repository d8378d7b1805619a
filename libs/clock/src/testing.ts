/** The clock's test double, for unit tests only (the lib's testing door: `@app/clock/testing`). */
import { Clock, type Timer } from './clock.js';

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
