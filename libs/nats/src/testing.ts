/** The NATS lib's test doubles, for unit tests only (the lib's testing door: `@app/nats/testing`). */
import type { KV, KvEntry, KvWatchEntry } from '@nats-io/kv';
import type { QueuedIterator } from '@nats-io/transport-node';

type FakeKvMethods = Pick<KV, 'get' | 'put' | 'delete' | 'keys' | 'create' | 'update' | 'watch' | 'status'> & { keysNow(filter: string): Promise<string[]> };

const encoder = new TextEncoder();
const decoder = new TextDecoder();

/** Whether a key matches a NATS subject filter (`*` one token, `>` the rest). */
function matches(filter: string, key: string): boolean {
  const f = filter.split('.');
  const k = key.split('.');
  for (let i = 0; i < f.length; i++) {
    if (f[i] === '>') return k.length > i;
    if (i >= k.length || (f[i] !== '*' && f[i] !== k[i])) return false;
  }
  return f.length === k.length;
}

/**
 * A KV bucket in memory with the server's revision rules: `create` fails on
 * a live key, `update` (and `delete` with `previousSeq`) fails on a stale
 * revision, `delete` leaves a DEL marker. A `watch` gets the last entry of
 * each matching key first (`delta` counting down to 0), then every write in
 * order; like the real one, its iterator's `_data` tells how many entries
 * come first (kvSnapshot). `failNext` makes the next call of a method reject.
 */
export class FakeKv implements FakeKvMethods {
  private readonly entries = new Map<string, KvEntry>();
  private revision = 0;
  private readonly failures = new Map<keyof FakeKvMethods, Error>();
  private readonly watchers = new Set<{ filters: string[]; push: (e: KvWatchEntry) => void; die: (err?: Error) => void; lose: () => void }>();
  /** Every call, as "method key". */
  readonly calls: string[] = [];

  constructor(readonly bucket = 'fake') {}

  /** The next call of `method` rejects with `err`. */
  failNext(method: keyof FakeKvMethods, err = new Error(`${method} failed`)): void {
    this.failures.set(method, err);
  }

  /** The live value of a key as text (for assertions). */
  text(key: string): string | undefined {
    const e = this.entries.get(key);
    return e?.operation === 'PUT' ? decoder.decode(e.value) : undefined;
  }

  get(key: string): Promise<KvEntry | null> {
    return this.call('get', key, () => this.entries.get(key) ?? null);
  }

  put(key: string, data: string | Uint8Array): Promise<number> {
    return this.call('put', key, () => this.write(key, data, 'PUT'));
  }

  create(key: string, data: string | Uint8Array): Promise<number> {
    return this.call('create', key, () => {
      if (this.entries.get(key)?.operation === 'PUT') throw new Error('wrong last sequence');
      return this.write(key, data, 'PUT');
    });
  }

  update(key: string, data: string | Uint8Array, version: number): Promise<number> {
    return this.call('update', key, () => {
      if ((this.entries.get(key)?.revision ?? 0) !== version) throw new Error('wrong last sequence');
      return this.write(key, data, 'PUT');
    });
  }

  /** With `previousSeq`, only while the key is at that revision (as the server's expected-last-subject-sequence). */
  delete(key: string, opts?: { previousSeq?: number }): Promise<void> {
    return this.call('delete', key, () => {
      if (opts?.previousSeq !== undefined && (this.entries.get(key)?.revision ?? 0) !== opts.previousSeq) throw new Error('wrong last sequence');
      if (this.entries.has(key)) this.write(key, '', 'DEL');
    });
  }

  keys(filter: string | string[] = '>'): Promise<QueuedIterator<string>> {
    const filters = Array.isArray(filter) ? filter : [filter];
    return this.call('keys', filters.join(','), () => {
      const live = [...this.entries.values()].filter((e) => e.operation === 'PUT' && filters.some((f) => matches(f, e.key))).map((e) => e.key);
      async function* iterate() {
        await Promise.resolve();
        yield* live;
      }
      return Object.assign(iterate(), { stop: () => undefined, getProcessed: () => live.length, getPending: () => 0, getReceived: () => live.length });
    });
  }

  /** Every key held under `filter`, DEL markers too (what kvSnapshot asks a real bucket's stream). */
  keysNow(filter: string): Promise<string[]> {
    return this.call('keysNow', filter, () => [...this.entries.keys()].filter((k) => matches(filter, k)));
  }

