/**
 * One KV watch that outlives its deaths: the one primitive every watcher of
 * a bucket (KvMirror, the pod workers' KvPodCache, node-status's desired
 * pods) follows its keys with. It plays client-go's Reflector
 * (tools/cache/reflector.go ListAndWatch, run under wait.BackoffUntil by
 * Reflector.Run): list, then watch; when the watch ends or fails, list and
 * watch again after a back-off (client-go's 800 ms doubling to 30 s).
 *
 *   open      kv.watch of the last value of each key under `key`: the
 *             consumer's num_pending at its creation counts the entries that
 *             come first (watchInitialCount), every key's value then, deletes
 *             included: the re-list. Each of them goes to handler.entry with
 *             `initial` true, then handler.synced(); every later entry is a
 *             write made since (`initial` false).
 *   died      the iterator ended or threw without stop(), or the liveness
 *             check found the watch's consumer gone from the server:
 *             handler.lost(why), one warn line, the restart counted
 *             (kubelet_split_kv_watch_restarts_total), and a new watch
 *             opened after the back-off, its re-list sent anew (a handler
 *             replaces what it held: keys deleted and purged meanwhile go).
 *   liveness  every `livenessMs` the watch's consumer is asked for its info:
 *             a consumer deleted on the server (an operator, a server that
 *             lost it) leaves @nats-io/kv's ordered consumer waiting for
 *             heartbeats that do not come, its iterator open and silent; it
 *             re-creates the consumer itself only after tens of seconds, or
 *             never (measured in test/kv-watch-recovery.int.spec.ts). One
 *             CONSUMER.INFO per watch and period, answered by the server
 *             alone; an unanswered one (the server is down: the connection
 *             reconnects and the consumer's subscription with it) is not a
 *             death.
 *   back-off  800 ms, doubled after each death up to 30 s; a watch whose
 *             re-list completed starts the next death's back-off again at
 *             800 ms.
 *
 * Why a re-list rather than resuming from the last revision: the buckets keep
 * one message per key, so a key deleted and purged while no watch ran leaves
 * nothing a resumed watch would deliver; the re-list replaces the handler's
 * state, and it costs the bucket's entries under the prefix once per death.
 *
 * Nothing it does rejects unhandled: handler errors are logged, watch errors
 * retried.
 */
import type { Clock } from '@app/clock';
import type { Logger } from '@app/observability';
import type { KV, KvWatchEntry } from '@nats-io/kv';
import type { QueuedIterator } from '@nats-io/transport-node';
import { watchConsumer, watchInitialCount } from './kv-snapshot.js';
import { kvWatchRestarted } from './kv-watch-metrics.js';

/** What a reflector uses of a bucket. */
export type ReflectorKv = Pick<KV, 'watch'>;

/** What a watcher does with what its watch delivers. */
export interface KvWatchHandler {
  /** A watch opened: `initial` entries (every key's value now, deletes included) come next. */
  relisting?(initial: number): void;
  /** One entry: among the re-list's (`initial`) or a write made since. */
  entry(e: KvWatchEntry, initial: boolean): void;
  /** The re-list's entries are all in (at once after relisting(0)). */
  synced(): void;
  /** The watch died without stop(); a new one opens after the back-off. */
  lost?(why: string): void;
}

export interface KvReflectorOptions {
  kv: ReflectorKv;
  /** The key filter (`<node>.pod.>`). */
  key: string;
  /** The bucket's name and who watches it, for the logs and the metric. */
  bucket: string;
  watcher: string;
  handler: KvWatchHandler;
  clock: Clock;
  logger: Pick<Logger, 'info' | 'warn'>;
  /** The first back-off after a death (default 800 ms, client-go's); doubled up to `maxBackoffMs` (default 30 s). */
  backoffMs?: number;
  maxBackoffMs?: number;
  /** How often the watch's consumer is checked on the server (default 10 s; 0: never). */
  livenessMs?: number;
}

const DEFAULT_BACKOFF_MS = 800;
const DEFAULT_MAX_BACKOFF_MS = 30_000;
const DEFAULT_LIVENESS_MS = 10_000;

/** The watch died: what stops follow() when the liveness check finds its consumer gone. */
class WatchGone extends Error {}

