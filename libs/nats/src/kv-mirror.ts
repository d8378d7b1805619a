/**
 * A KV bucket's JSON documents under a prefix, kept in memory by one watch:
 * the periodic passes (the sync loop's housekeeping, each pod-worker
 * replica's shard reconciliation) read it instead of listing the bucket
 * every period (docs/adr/0019-kv-mirrors.md). Upstream's HandlePodCleanups
 * reads the pod workers' state in memory; a split kubelet reads a mirror.
 *
 *   start()   the watch opened; resolves once every key there at its
 *             creation is in (watchInitialCount): reads before that throw
 *   updates   each write applied as it comes, in the bucket's order
 *   dies      the watch ended, failed, or lost its consumer (KvReflector,
 *             which watches for the mirror): a new watch opened after the
 *             back-off, its initial values read into a fresh map that
 *             replaces the old one once complete (keys deleted and purged
 *             meanwhile go); the old map serves reads until then
 *   noteWrite the writer's own write (put or delete), applied at once: a
 *             process sees what it wrote without waiting for its watch
 *
 * What a read gives: every key at a value it had at most the watch's lag
 * ago (milliseconds while NATS keeps up; while a watch is re-created, the
 * time since it died). A decision that must not act on an older value than
 * the one at the call (a kill, a purge, a restart) reads those keys again
 * with a get (JsonKvStore.get) before it acts.
 *
 * Revisions order the writes: a watch entry older than what the mirror has
 * for its key (its own write noted first) is ignored.
 */
import { RecordVersionError, decodeRecord } from '@app/contracts';
import type { Clock } from '@app/clock';
import type { Logger } from '@app/observability';
import type { KvWatchEntry } from '@nats-io/kv';
import { KvReflector, type ReflectorKv } from './kv-reflector.js';

/** What a mirror uses of a bucket. */
export type MirrorKv = ReflectorKv;

export interface KvMirrorOptions {
  clock: Clock;
  logger: Pick<Logger, 'info' | 'warn'>;
  /** The bucket's name, for the logs. */
  bucket: string;
  /** Who keeps the mirror, for the logs and the restarts metric (default `mirror`). */
  watcher?: string;
  /** The first back-off after a watch died (or could not be opened); KvReflector's default otherwise. */
  retryMs?: number;
  /** KvReflector's liveness period (its default otherwise). */
  livenessMs?: number;
}

/** A key's last known value (undefined: deleted, noted at `at`) and its revision. */
interface Slot<T> {
  value: T | undefined;
  revision: number;
  at?: number;
}

/**
 * How long a deleted key's revision is kept: a put of this process answered
 * after the delete's entry came must not bring the key back (far above any
 * request's deadline); after that the key is forgotten, so pods deleted
 * over a node's life do not pile up.
 */
const TOMBSTONE_KEEP_MS = 60_000;

const decoder = new TextDecoder();

export class KvMirror<T> {
  /** The key prefix, without the trailing dot (as JsonKvStore's). */
  readonly prefix: string;
  private slots = new Map<string, Slot<T>>();
  /** The map a re-created watch fills while `slots` still serves reads. */
  private loading?: Map<string, Slot<T>>;
  private loaded = false;
  private readonly reflector: KvReflector;
  private readonly listeners = new Set<(id: string | undefined) => void>();

  constructor(
    kv: MirrorKv,
    prefix: string,
    private readonly options: KvMirrorOptions,
  ) {
    this.prefix = prefix;
    this.reflector = new KvReflector({
      kv,
      key: `${prefix}.>`,
      bucket: options.bucket,
      watcher: options.watcher ?? 'mirror',
      clock: options.clock,
      logger: options.logger,
      ...(options.retryMs !== undefined ? { backoffMs: options.retryMs } : {}),
      ...(options.livenessMs !== undefined ? { livenessMs: options.livenessMs } : {}),
      handler: {
        relisting: () => (this.loading = new Map<string, Slot<T>>()),
        entry: (e, initial) => this.apply(initial ? (this.loading ?? this.slots) : this.slots, e),
        synced: () => this.swapIn(this.loading ?? new Map<string, Slot<T>>()),
        lost: () => (this.loading = undefined),
      },
    });
  }

