/**
 * A fake of the part of a JetStream KV bucket the pod cache reads (`watch`
 * and `status`), for unit tests: the test puts and deletes keys, and every
 * open watch sees them in order, the keys already there first (with `delta`
 * counting down to 0, as JetStream's initial values do).
 */
import type { KV, KvWatchEntry } from '@app/nats';

type WatchOptions = Parameters<KV['watch']>[0];
type Watched = Awaited<ReturnType<KV['watch']>>;

const enc = new TextEncoder();
const dec = new TextDecoder();

export class FakeKvBucket implements Pick<KV, 'watch' | 'status'> {
  private readonly values = new Map<string, Uint8Array>();
  private revision = 0;
  private readonly watchers = new Set<{ filter: (key: string) => boolean; push: (e: KvWatchEntry) => void }>();
  /** The options of every watch opened, in order. */
  readonly watches: WatchOptions[] = [];
  /** Watches stopped so far. */
  stopped = 0;

  constructor(readonly bucket = 'pod-cache') {}

  /** Writes `value` (JSON) at `key`; open watches see it. */
  put(key: string, value: unknown): void {
    const bytes = enc.encode(JSON.stringify(value));
    this.values.set(key, bytes);
    this.emit(this.entry(key, bytes, 'PUT', 0, true));
  }

  /** Deletes `key`; open watches see a DEL. */
  delete(key: string): void {
    this.values.delete(key);
    this.emit(this.entry(key, new Uint8Array(), 'DEL', 0, true));
  }

  status(): ReturnType<KV['status']> {
    return Promise.resolve({ values: this.values.size } as Awaited<ReturnType<KV['status']>>);
  }

  watch(opts?: WatchOptions): Promise<Watched> {
    this.watches.push(opts);
    const filter = subjectFilter(opts?.key);
    const queue: KvWatchEntry[] = [];
    let wake: (() => void) | undefined;
    let done = false;
    const watcher = {
      filter,
      push: (e: KvWatchEntry) => {
        queue.push(e);
        wake?.();
      },
    };
    const initial = [...this.values].filter(([k]) => filter(k));
    initial.forEach(([k, v], i) => queue.push(this.entry(k, v, 'PUT', initial.length - 1 - i, false)));
    this.watchers.add(watcher);
    const iterator: AsyncIterator<KvWatchEntry> = {
      next: async () => {
        while (!done && queue.length === 0) await new Promise<void>((r) => (wake = r));
        const value = queue.shift();
        return value && !done ? { value, done: false } : { value: undefined, done: true };
      },
    };
    const watched = {
      [Symbol.asyncIterator]: () => iterator,
      stop: () => {
        done = true;
        this.stopped++;
        this.watchers.delete(watcher);
        wake?.();
      },
      getProcessed: () => 0,
      getPending: () => queue.length,
      getReceived: () => 0,
    };
    return Promise.resolve(watched as unknown as Watched);
  }

  private emit(e: KvWatchEntry): void {
    for (const w of this.watchers) if (w.filter(e.key)) w.push(e);
  }

  private entry(key: string, value: Uint8Array, operation: 'PUT' | 'DEL', delta: number, isUpdate: boolean): KvWatchEntry {
    return {
      bucket: this.bucket,
      key,
      rawKey: key,
      value,
      created: new Date(0),
      revision: ++this.revision,
      delta,
      operation,
      length: value.length,
      isUpdate,
      json: <T>() => JSON.parse(dec.decode(value)) as T,
      string: () => dec.decode(value),
    };
  }
}

/** A NATS subject filter (`a.*.c`, `a.>`) as a predicate. */
function subjectFilter(filter: string | string[] | undefined): (key: string) => boolean {
  const filters = filter === undefined ? ['>'] : Array.isArray(filter) ? filter : [filter];
  return (key) =>
    filters.some((f) => {
      const want = f.split('.');
      const got = key.split('.');
      for (let i = 0; i < want.length; i++) {
        if (want[i] === '>') return got.length > i;
        if (i >= got.length || (want[i] !== '*' && want[i] !== got[i])) return false;
      }
      return want.length === got.length;
    });
}
