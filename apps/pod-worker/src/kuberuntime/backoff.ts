/**
 * CrashLoopBackOff: the per-container restart back-off of the kubelet, i.e.
 * client-go util/flowcontrol.Backoff as kubelet.go configures it, and the
 * check kuberuntime_manager.go doBackOff makes before starting a container.
 *
 * One entry per container key (GetStableKey: pod name, namespace, UID,
 * container name and spec hash, so a changed container starts afresh),
 * holding the current delay and when it was last moved (lastUpdate).
 *
 *  - doBackOff, for a container whose newest instance exited at `finishedAt`:
 *    `if IsInBackOffSince(key, finishedAt)` the start is refused with
 *    reason CrashLoopBackOff; otherwise `Next(key, finishedAt)` and the
 *    container starts. So the first crash restarts at once and arms 10s; the
 *    next restart waits 10s after that exit, then 20s, 40s, ... up to max.
 *  - In back-off: `now - finishedAt < delay` (strictly).
 *  - Next: a new or expired entry starts at the initial delay, else the delay
 *    doubles up to the max; lastUpdate becomes now (the moment of the restart).
 *  - Expired (the reset): kubelet.go replaces flowcontrol's "untouched for
 *    2*maxDuration" with `HasExpiredFunc: eventTime - lastUpdate > 600s`
 *    (KEP-4603). eventTime is the exit time and lastUpdate the restart, so
 *    the back-off resets once a container ran for more than 10 minutes
 *    before it exited; idle wall-clock time in between forgives nothing.
 *    `resetAfterMs` is that 600s.
 *  - GC drops entries untouched for more than 2*max (flowcontrol GC, which
 *    the kubelet calls from its housekeeping).
 *
 * Times are ms since the epoch, passed in: no clock is read here.
 */
import type { Container, Pod } from '@app/contracts';
import { hashContainer } from './container-hash.js';

/** The waiting reason of a container whose restart is backing off (kubecontainer.ErrCrashLoopBackOff). */
export const CRASH_LOOP_BACK_OFF_REASON = 'CrashLoopBackOff';
/** The kubelet's defaults: initialCrashLoopBackOff 10s, MaxContainerBackOff 300s. */
export const DEFAULT_CRASH_LOOP_BACK_OFF = { initialMs: 10_000, maxMs: 300_000, resetAfterMs: 600_000 } as const;

interface Entry {
  delayMs: number;
  lastUpdate: number;
}

export interface BackOffCheck {
  backingOff: boolean;
  /** How much longer the restart must wait (0 when not backing off). */
  remainingMs: number;
  /** `back-off 20s restarting failed container=<name> pod=<name>_<ns>(<uid>)`, the container's waiting message. */
  message?: string;
  /** CrashLoopBackOff, the container's waiting reason, when backing off. */
  reason?: typeof CRASH_LOOP_BACK_OFF_REASON;
}

export class CrashLoopBackOff {
  private readonly initialMs: number;
  private readonly maxMs: number;
  private readonly resetAfterMs: number;
  private readonly entries = new Map<string, Entry>();

  constructor(opts: { initialMs: number; maxMs: number; resetAfterMs?: number }) {
    if (!(opts.initialMs > 0) || !(opts.maxMs > 0)) throw new RangeError('CrashLoopBackOff: initialMs and maxMs must be positive');
    // kubelet.go (KubeletCrashLoopBackOffMax): a max below the initial delay lowers the initial delay to it.
    this.initialMs = Math.min(opts.initialMs, opts.maxMs);
    this.maxMs = opts.maxMs;
    this.resetAfterMs = opts.resetAfterMs ?? DEFAULT_CRASH_LOOP_BACK_OFF.resetAfterMs;
  }

  /** GetStableKey: `<pod>_<namespace>_<uid>_<container>_<hash>`; `_` cannot occur in any of them. */
  key(pod: Pod, container: Container): string {
    return [pod.metadata.name ?? '', pod.metadata.namespace ?? '', pod.metadata.uid ?? '', container.name, hashContainer(container)].join('_');
  }