  /** How many watches were opened (the first included): a test sees a re-creation. */
  get watches(): number {
    return this.reflector.watches;
  }

  /** Opens the watch (once); resolves when its initial values are in. A failure is retried, never thrown. */
  start(): Promise<void> {
    return this.reflector.start();
  }

  stop(): void {
    this.reflector.stop();
  }

  /**
   * Calls `listener` after each write the watch applies (with the key's id)
   * and after a re-created watch's values replace the old ones (undefined:
   * anything may have changed). Returns the unsubscribe.
   */
  onChange(listener: (id: string | undefined) => void): () => void {
    this.listeners.add(listener);
    return () => void this.listeners.delete(listener);
  }

  /** Whether the initial values are in. */
  get ready(): boolean {
    return this.loaded;
  }

  /** Every live value, by the rest of its key (as JsonKvStore.entries, at the watch's lag). */
  entries(): Map<string, T> {
    this.mustBeLoaded();
    const out = new Map<string, T>();
    const now = this.options.clock.now();
    for (const [id, s] of this.slots) {
      if (s.value !== undefined) out.set(id, s.value);
      else if (now - (s.at ?? now) >= TOMBSTONE_KEEP_MS) this.slots.delete(id);
    }
    return out;
  }

  /** One value, at the watch's lag. */
  get(id: string): T | undefined {
    this.mustBeLoaded();
    return this.slots.get(id)?.value;
  }

  /**
   * The writer's own write, made: `value` undefined for a delete. `revision`
   * is what the put answered; a delete has none, so it stands above what
   * the mirror had and below the delete's own entry, which comes later.
   */
  noteWrite(id: string, value: T | undefined, revision?: number): void {
    for (const map of [this.slots, this.loading]) {
      if (!map) continue;
      const known = map.get(id)?.revision ?? 0;
      const at = revision ?? known + 0.5;
      if (at > known) map.set(id, { value, revision: at, ...(value === undefined ? { at: this.options.clock.now() } : {}) });
    }
  }

  private mustBeLoaded(): void {
    if (!this.loaded) throw new Error(`the mirror of ${this.options.bucket} ${this.prefix}.> has not loaded yet`);
  }

  private swapIn(fresh: Map<string, Slot<T>>): void {
    this.slots = fresh;
    this.loading = undefined;
    if (!this.loaded) {
      this.loaded = true;
      this.options.logger.info({ bucket: this.options.bucket, prefix: this.prefix, keys: fresh.size }, 'KV mirror loaded');
    }
    this.changed(undefined);
  }

  private changed(id: string | undefined): void {
    for (const l of this.listeners) l(id);
  }

  private apply(map: Map<string, Slot<T>>, e: KvWatchEntry): void {
    const id = e.key.slice(this.prefix.length + 1);
    if ((map.get(id)?.revision ?? 0) > e.revision) return;
    let value: T | undefined;
    try {
      value = e.operation === 'PUT' && e.value.length > 0 ? decodeRecord<T>(e.key, decoder.decode(e.value)) : undefined;
    } catch (err) {
      if (err instanceof RecordVersionError) {
        // docs/adr/0034: refused, and what the mirror had stays (a refused pods record must never read as a pod that is gone).
        this.options.logger.warn({ bucket: this.options.bucket, key: e.key, revision: e.revision, err: err.message }, 'KV mirror: refused a record of a version this service does not read: kept the previous value');
        return;
      }
      // A document no reader can parse is as good as absent (JsonKvStore.entries would throw on it every pass).
      this.options.logger.warn({ bucket: this.options.bucket, key: e.key, err: (err as Error).message }, 'KV mirror: a value is not JSON: left out');
    }
    map.set(id, value === undefined ? { value, revision: e.revision, at: this.options.clock.now() } : { value, revision: e.revision });
    if (map === this.slots && this.loaded) this.changed(id);
  }
}
