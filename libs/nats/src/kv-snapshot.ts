/**
 * A listing of a KV bucket's keys that ends once it has what was there.
 *
 * `kv.keys()` of @nats-io/kv ends when a delivered key says that nothing is
 * pending after it, or on the consumer's idle heartbeat (5 s): on a bucket that
 * is written all the time (the sync loop's `pods`, the PLEG's `pod-cache`, the
 * workers' records) a lagging server delivers with something always pending,
 * and the listing lasts until the bucket is quiet for 5 s; it yields only keys,
 * so a reader then gets each value, one round trip per key.
 *
 * A KV watch of the last value of each key is the same consumer with the
 * values in it, and kv.watch knows where its snapshot ends: the consumer's
 * num_pending at its creation is the number of entries it delivers first
 * (every matching key's last entry then, deletes included: kv.watch marks
 * them `isUpdate: false`); what comes after is a write made since. So the
 * listing takes that many entries and stops, whatever the writers do; with a
 * count of 0 it answers at once.
 *
 * One catch: every bucket keeps one message per key (history 1), so a key
 * written again between the consumer's creation and its turn is skipped (its
 * message is gone) and comes back only with the writes made since, maybe after
 * the count. So the listing then asks the stream which keys it holds under the
 * filter (STREAM.INFO with a subjects filter) and gets the few it has not seen.
 */
import { Bucket, type KV, type KvEntry, type KvWatchEntry } from '@nats-io/kv';
import type { QueuedIterator } from '@nats-io/transport-node';

/** What kv.watch keeps in its iterator's `_data` (QueuedIteratorImpl: "for use by extenders"): its consumer. */
export interface WatchConsumer {
  /**
   * With `cached`, the consumer's info as created: `num_pending` is the count of the initial entries; without, asked
   * of the server (rejects with a ConsumerNotFoundError once the consumer is gone: KvReflector's liveness check).
   */
  info(cached: boolean): Promise<{ num_pending: number }>;
  /** Removes the consumer from the server (else an ordered consumer lingers 5 min after its subscription). */
  delete(): Promise<boolean>;
}

/** A watch's consumer, or an error naming the library when a version of it keeps it elsewhere. */
export function watchConsumer(watch: QueuedIterator<KvWatchEntry>): WatchConsumer {
  const data = (watch as { _data?: Partial<WatchConsumer> })._data;
  if (typeof data?.info !== 'function' || typeof data.delete !== 'function') {
    throw new Error("@nats-io/kv's watch iterator does not carry its consumer in _data: kvSnapshot needs the consumer's initial num_pending");
  }
  return data as WatchConsumer;
}

/**
 * How many entries a KV watch (of last values) delivers before the writes made
 * since it started: every matching key's last entry then, deletes included
 * (those kv.watch marks `isUpdate: false`). A mirror has caught up once it has
 * applied that many; 0 means at once.
 */
export async function watchInitialCount(watch: QueuedIterator<KvWatchEntry>): Promise<number> {
  return (await watchConsumer(watch).info(true)).num_pending;
}

/** What kvSnapshot uses of a bucket (a fake adds `keysNow`, which a real bucket asks its stream). */
export type SnapshotKv = Pick<KV, 'watch' | 'get'> & { keysNow?(filter: string): Promise<string[]> };

/** Every key the bucket holds under `filter` now, deleted ones (their markers) included. */
async function keysNow(kv: SnapshotKv, filter: string): Promise<string[]> {
  if (kv instanceof Bucket) {
    const info = await kv.jsm.streams.info(kv.stream, { subjects_filter: kv.fullKeyName(kv.encodeKey(filter)) });
    return Object.keys(info.state.subjects ?? {}).map((s) => kv.decodeKey(s.substring(kv.prefixLen)));
  }
  if (kv.keysNow) return kv.keysNow(filter);
  throw new Error('kvSnapshot needs a bucket of @nats-io/kv (or a fake with keysNow)');
}

/**
 * The last live entry of every key matching `filter` (a NATS subject filter
 * over keys: `<node>.pod.>`) as of the call, each at its value then or a newer
 * one; deleted and purged keys are left out. One consumer creation, the
 * entries themselves, one STREAM.INFO and a get per key written again while
 * listed (usually none); the consumer is removed afterwards.
 */
export async function kvSnapshot(kv: SnapshotKv, filter: string): Promise<KvEntry[]> {
  const watch = await kv.watch({ key: filter });
  let consumer: WatchConsumer | undefined;
  const seen = new Map<string, KvEntry>();
  try {
    consumer = watchConsumer(watch);
    const count = await watchInitialCount(watch);
    let delivered = 0;
    if (count > 0) {
      for await (const e of watch) {
        seen.set(e.key, e);
        if (++delivered >= count) break;
      }
    }
    if (delivered < count) throw new Error(`the listing of ${filter} ended after ${delivered} of its ${count} entries`);
  } finally {
    watch.stop();
    // A listing does not wait for the clean-up; a failed delete only leaves the consumer to expire.
    void consumer?.delete().catch(() => undefined);
  }
  if (seen.size > 0) {
    const skipped = (await keysNow(kv, filter)).filter((k) => !seen.has(k));
    for (const e of await Promise.all(skipped.map((k) => kv.get(k)))) if (e) seen.set(e.key, e);
  }
  return [...seen.values()].filter((e) => e.operation === 'PUT');
}
