/**
 * The pod cache (pkg/kubelet/container/cache.go), shared through the
 * `pod-cache` KV bucket: the PLEG writes it, pod workers read it. A reader
 * keeps a local mirror through one KV watch on its node's keys, so
 * `getNewerThan` is answered from memory and wakes up on the watch: no
 * polling.
 *
 * GetNewerThan(uid, t) returns the pod's entry once it is newer than t, or
 * once the cache's global timestamp is newer than t (every relist advances
 * it, so a pod that did not change is released too; its entry may then be
 * absent: the runtime has nothing for it).
 */
import type { PodCacheEntry, PodCacheGlobal } from '@app/contracts';
import { hopStart, recordKvWatch } from '@app/tracing';
import { kvKey, watchInitialCount, type KV, type KvWatchEntry } from '@app/nats';

export const podCacheKey = (node: string, uid: string): string => kvKey(node, 'pod', uid);
export const podCacheGlobalKey = (node: string): string => kvKey(node, 'global');

export interface CacheResult {
  /** Undefined when the runtime has nothing for this pod. */
  entry?: PodCacheEntry;
  /** The freshness of the answer: the entry's timestamp or the global one, whichever is newer. */
  timestamp: number;
}

/** What pod workers depend on. */
export abstract class PodCache {
  /** The last known entry of a pod. */
  abstract get(uid: string): CacheResult;
  /** Resolves once the pod's entry, or the cache as a whole, is newer than `minTime`. */
  abstract getNewerThan(uid: string, minTime: number, signal?: AbortSignal): Promise<CacheResult>;
}

interface Waiter {
  uid: string;
  minTime: number;
  resolve: (r: CacheResult) => void;
}

/** A PodCache in memory: the PLEG's own view, unit tests, and the base of KvPodCache. */
export class MemoryPodCache extends PodCache {
  private readonly entries = new Map<string, PodCacheEntry>();
  private global = 0;
  private waiters = new Set<Waiter>();

  set(entry: PodCacheEntry): void {
    this.entries.set(entry.uid, entry);
    this.wake();
  }

  delete(uid: string): void {
    this.entries.delete(uid);
    this.wake();
  }

  updateTime(t: number): void {
    this.global = Math.max(this.global, t);
    this.wake();
  }

  get(uid: string): CacheResult {
    const entry = this.entries.get(uid);
    return { ...(entry ? { entry } : {}), timestamp: Math.max(entry?.timestamp ?? 0, this.global) };
  }

  getNewerThan(uid: string, minTime: number, signal?: AbortSignal): Promise<CacheResult> {
    const now = this.get(uid);
    if (now.timestamp > minTime) return Promise.resolve(now);
    return new Promise((resolve, reject) => {
      const waiter: Waiter = { uid, minTime, resolve };
      this.waiters.add(waiter);
      signal?.addEventListener('abort', () => this.waiters.delete(waiter) && reject(Object.assign(new Error('aborted'), { name: 'AbortError' })), { once: true });
    });
  }

  private wake(): void {
    for (const w of [...this.waiters]) {
      const r = this.get(w.uid);
      if (r.timestamp > w.minTime) {
        this.waiters.delete(w);
        w.resolve(r);
      }
    }
  }
}

/** A PodCache kept up to date from the KV bucket through one watch. */
export class KvPodCache extends MemoryPodCache {
  private stopWatch?: () => void;
  private readonly dec = new TextDecoder();

  constructor(
    private readonly kv: KV,
    private readonly node: string,
  ) {
    super();
  }

  /** Loads the current entries and starts following changes; resolves once the mirror has caught up. */
  async start(): Promise<void> {
    const iter = await this.kv.watch({ key: `${kvKey(this.node)}.>` });
    this.stopWatch = () => iter.stop();
    // The entries there at the start come first: counting them ends the catch-up, where
    // waiting for one with nothing pending (`delta` 0) lasts while the PLEG keeps writing.
    const initial = await watchInitialCount(iter);
    let caughtUp: () => void = () => undefined;
    const ready = new Promise<void>((r) => (caughtUp = r));
    if (initial === 0) caughtUp();
    let applied = 0;
    void (async () => {
      for await (const e of iter) {
        const started = hopStart();
        const uid = this.apply(e);
        // A write seen after the catch-up is a hop of the pod's trace (what woke getNewerThan).
        if (uid && applied >= initial) recordKvWatch(e, uid, started);
        if (++applied === initial) caughtUp();
      }
    })();
    await Promise.race([ready, new Promise((r) => setTimeout(r, 5000))]);
  }

  stop(): void {
    this.stopWatch?.();
  }

  /** Applies one entry; the pod's UID when it was a pod's entry. */
  private apply(e: KvWatchEntry): string | undefined {
    const rest = e.key.slice(kvKey(this.node).length + 1);
    const deleted = e.operation !== 'PUT' || e.value.length === 0;
    if (rest === 'global') {
      if (!deleted) this.updateTime((JSON.parse(this.dec.decode(e.value)) as PodCacheGlobal).timestamp);
      return undefined;
    }
    if (!rest.startsWith('pod.')) return undefined;
    if (deleted) this.delete(rest.slice(4));
    else this.set(JSON.parse(this.dec.decode(e.value)) as PodCacheEntry);
    return rest.slice(4);
  }
}
