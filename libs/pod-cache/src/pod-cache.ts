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
import { RecordVersionError, decodeRecord, type PodCacheEntry, type PodCacheGlobal } from '@app/contracts';
import { hopStart, recordKvWatch } from '@app/tracing';
import type { Clock, Timer } from '@app/clock';
import { KvReflector, kvKey, type KvWatchEntry, type ReflectorKv } from '@app/nats';
import type { Logger } from '@app/observability';

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

  /** The UIDs it holds an entry for. */
  uids(): string[] {
    return [...this.entries.keys()];
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

export interface KvPodCacheDeps {
  /** The `pod-cache` bucket. */
  kv: ReflectorKv;
  node: string;
  /** The watch's back-off and liveness check run on it. */
  clock: Clock;
  logger: Pick<Logger, 'info' | 'warn'>;
}

/**
 * A PodCache kept up to date from the KV bucket through one watch
 * (KvReflector): a watch that dies is listed and watched again, the re-list
 * replacing what the cache held (a pod the PLEG deleted meanwhile goes), and
 * every waiting GetNewerThan is woken by what the new watch brings.
 */
export class KvPodCache extends MemoryPodCache {
  private readonly reflector: KvReflector;
  private readonly dec = new TextDecoder();
  private readonly prefix: string;
  /** The pods the current re-list has brought (its end drops the others). */
  private relisted?: Set<string>;
  private caughtUp = false;

  constructor(private readonly deps: KvPodCacheDeps) {
    super();
    this.prefix = kvKey(deps.node);
    this.reflector = new KvReflector({
      kv: deps.kv,
      key: `${this.prefix}.>`,
      bucket: 'pod-cache',
      watcher: 'pod-cache',
      clock: deps.clock,
      logger: deps.logger,
      handler: {
        relisting: () => (this.relisted = new Set()),
        entry: (e, initial) => {
          const started = hopStart();
          const uid = this.apply(e);
          if (initial && uid) this.relisted?.add(uid);
          // A write seen after the catch-up is a hop of the pod's trace (what woke getNewerThan).
          if (uid && !initial) recordKvWatch(e, uid, started);
        },
        synced: () => {
          const kept = this.relisted;
          this.relisted = undefined;
          if (kept) for (const uid of this.uids()) if (!kept.has(uid)) this.delete(uid);
          this.caughtUp = true;
        },
      },
    });
  }

  /**
   * Loads the current entries and starts following changes; resolves once the mirror has caught up, or after 5 s
   * (the watch keeps trying: a pod worker that asks before then waits in getNewerThan).
   */
  async start(): Promise<void> {
    let timer: Timer | undefined;
    await Promise.race([this.reflector.start(), new Promise<void>((r) => (timer = this.deps.clock.setTimer(5000, r)))]);
    timer?.cancel();
    if (!this.caughtUp) this.deps.logger.warn({ bucket: 'pod-cache', node: this.deps.node }, 'the pod cache has not caught up with its bucket after 5 s: serving what it has');
  }

  stop(): void {
    this.reflector.stop();
  }

  /** Applies one entry; the pod's UID when it was a pod's entry. */
  private apply(e: KvWatchEntry): string | undefined {
    const rest = e.key.slice(this.prefix.length + 1);
    const deleted = e.operation !== 'PUT' || e.value.length === 0;
    try {
      if (rest === 'global') {
        if (!deleted) this.updateTime(decodeRecord<PodCacheGlobal>(e.key, this.dec.decode(e.value)).timestamp);
        return undefined;
      }
      if (!rest.startsWith('pod.')) return undefined;
      if (deleted) this.delete(rest.slice(4));
      else this.set(decodeRecord<PodCacheEntry>(e.key, this.dec.decode(e.value)));
    } catch (err) {
      if (!(err instanceof RecordVersionError)) throw err;
      // docs/adr/0034: refused, and the cache keeps what it had for the pod (still counted as relisted, so not dropped).
      this.deps.logger.warn({ bucket: 'pod-cache', key: e.key, revision: e.revision, err: err.message }, 'pod cache: refused a record of a version this service does not read: kept the previous entry');
    }
    return rest.startsWith('pod.') ? rest.slice(4) : undefined;
  }
}
