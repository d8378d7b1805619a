/** Hand-written fakes of what config-source talks to, for unit tests only. */
import { ApiError, type ListWatchClient, type RequestInit, type WatchEvent } from '@app/apiserver';
import type { Pod, Service } from '@app/contracts';
import { ApiObjectWatch, ApiServiceWatch, type ApiObject, type ApiObjectRef } from './ports.js';

interface Watcher {
  emit: (e: WatchEvent<Pod>) => void;
  end: (err?: Error) => void;
}

/**
 * An apiserver's pod collection in memory, as a reflector sees it: LIST
 * (with the collection's resourceVersion), WATCH from a resourceVersion
 * (replaying the changes made since, or 410 Gone once they were compacted),
 * and going away (connections refused, watches cut) and coming back. The
 * field selector `spec.nodeName=<node>` is honoured.
 */
export class FakeApiserver implements ListWatchClient {
  private rv = 100;
  private readonly pods = new Map<string, Pod>();
  /** Every change, for watches that start from an older resourceVersion. */
  private log: { rv: number; event: WatchEvent<Pod> }[] = [];
  private compactedTo = 0;
  private readonly watchers = new Set<Watcher>();
  private down = false;
  readonly calls: string[] = [];

  /** Creates or replaces a pod (ADDED or MODIFIED), stamping uid and resourceVersion. */
  put(pod: Pod): Pod {
    const key = keyOf(pod);
    const existing = this.pods.get(key);
    const stored: Pod = structuredClone({ ...pod, metadata: { ...pod.metadata, uid: pod.metadata.uid ?? `uid-${pod.metadata.name ?? ''}`, resourceVersion: String(++this.rv) } });
    this.pods.set(key, stored);
    this.record({ type: existing ? 'MODIFIED' : 'ADDED', object: stored });
    return stored;
  }

  /** Removes a pod (DELETED). */
  remove(namespace: string, name: string): void {
    const key = `${namespace}/${name}`;
    const existing = this.pods.get(key);
    if (!existing) return;
    this.pods.delete(key);
    this.record({ type: 'DELETED', object: { ...existing, metadata: { ...existing.metadata, resourceVersion: String(++this.rv) } } });
  }

  get(namespace: string, name: string): Pod | undefined {
    return this.pods.get(`${namespace}/${name}`);
  }

  /** The apiserver stops: connections are refused and open watches are cut. */
  stop(): void {
    this.down = true;
    for (const w of this.watchers) w.end(new ApiError(0, 'ConnectionLost', 'WATCH /api/v1/pods: socket hang up'));
    this.watchers.clear();
  }

  /** The apiserver is back, with what etcd kept. */
  start(): void {
    this.down = false;
  }

  /** Forgets the change log (etcd compaction): a watch from an older resourceVersion gets 410 Gone. */
  compact(): void {
    this.compactedTo = this.rv;
    this.log = [];
  }

  request<T>(path: string, init?: RequestInit): Promise<T> {
    this.calls.push(`LIST ${path} ${JSON.stringify(init?.query ?? {})}`);
    if (this.down) return Promise.reject(new ApiError(0, 'ConnectionFailed', `GET ${path}: connect ECONNREFUSED`));
    const items = [...this.pods.values()].filter((p) => matches(p, init?.query)).map((p) => structuredClone(p));
    return Promise.resolve({ kind: 'PodList', apiVersion: 'v1', metadata: { resourceVersion: String(this.rv) }, items } as T);
  }

  watch<T>(path: string, query: RequestInit['query'], onEvent: (e: WatchEvent<T>) => void, signal?: AbortSignal): Promise<void> {
    this.calls.push(`WATCH ${path} rv=${String(query?.['resourceVersion'])}`);
    if (this.down) return Promise.reject(new ApiError(0, 'ConnectionFailed', `WATCH ${path}: connect ECONNREFUSED`));
    const from = Number(query?.['resourceVersion'] ?? 0);
    if (from < this.compactedTo) return Promise.reject(new ApiError(410, 'Expired', `too old resource version: ${from} (${this.compactedTo})`));
    return new Promise<void>((resolve, reject) => {
      const emit = (e: WatchEvent<Pod>) => {
        if (matches(e.object, query)) onEvent(structuredClone(e) as WatchEvent<T>);
      };
      const w: Watcher = { emit, end: (err) => (err ? reject(err) : resolve()) };
      for (const { rv, event } of this.log) if (rv > from) emit(event);
      this.watchers.add(w);
      signal?.addEventListener('abort', () => {
        this.watchers.delete(w);
        resolve();
      });
    });
  }

  private record(event: WatchEvent<Pod>): void {
    this.log.push({ rv: this.rv, event });
    for (const w of this.watchers) w.emit(event);
  }
}

function keyOf(pod: Pod): string {
  return `${pod.metadata.namespace ?? ''}/${pod.metadata.name ?? ''}`;
}

function matches(pod: Pod, query: RequestInit['query']): boolean {
  const selector = query?.['fieldSelector'];
  if (typeof selector !== 'string') return true;
  const [field, value] = selector.split('=');
  return field !== 'spec.nodeName' || pod.spec.nodeName === value;
}

/**
 * The apiserver's objects as the watch-based manager sees them: each watch
 * started is recorded and can be fed a listing (`list`) or an error
 * (`fail`); `stopped` counts the watches stopped.
 */
export class FakeObjectWatch extends ApiObjectWatch {
  readonly started: string[] = [];
  stopped = 0;
  private readonly live = new Map<string, { onListing: (items: ApiObject[]) => void; onError: (err: Error) => void }[]>();

  watch(ref: ApiObjectRef, onListing: (items: ApiObject[]) => void, onError: (err: Error) => void): () => void {
    const key = `${ref.kind}/${ref.namespace}/${ref.name}`;
    this.started.push(key);
    const entry = { onListing, onError };
    this.live.set(key, [...(this.live.get(key) ?? []), entry]);
    return () => {
      this.stopped++;
      this.live.set(key, (this.live.get(key) ?? []).filter((e) => e !== entry));
    };
  }

  /** The watches of `key` that run. */
  running(key: string): number {
    return this.live.get(key)?.length ?? 0;
  }

  /** Every running watch of `key` lists `items` (an empty list: the object does not exist). */
  list(key: string, items: ApiObject[]): void {
    for (const e of this.live.get(key) ?? []) e.onListing(items);
  }

  /** Every running watch of `key` fails. */
  fail(key: string, message: string): void {
    for (const e of this.live.get(key) ?? []) e.onError(new Error(message));
  }
}

/** Every Service as the service lister sees it: `list` feeds the running watch, `fail` fails it; `started` counts the watches. */
export class FakeServiceWatch extends ApiServiceWatch {
  started = 0;
  private live?: { onListing: (services: Service[]) => void; onError: (err: Error) => void };

  watch(onListing: (services: Service[]) => void, onError: (err: Error) => void): () => void {
    this.started++;
    const entry = { onListing, onError };
    this.live = entry;
    return () => {
      if (this.live === entry) this.live = undefined;
    };
  }

  list(services: Service[]): void {
    this.live?.onListing(services);
  }

  fail(message: string): void {
    this.live?.onError(new Error(message));
  }
}