export class KvReflector {
  private started = false;
  private stopped = false;
  private watch?: QueuedIterator<KvWatchEntry>;
  private readonly abort = new AbortController();
  private firstSync!: Promise<void>;
  private markSynced: () => void = () => undefined;
  private backoff: number;
  /** How many watches were opened (the first included). */
  watches = 0;
  /** How many died (each followed by a new one unless stopped). */
  deaths = 0;

  constructor(private readonly o: KvReflectorOptions) {
    this.backoff = o.backoffMs ?? DEFAULT_BACKOFF_MS;
    this.firstSync = new Promise<void>((resolve) => (this.markSynced = resolve));
  }

  /** Opens the watch (once); resolves when its first re-list is in. A failure is retried, never thrown. */
  start(): Promise<void> {
    if (!this.started) {
      this.started = true;
      void this.run();
    }
    return this.firstSync;
  }

  stop(): void {
    this.stopped = true;
    this.abort.abort();
    this.watch?.stop();
  }

  private async run(): Promise<void> {
    while (!this.stopped) {
      let why: string;
      try {
        await this.follow();
        why = 'the watch ended';
      } catch (err) {
        why = (err as Error).message;
      }
      if (this.stopped) return;
      this.deaths++;
      const reason = why.includes('consumer') ? 'consumer-gone' : why === 'the watch ended' ? 'ended' : 'failed';
      kvWatchRestarted(this.o.bucket, this.o.watcher, reason);
      this.o.logger.warn({ bucket: this.o.bucket, key: this.o.key, watcher: this.o.watcher, err: why, retryMs: this.backoff }, 'a KV watch died: listed and watched again after the back-off');
      this.call(() => this.o.handler.lost?.(why));
      await this.o.clock.sleep(this.backoff, this.abort.signal).catch(() => undefined);
      this.backoff = Math.min(this.backoff * 2, this.o.maxBackoffMs ?? DEFAULT_MAX_BACKOFF_MS);
    }
  }

  /** One watch: its re-list, then every write, until it dies. */
  private async follow(): Promise<void> {
    const watch = await this.o.kv.watch({ key: this.o.key });
    this.watches++;
    this.watch = watch;
    if (this.stopped) {
      watch.stop();
      return;
    }
    const liveness = this.checkLiveness(watch);
    try {
      const initial = await watchInitialCount(watch);
      let applied = 0;
      this.call(() => this.o.handler.relisting?.(initial));
      if (initial === 0) this.synced();
      for await (const e of watch) {
        const isInitial = applied < initial;
        this.call(() => this.o.handler.entry(e, isInitial));
        if (++applied === initial) this.synced();
      }
      if (liveness.gone) throw liveness.gone;
    } finally {
      liveness.stop();
      watch.stop();
    }
  }

  private synced(): void {
    this.backoff = this.o.backoffMs ?? DEFAULT_BACKOFF_MS;
    this.call(() => this.o.handler.synced());
    this.markSynced();
  }

  /** Asks for the watch's consumer every period; when the server says it is gone, stops the watch (follow() then throws). */
  private checkLiveness(watch: QueuedIterator<KvWatchEntry>): { stop: () => void; gone?: Error } {
    const period = this.o.livenessMs ?? DEFAULT_LIVENESS_MS;
    const state: { stop: () => void; gone?: Error } = { stop: () => undefined };
    if (period <= 0) return state;
    const abort = new AbortController();
    state.stop = () => abort.abort();
    const onStop = () => abort.abort();
    this.abort.signal.addEventListener('abort', onStop, { once: true });
    void (async () => {
      try {
        while (!abort.signal.aborted) {
          await this.o.clock.sleep(period, abort.signal);
          const err = await watchConsumer(watch)
            .info(false)
            .then(() => undefined, (e: unknown) => e as Error);
          if (err?.name === 'ConsumerNotFoundError' && !abort.signal.aborted) {
            state.gone = new WatchGone(`its consumer is gone from the server (${err.message})`);
            watch.stop();
            return;
          }
        }
      } catch {
        // aborted
      } finally {
        this.abort.signal.removeEventListener('abort', onStop);
      }
    })();
    return state;
  }

  /** A handler that throws is logged; the watch goes on. */
  private call(fn: () => void): void {
    try {
      fn();
    } catch (err) {
      this.o.logger.warn({ bucket: this.o.bucket, key: this.o.key, watcher: this.o.watcher, err: (err as Error).message }, 'a KV watch handler failed on an entry: left out');
    }
  }
}
