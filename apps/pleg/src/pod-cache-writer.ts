/**
 * The PLEG's writes to the pod cache, kept monotonic per pod: a write
 * (an entry, or the pod's removal) stamped older than the last one made for
 * that pod is dropped, as container/cache.go Set drops an update older than
 * what it holds. Three writers race here: the relist, the immediate
 * inspection a pod worker asks for after it changed a pod, and the evented
 * mode's runtime events. A relist that listed the runtime before a pod
 * worker's inspection and finishes after it must not put the older view
 * back: a pod worker waiting in GetNewerThan would be released by the newer
 * entry and then see the cache go back in time.
 *
 * Each pod's writes are made one at a time, in the order they were asked
 * for, so the bucket receives them in the order this check decided them.
 * A pod's removal is remembered (its tombstone) until no write stamped
 * before it can still arrive.
 *
 * Each entry written keeps the pod's IPs across the stop of its sandbox
 * (getPodIPs): a stopped sandbox has no network for the runtime to report,
 * and a completed or terminating pod keeps its podIP in the API.
 */
import type { PodCacheEntry } from '@app/contracts';
import type { PodSandboxStatus } from '@app/cri';
import { PodCacheStore } from './ports.js';

/**
 * pleg/generic.go getPodIPs: the IPs of a pod's new entry, given those of
 * the entry it replaces. The runtime's own when it reports any, or when a
 * sandbox of the pod is ready (its IPs are then what they are); for a pod
 * with no ready sandbox (an exited pod) the previous entry's.
 */
export function getPodIPs(entry: Pick<PodCacheEntry, 'ips' | 'sandboxStatuses'>, previous: readonly string[] | undefined): string[] {
  if (entry.ips.length > 0 || !previous || previous.length === 0) return entry.ips;
  if ((entry.sandboxStatuses as PodSandboxStatus[]).some((s) => s.state === 'SANDBOX_READY')) return entry.ips;
  return [...previous];
}

export class PodCacheWriter {
  /** The timestamp of the newest write decided for each pod, its removal included. */
  private readonly newest = new Map<string, number>();
  /** Pods whose last write removed them: dropped from `newest` once no older write can come. */
  private readonly removed = new Set<string>();
  /** Each pod's last write in flight: the next one waits for it. */
  private readonly tails = new Map<string, Promise<unknown>>();
  /** The IPs of each pod's last entry written (getPodIPs' old status). */
  private readonly ips = new Map<string, string[]>();

  constructor(private readonly store: PodCacheStore) {}

  /** Starts from what the cache holds (a PLEG leading after another). */
  restore(entries: readonly PodCacheEntry[]): void {
    this.newest.clear();
    this.removed.clear();
    this.ips.clear();
    for (const e of entries) {
      this.newest.set(e.uid, e.timestamp);
      this.ips.set(e.uid, e.ips);
    }
  }

  /**
   * Writes the pod's entry, its IPs kept from the entry it replaces as
   * getPodIPs says, unless a newer write was made for it; resolves to
   * whether it was written.
   */
  set(entry: PodCacheEntry): Promise<boolean> {
    return this.serially(entry.uid, entry.timestamp, false, () => {
      const ips = getPodIPs(entry, this.ips.get(entry.uid));
      this.ips.set(entry.uid, ips);
      return this.store.set(ips === entry.ips ? entry : { ...entry, ips });
    });
  }

  /** Removes the pod (the runtime has nothing of it at `timestamp`) unless a newer write was made for it. */
  delete(uid: string, timestamp: number): Promise<boolean> {
    return this.serially(uid, timestamp, true, () => {
      this.ips.delete(uid);
      return this.store.delete(uid);
    });
  }

  /** The newest timestamp written for the pod, if any is remembered. */
  newestOf(uid: string): number | undefined {
    return this.newest.get(uid);
  }

  /**
   * Forgets the removals older than `oldestInFlight`, the timestamp of the
   * oldest inspection or relist still running (none: every removal): no
   * write that a removal must win over can come after that.
   */
  prune(oldestInFlight = Infinity): void {
    for (const uid of this.removed) {
      if ((this.newest.get(uid) ?? -Infinity) < oldestInFlight && !this.tails.has(uid)) {
        this.newest.delete(uid);
        this.removed.delete(uid);
      }
    }
  }

  private serially(uid: string, timestamp: number, removal: boolean, write: () => Promise<void>): Promise<boolean> {
    const previous = this.tails.get(uid) ?? Promise.resolve();
    const next = previous.then(async () => {
      if (timestamp < (this.newest.get(uid) ?? -Infinity)) return false;
      // Decided before the write: a write that fails after it reached the bucket must not let an older one in.
      this.newest.set(uid, timestamp);
      if (removal) this.removed.add(uid);
      else this.removed.delete(uid);
      await write();
      return true;
    });
    const tail = next.then(
      () => undefined,
      () => undefined,
    );
    this.tails.set(uid, tail);
    return next.finally(() => {
      if (this.tails.get(uid) === tail) this.tails.delete(uid);
    });
  }
}