  watch(opts?: Parameters<KV['watch']>[0]): Promise<QueuedIterator<KvWatchEntry>> {
    const key = opts?.key ?? '>';
    const filters = Array.isArray(key) ? key : [key];
    return this.call('watch', filters.join(','), () => {
      const initial = [...this.entries.values()].filter((e) => filters.some((f) => matches(f, e.key)));
      const queue: KvWatchEntry[] = initial.map((e, i) => ({ ...e, delta: initial.length - 1 - i, isUpdate: false }));
      let wake: (() => void) | undefined;
      let stopped = false;
      let failure: Error | undefined;
      let consumerGone = false;
      const watcher = {
        filters,
        push: (e: KvWatchEntry) => {
          queue.push(e);
          wake?.();
        },
        die: (err?: Error) => {
          stopped = true;
          failure = err;
          this.watchers.delete(watcher);
          wake?.();
        },
        lose: () => {
          consumerGone = true;
          this.watchers.delete(watcher);
        },
      };
      this.watchers.add(watcher);
      const next = async (): Promise<IteratorResult<KvWatchEntry>> => {
        while (!stopped && queue.length === 0) await new Promise<void>((r) => (wake = r));
        if (failure) throw failure;
        const value = stopped ? undefined : queue.shift();
        return value ? { value, done: false } : { value: undefined, done: true };
      };
      return {
        [Symbol.asyncIterator]: () => ({ next }),
        // As kv.watch's iterator: its consumer, whose info as created counts the initial entries (kvSnapshot reads it).
        // Asked of the server (not `cached`), a lost consumer is not found, as the real one's ConsumerNotFoundError.
        _data: {
          info: (cached?: boolean) => (consumerGone && !cached ? Promise.reject(Object.assign(new Error('consumer not found'), { name: 'ConsumerNotFoundError' })) : Promise.resolve({ num_pending: initial.length })),
          delete: () => Promise.resolve(true),
        },
        stop: () => {
          stopped = true;
          this.watchers.delete(watcher);
          wake?.();
        },
        getProcessed: () => 0,
        getPending: () => queue.length,
        getReceived: () => 0,
      };
    });
  }

  /** How many watches are open. */
  get openWatches(): number {
    return this.watchers.size;
  }

  /** Every open watch dies, as a watch whose consumer is gone: its iterator ends, or throws `err`. */
  killWatches(err?: Error): void {
    for (const w of [...this.watchers]) w.die(err);
  }

  /**
   * Every open watch's consumer is deleted on the server: the iterator stays open and silent (as @nats-io/kv's
   * ordered consumer waiting for heartbeats), and its consumer's info, asked, is not found.
   */
  loseConsumers(): void {
    for (const w of [...this.watchers]) w.lose();
  }

  /** The key and its DEL marker are gone from the bucket (a purge with no marker kept): a new watch does not see it. */
  forget(key: string): void {
    this.entries.delete(key);
  }

  /** Only `values` (every key's last entry, DEL markers too) is filled in. */
  status(): ReturnType<KV['status']> {
    return this.call('status', '', () => ({ values: this.entries.size }) as Awaited<ReturnType<KV['status']>>);
  }

  private write(key: string, data: string | Uint8Array, operation: KvEntry['operation']): number {
    const value = typeof data === 'string' ? encoder.encode(data) : data;
    const revision = ++this.revision;
    this.entries.set(key, {
      bucket: this.bucket,
      key,
      rawKey: key,
      value,
      created: new Date(0),
      revision,
      operation,
      length: value.length,
      json: <T>() => JSON.parse(decoder.decode(value)) as T,
      string: () => decoder.decode(value),
    });
    const entry = this.entries.get(key);
    for (const w of this.watchers) if (entry && w.filters.some((f) => matches(f, key))) w.push({ ...entry, delta: 0, isUpdate: true });
    return revision;
  }

  private async call<R>(method: keyof FakeKvMethods, key: string, fn: () => R): Promise<R> {
    await Promise.resolve();
    this.calls.push(`${method} ${key}`);
    const err = this.failures.get(method);
    if (err) {
      this.failures.delete(method);
      throw err;
    }
    return fn();
  }
}