  /**
   * doBackOff's IsInBackOffSince(key, finishedAt): whether the container,
   * whose newest instance exited at `lastFinishedAt`, must still wait. An
   * entry that expired (the container ran more than resetAfterMs since its
   * restart) is reset first.
   */
  inBackOff(key: string, lastFinishedAt: number, now: number): BackOffCheck {
    const entry = this.entries.get(key);
    if (!entry) return { backingOff: false, remainingMs: 0 };
    if (this.hasExpired(lastFinishedAt, entry)) {
      this.entries.delete(key);
      return { backingOff: false, remainingMs: 0 };
    }
    const elapsed = now - lastFinishedAt;
    if (elapsed >= entry.delayMs) return { backingOff: false, remainingMs: 0 };
    return {
      backingOff: true,
      remainingMs: entry.delayMs - elapsed,
      message: `back-off ${formatGoDuration(entry.delayMs)} restarting failed container=${describeKey(key)}`,
      reason: CRASH_LOOP_BACK_OFF_REASON,
    };
  }

  /**
   * IsInBackOffSinceUpdate(key, now): whether less than the delay passed
   * since the last `next` (the image-pull back-off's check, where there is
   * no exit time).
   */
  inBackOffSinceUpdate(key: string, now: number): { backingOff: boolean; remainingMs: number } {
    const entry = this.entries.get(key);
    if (!entry || this.hasExpired(now, entry)) return { backingOff: false, remainingMs: 0 };
    const elapsed = now - entry.lastUpdate;
    return elapsed < entry.delayMs ? { backingOff: true, remainingMs: entry.delayMs - elapsed } : { backingOff: false, remainingMs: 0 };
  }

  /**
   * Next: record a restart at `now`. The delay starts at initialMs for a new
   * or expired entry and doubles up to maxMs otherwise. `eventTime` is what
   * expiry is judged by, upstream's `Next(key, finishedAt)`; it defaults to
   * `now`, which is the same when inBackOff was asked first (it resets an
   * expired entry itself).
   */
  next(key: string, now: number, eventTime: number = now): void {
    const entry = this.entries.get(key);
    if (!entry || this.hasExpired(eventTime, entry)) {
      this.entries.set(key, { delayMs: this.initialMs, lastUpdate: now });
      return;
    }
    entry.delayMs = Math.min(entry.delayMs * 2, this.maxMs);
    entry.lastUpdate = now;
  }

  /** Reset: forget the key. */
  reset(key: string): void {
    this.entries.delete(key);
  }

  /** GC: drop entries not moved for more than 2*maxMs. */
  gc(now: number): void {
    for (const [key, entry] of this.entries) {
      if (now - entry.lastUpdate > this.maxMs * 2) this.entries.delete(key);
    }
  }

  /** Get: the current delay (0 when the key has none). */
  delay(key: string): number {
    return this.entries.get(key)?.delayMs ?? 0;
  }

  /** HasExpiredFunc as the kubelet sets it: `eventTime - lastUpdate > 600s`. */
  private hasExpired(eventTime: number, entry: Entry): boolean {
    return eventTime - entry.lastUpdate > this.resetAfterMs;
  }
}

/** `<container> pod=<name>_<namespace>(<uid>)` (format.Pod) from a stable key. */
function describeKey(key: string): string {
  const parts = key.split('_');
  if (parts.length !== 5) return `${key} pod=${key}`;
  const [name, namespace, uid, container] = parts as [string, string, string, string, string];
  return `${container} pod=${name}_${namespace}(${uid})`;
}

/**
 * Go's time.Duration.String for whole milliseconds, as the kubelet prints a
 * back-off: 10s, 1m20s, 5m0s, 1h0m0s, 1.5s, 500ms, 0s.
 */
export function formatGoDuration(ms: number): string {
  const total = Math.round(ms);
  if (total === 0) return '0s';
  const sign = total < 0 ? '-' : '';
  const abs = Math.abs(total);
  if (abs < 1000) return `${sign}${abs}ms`;
  const hours = Math.floor(abs / 3_600_000);
  const minutes = Math.floor((abs % 3_600_000) / 60_000);
  const millis = abs % 60_000;
  const whole = Math.floor(millis / 1000);
  const frac = millis % 1000;
  const seconds = frac === 0 ? `${whole}` : `${whole}.${String(frac).padStart(3, '0').replace(/0+$/, '')}`;
  if (hours > 0) return `${sign}${hours}h${minutes}m${seconds}s`;
  if (minutes > 0) return `${sign}${minutes}m${seconds}s`;
  return `${sign}${seconds}s`;
}
