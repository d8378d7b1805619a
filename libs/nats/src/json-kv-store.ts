/**
 * One JSON document per key in a KV bucket, under a node's key prefix:
 * `<node>.<part>....<id>`. Every bucket of DESIGN.md holds JSON this way; the
 * apps' stores (the podManager's pods, the pod cache, the workers' records,
 * the statuses) are this class with a type and a prefix, not copies of it.
 */
import type { KV } from '@nats-io/kv';
import { decodeRecord, type PodSyncStatusRecord, type ProbeResultRecord, type VersionedPodStatusRecord } from '@app/contracts';
import { kvKey } from './buckets.js';
import { nextSpan } from '@app/tracing';
import { KvMirror, type KvMirrorOptions } from './kv-mirror.js';
import { kvSnapshot } from './kv-snapshot.js';
import { currentTrace, hopStart, msSince, recordHop } from '@app/tracing';
import { messageFacts } from '@app/tracing';

/**
 * What JsonKvStore uses of a bucket (so that a fake bucket can stand in for it
 * in unit tests); `watch` is for the listing (kv-snapshot.ts), not `keys`,
 * which on a busy bucket lasts until it is quiet for 5 s.
 */
export type JsonKv = Pick<KV, 'get' | 'put' | 'delete' | 'watch'>;

const decoder = new TextDecoder();

export class JsonKvStore<T> {
  /** The key prefix, without the trailing dot: `<node>` or `<node>.<part>...`. */
  readonly prefix: string;

  constructor(
    private readonly kv: JsonKv,
    node: string,
    ...parts: string[]
  ) {
    this.prefix = kvKey(node, ...parts);
  }

  /** The full key of `id`. */
  key(id: string): string {
    return `${this.prefix}.${id}`;
  }

  /** The live value of `id`, or undefined when it is absent or deleted. */
  async get(id: string): Promise<T | undefined> {
    const e = await this.kv.get(this.key(id));
    // A record of a version this build does not read throws RecordVersionError: the caller's step fails and is retried, never reads it as absent.
    return e && e.operation === 'PUT' && e.value.length > 0 ? decodeRecord<T>(e.key, decoder.decode(e.value)) : undefined;
  }

  /**
   * Writes `id`. Within a traced hop about a pod, the write is recorded
   * (bucket, key, revision): a watcher's hop links to it by those
   * (docs/adr/0015-tracing.md).
   */
  async put(id: string, value: T): Promise<void> {
    await this.write(id, value);
  }

  /** put, resolving to the write's revision (what a mirror of the writer notes: KvMirror.noteWrite). */
  async write(id: string, value: T): Promise<number> {
    const key = this.key(id);
    const { at, t0 } = hopStart();
    const revision = await this.kv.put(key, JSON.stringify(value));
    const active = currentTrace();
    if (!active?.podUid) return revision;
    const bucket = (this.kv as { bucket?: unknown }).bucket;
    recordHop({
      kind: 'kv.put',
      spanId: nextSpan(active.trace).spanId,
      parentSpanId: active.trace.spanId,
      ...(typeof bucket === 'string' ? { bucket } : {}),
      key,
      ...(typeof revision === 'number' ? { revision } : {}),
      at,
      durationMs: msSince(t0),
      ...messageFacts(value),
    });
    return revision;
  }

  async delete(id: string): Promise<void> {
    await this.kv.delete(this.key(id));
  }

  /**
   * Every live value under the prefix, by the rest of its key: each key there
   * at the call, at its value then or a newer one (one snapshot of the bucket,
   * values included, ended once delivered however busy the writers are).
   */
  async entries(): Promise<Map<string, T>> {
    const out = new Map<string, T>();
    for (const e of await kvSnapshot(this.kv, `${this.prefix}.>`)) {
      if (e.value.length > 0) out.set(e.key.slice(this.prefix.length + 1), decodeRecord<T>(e.key, decoder.decode(e.value)));
    }
    return out;
  }

  /** Every live value under the prefix. */
  async values(): Promise<T[]> {
    return [...(await this.entries()).values()];
  }

  /** The same keys kept in memory by one watch (kv-mirror.ts); start() it before reading. */
  mirror(options: KvMirrorOptions): KvMirror<T> {
    return new KvMirror<T>(this.kv, this.prefix, options);
  }
}

/**
 * The prober's results in the `probe-results` bucket,
 * `<node>.<uid>.<container>.<probeType>` (contracts' probeResultKey): written
 * by the prober, read by the pod workers and the status manager.
 */
export function probeResultsStore(kv: JsonKv, node: string): JsonKvStore<ProbeResultRecord> {
  return new JsonKvStore<ProbeResultRecord>(kv, node);
}

/**
 * The pod workers' records in the `workers` bucket, `<node>.<uid>`: written
 * by the pod worker owning the pod's shard, read by the sync loop, the
 * status manager and node-status.
 */
export function podWorkersStore(kv: JsonKv, node: string): JsonKvStore<PodSyncStatusRecord> {
  return new JsonKvStore<PodSyncStatusRecord>(kv, node);
}

/**
 * The versioned API pod statuses in the `pod-status` bucket, `<node>.<uid>`:
 * written by the status manager (its entries carry more than the record),
 * read by the sync loop, the pod workers (GetPodStatus) and the prober.
 */
export function podStatusStore<T extends VersionedPodStatusRecord = VersionedPodStatusRecord>(kv: JsonKv, node: string): JsonKvStore<T> {
  return new JsonKvStore<T>(kv, node);
}
