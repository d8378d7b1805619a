/**
 * client-go's Reflector feeding an UndeltaStore (tools/cache reflector.go,
 * undelta_store.go), which is how the kubelet's apiserver source watches its
 * pods (pkg/kubelet/config/apiserver.go): list, then watch from the list's
 * resourceVersion, and after every change hand the whole current set to
 * `onListing`, so the consumer diffs full listings as it does for the file
 * and http sources.
 *
 *   start ─▶ LIST ──ok──▶ onListing(all) ─▶ WATCH from rv ─┬─ event ─▶ store ─▶ onListing(all)
 *             ▲                                             ├─ BOOKMARK: rv only
 *             │   back-off 800 ms .. 30 s (doubling;        ├─ stream ended (timeoutSeconds): WATCH again from rv
 *             │   reset after a list that worked)           ├─ 410 Gone / ERROR event: LIST again
 *             └──────────── failure ◀───────────────────────┴─ connection lost: WATCH again after back-off, LIST if that fails
 *
 * Invariants:
 *  - `onListing` is only called with a complete view: the first call is the
 *    first successful list (sourcesReady waits for it); a failed list or watch
 *    keeps the last view, so a dead apiserver never empties the node.
 *  - Objects are replaced whole, keyed by namespace/name as client-go keys
 *    them (a pod deleted and recreated with the same name is one key whose
 *    UID changed).
 *  - stop() ends the watch and every timer; nothing is called afterwards.
 */
import { Clock } from '@app/clock';
import type { Logger } from '@app/observability';
import { ApiError, isGone, type RequestInit, type WatchEvent } from './api-server.js';

/** What a reflector needs of the apiserver (ApiServer has it). */
export interface ListWatchClient {
  request<T>(path: string, init?: RequestInit): Promise<T>;
  watch<T>(path: string, query: RequestInit['query'], onEvent: (e: WatchEvent<T>) => void, signal?: AbortSignal): Promise<void>;
}

export interface ObjectWithMeta {
  metadata?: { name?: string; namespace?: string; resourceVersion?: string };
}

interface ObjectList<T> {
  metadata?: { resourceVersion?: string };
  items?: T[];
}

export interface ReflectorOptions<T> {
  /** The collection, e.g. `/api/v1/pods`. */
  path: string;
  /** Its selectors, e.g. `{ fieldSelector: 'spec.nodeName=n1' }`. */
  query?: Record<string, string>;
  /** Called with every object after the first list and after each change. */
  onListing: (items: T[]) => void;
  /** Called with each failed list or watch (the reflector keeps trying); what failed, for a caller that must say it. */
  onError?: (err: Error) => void;
  /** First back-off after a failure (client-go: 800 ms). */
  initialBackoffMs?: number;
  /** Longest back-off (client-go: 30 s). */
  maxBackoffMs?: number;
  /** How long the server keeps one watch open before it is started again (client-go: 5 to 10 min). */
  watchTimeoutSeconds?: number;
}

const key = (o: ObjectWithMeta) => `${o.metadata?.namespace ?? ''}/${o.metadata?.name ?? ''}`;

export class Reflector<T extends ObjectWithMeta> {
  private readonly store = new Map<string, T>();
  private resourceVersion = '';
  private backoffMs: number;
  private stopped = false;
  private abort?: AbortController;
  private listed = false;
  private lastError?: string;

  constructor(
    private readonly client: ListWatchClient,
    private readonly clock: Clock,
    private readonly logger: Logger,
    private readonly options: ReflectorOptions<T>,
  ) {
    this.backoffMs = this.initialBackoff;
  }

  /** Whether a list has succeeded (the source has delivered). */
  get hasSynced(): boolean {
    return this.listed;
  }

  /** The last resourceVersion seen. */
  get lastSyncResourceVersion(): string {
    return this.resourceVersion;
  }

  start(): void {
    void this.run();
  }

  stop(): void {
    this.stopped = true;
    this.abort?.abort();
  }

  private get initialBackoff(): number {
    return this.options.initialBackoffMs ?? 800;
  }

  /** ListAndWatch, again and again until stopped; every error is caught here. */
  private async run(): Promise<void> {
    let needList = true;
    while (!this.stopped) {
      try {
        if (needList) {
          await this.list();
          needList = false;
        }
        const started = this.clock.now();
        await this.watchOnce();
        // The server ended the watch (timeoutSeconds): start it again from the last rv; at
        // once if it ran a while, after a back-off if it ended at once (no busy loop).
        if (this.clock.now() - started >= 1000) continue;
        throw new ApiError(0, 'ConnectionLost', `watch ${this.options.path}: the stream ended at once`);
      } catch (err) {
        if (this.stopped) return;
        if (isGone(err)) {
          this.logger.info({ path: this.options.path, resourceVersion: this.resourceVersion }, 'watch: resourceVersion too old (410 Gone); listing again');
          needList = true;
          continue;
        }
        const message = (err as Error).message;
        this.options.onError?.(err as Error);
        if (message !== this.lastError) this.logger.warn({ path: this.options.path, err: message, retryInMs: this.backoffMs }, 'apiserver list/watch failed; keeping the last view and trying again');
        this.lastError = message;
        // A watch that cannot be opened again may mean the rv is gone too: list after a failed watch.
        needList = needList || !(err instanceof ApiError && err.code === 0 && err.reason === 'ConnectionLost');
        try {
          await this.clock.sleep(this.backoffMs, this.abortSignal());
        } catch {
          return;
        }
        this.backoffMs = Math.min(this.backoffMs * 2, this.options.maxBackoffMs ?? 30_000);
      }
    }
  }

  private abortSignal(): AbortSignal {
    this.abort = new AbortController();
    if (this.stopped) this.abort.abort();
    return this.abort.signal;
  }

  private async list(): Promise<void> {
    const list = await this.client.request<ObjectList<T>>(this.options.path, { query: this.options.query, signal: this.abortSignal() });
    if (this.stopped) return;
    this.store.clear();
    for (const item of list.items ?? []) this.store.set(key(item), item);
    this.resourceVersion = list.metadata?.resourceVersion ?? '';
    this.listed = true;
    this.backoffMs = this.initialBackoff;
    if (this.lastError) this.logger.info({ path: this.options.path }, 'apiserver list/watch works again');
    this.lastError = undefined;
    this.options.onListing([...this.store.values()]);
  }

  private async watchOnce(): Promise<void> {
    const query = { ...this.options.query, resourceVersion: this.resourceVersion, allowWatchBookmarks: true, timeoutSeconds: this.options.watchTimeoutSeconds ?? 300 };
    await this.client.watch<T>(this.options.path, query, (e) => this.onEvent(e), this.abortSignal());
  }

  private onEvent(e: WatchEvent<T>): void {
    if (this.stopped) return;
    if (e.type === 'ERROR') {
      const status = e.object as { code?: number; reason?: string; message?: string };
      throw new ApiError(status.code ?? 500, status.reason ?? 'WatchError', `watch ${this.options.path}: ${status.message ?? 'error event'}`);
    }
    const rv = e.object.metadata?.resourceVersion;
    if (rv) this.resourceVersion = rv;
    if (e.type === 'BOOKMARK') return;
    if (e.type === 'DELETED') this.store.delete(key(e.object));
    else this.store.set(key(e.object), e.object);
    this.options.onListing([...this.store.values()]);
  }
}
