/**
 * JsonKvStore.entries() on a bucket that is written all the time, against a
 * real nats-server: the sync loop writes `pods` on every config op, the PLEG
 * `pod-cache` on every relist, the pod workers `workers`. A listing that ends
 * only when the consumer has nothing pending (or on the 5 s idle heartbeat)
 * lasts as long as the writes go on; the listing must end once the keys that
 * were there at the call are delivered, each at its value of then or a newer
 * one, the deleted ones left out, and an empty prefix must answer at once;
 * the values come with the listing (not one more request per key).
 * The reader connects as a service's NATS user, so that the listing needs no
 * permission beyond the bucket's (stop() fails on a violation).
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { connect, type NatsConnection } from '@nats-io/transport-node';
import { jetstreamManager } from '@nats-io/jetstream';
import { JsonKvStore, ensureBuckets, inboxPrefix, kvKey, type KV } from '@app/nats';
import { startNats, type NatsServer } from '../deploy/local/stack.js';

const NODE = 'busy-node';
const KEYS = 50;
/** The bound for one listing: generous against a few round trips, well under the 5 s idle heartbeat. */
const BOUND_MS = 2000;

interface Rec {
  id: string;
  n: number;
}

describe('JsonKvStore.entries on a busy bucket (real nats-server)', { timeout: 120_000 }, () => {
  let nats: NatsServer;
  let writerNc: NatsConnection;
  let readerNc: NatsConnection;
  let writerKv: KV;
  let readerKv: KV;

  before(async () => {
    nats = await startNats();
    writerNc = await connect({ servers: nats.url, name: 'kv-entries-writer', ...nats.auth() });
    readerNc = await connect({ servers: nats.url, name: 'kv-entries-reader', ...nats.auth('status-manager'), inboxPrefix: inboxPrefix('status-manager') });
    writerKv = (await ensureBuckets(writerNc, ['pods'])).pods;
    readerKv = (await ensureBuckets(readerNc, ['pods'])).pods;
  });

  after(async () => {
    await readerNc?.close();
    await writerNc?.close();
    await nats?.stop();
  });

  /** Puts every few ms until stopped: to the listed prefix (existing keys and new ones) and to other prefixes. */
  function busyWriter(prefixStore: JsonKvStore<Rec>): { stop: () => Promise<number> } {
    let running = true;
    let writes = 0;
    const other = new JsonKvStore<Rec>(writerKv, NODE, 'queue');
    const otherNode = new JsonKvStore<Rec>(writerKv, 'other-node', 'pod');
    // Several writers, each putting as soon as its last put is acknowledged.
    const loop = Promise.all(
      [0, 1, 2, 3].map(async (w) => {
        for (let i = w; running; i += 4) {
          const id = `u${i % KEYS}`;
          await Promise.all([
            prefixStore.put(id, { id, n: 1000 + i }),
            prefixStore.put(`late-${i % 5}`, { id: `late-${i % 5}`, n: i }),
            other.put(`q${i % 7}`, { id: `q${i % 7}`, n: i }),
            otherNode.put(id, { id, n: i }),
          ]);
          writes += 4;
        }
      }),
    );
    return {
      stop: async () => {
        running = false;
        await loop;
        return writes;
      },
    };
  }

  it(`lists every key that was there at the call, at least as new, in under ${BOUND_MS} ms while another writer keeps writing`, async () => {
    const writer = new JsonKvStore<Rec>(writerKv, NODE, 'pod');
    for (let i = 0; i < KEYS; i++) await writer.put(`u${i}`, { id: `u${i}`, n: i });
    for (let i = 0; i < 5; i++) await writer.put(`gone-${i}`, { id: `gone-${i}`, n: i });
    for (let i = 0; i < 5; i++) await writer.delete(`gone-${i}`);
    const reader = new JsonKvStore<Rec>(readerKv, NODE, 'pod');
    const busy = busyWriter(writer);
    const timings: number[] = [];
    const requestCounts: number[] = [];
    try {
      await new Promise((r) => setTimeout(r, 200));
      for (let round = 0; round < 5; round++) {
        // What is there before the call: each key's value as a reader sees it now.
        const before = new Map<string, number>();
        for (let i = 0; i < KEYS; i++) before.set(`u${i}`, (await reader.get(`u${i}`))?.n ?? -1);
        const sent = readerNc.stats().outMsgs;
        const t0 = performance.now();
        const listed = await reader.entries();
        const ms = performance.now() - t0;
        const requests = readerNc.stats().outMsgs - sent;
        timings.push(Math.round(ms));
        requestCounts.push(requests);
        assert.ok(ms < BOUND_MS, `round ${round}: entries() took ${Math.round(ms)} ms on a busy bucket (bound ${BOUND_MS} ms)`);
        // The values come with the listing: a few requests (the consumer's creation and removal, the
        // stream's keys) and a get per key written again while listed, not a get per key.
        assert.ok(requests < KEYS / 2, `round ${round}: entries() of ${listed.size} keys sent ${requests} messages to the server`);
        for (const [id, n] of before) {
          const got = listed.get(id);
          assert.ok(got !== undefined, `round ${round}: ${id} was there before the call and is not listed`);
          assert.equal(got.id, id);
          assert.ok(got.n >= n, `round ${round}: ${id} listed at ${got.n}, older than ${n} read before the call`);
        }
        for (const id of listed.keys()) assert.ok(/^(u\d+|late-\d)$/.test(id), `round ${round}: ${id} is not a live key under ${NODE}.pod`);
        for (let i = 0; i < 5; i++) assert.ok(!listed.has(`gone-${i}`), `round ${round}: the deleted gone-${i} is listed`);
      }
    } finally {
      const writes = await busy.stop();
      process.stdout.write(`# entries() of ${KEYS}+ keys during ${writes} writes: ${timings.join(', ')} ms; messages sent: ${requestCounts.join(', ')}\n`);
    }
  });

  it('a listing leaves no consumer behind on the server', async () => {
    const jsm = await jetstreamManager(writerNc);
    const consumers = async () => (await jsm.consumers.list('KV_pods').next()).length;
    const before = await consumers();
    for (let i = 0; i < 5; i++) await new JsonKvStore<Rec>(readerKv, NODE, 'pod').entries();
    // A listing deletes its consumer without waiting for the answer (kv-snapshot.ts): give the deletes a generous
    // while on a loaded machine, far from the 5 minutes a forgotten consumer would linger.
    const deadline = Date.now() + 10_000;
    while ((await consumers()) > before && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
    assert.equal(await consumers(), before, 'consumers of KV_pods left by 5 listings (an ordered consumer otherwise lingers 5 min)');
  });

  it('an empty prefix answers at once, busy bucket or not', async () => {
    const busy = busyWriter(new JsonKvStore<Rec>(writerKv, NODE, 'pod'));
    try {
      const t0 = performance.now();
      assert.deepEqual(await new JsonKvStore<Rec>(readerKv, NODE, 'nothing-here').entries(), new Map());
      const ms = performance.now() - t0;
      assert.ok(ms < BOUND_MS, `an empty listing took ${Math.round(ms)} ms`);
    } finally {
      await busy.stop();
    }
    const t0 = performance.now();
    assert.deepEqual(await new JsonKvStore<Rec>(readerKv, 'quiet-node', 'pod').entries(), new Map());
    assert.ok(performance.now() - t0 < BOUND_MS, `an empty listing on a quiet bucket took ${Math.round(performance.now() - t0)} ms`);
  });

  it('a quiet prefix lists its keys at once, the deleted ones left out', async () => {
    const store = new JsonKvStore<Rec>(writerKv, 'quiet-node-2', 'pod');
    await store.put('a', { id: 'a', n: 1 });
    await store.put('b', { id: 'b', n: 2 });
    await store.put('a', { id: 'a', n: 3 });
    await store.delete('b');
    await store.put('c', { id: 'c', n: 4 });
    const t0 = performance.now();
    assert.deepEqual(
      await new JsonKvStore<Rec>(readerKv, 'quiet-node-2', 'pod').entries(),
      new Map([
        ['a', { id: 'a', n: 3 }],
        ['c', { id: 'c', n: 4 }],
      ]),
    );
    assert.ok(performance.now() - t0 < BOUND_MS, `a quiet listing took ${Math.round(performance.now() - t0)} ms`);
    assert.equal(kvKey('quiet-node-2', 'pod'), store.prefix);
  });
});
