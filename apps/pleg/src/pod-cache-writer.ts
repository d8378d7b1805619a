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
 */
import type { PodCacheEntry } from '@app/contracts';
import { PodCacheStore } from './ports.js';

export class PodCacheWriter {
  /** The timestamp of the newest write decided for each pod, its removal included. */
  private readonly newest = new Map<string, number>();
  /** Pods whose last write removed them: dropped from `newest` once no older write can come. */
  private readonly removed = new Set<string>();
  /** Each pod's last write in flight: the next one waits for it. */
  private readonly tails = new Map<string, Promise<unknown>>();

  constructor(private readonly store: PodCacheStore) {}

  /** Starts from what the cache holds (a PLEG leading after another). */
  restore(entries: readonly PodCacheEntry[]): void {
    this.newest.clear();
    this.removed.clear();
    for (const e of entries) this.newest.set(e.uid, e.timestamp);
  }

  /** Writes the pod's entry unless a newer write was made for it; resolves to whether it was written. */
  set(entry: PodCacheEntry): Promise<boolean> {
    return this.serially(entry.uid, entry.timestamp, false, () => this.store.set(entry));
  }

  /** Removes the pod (the runtime has nothing of it at `timestamp`) unless a newer write was made for it. */
  delete(uid: string, timestamp: number): Promise<boolean> {
    return this.serially(uid, timestamp, true, () => this.store.delete(uid));
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
