/**
 * The pod cache's GetNewerThan (pkg/kubelet/container/cache.go
 * getIfNewerThan): the pod's entry once it, or the cache's global timestamp,
 * is strictly newer than the time asked for; until then the caller waits,
 * and every relist (a newer global timestamp) releases it, an unchanged pod
 * too. Checked on the in-memory cache and on the KV-backed one, over a
 * FakeKv bucket.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { PodCacheEntry, PodCacheGlobal } from '@app/contracts';
import { NoTraceRecorder, installTraceRecorder } from '@app/tracing';
import { kvKey, type KV } from '@app/nats';
import { FakeKv } from '@app/nats/testing';
import { FakeClock } from '@app/clock/testing';
import { silentLogger } from '@app/observability';
import { FakeTraceRecorder } from '@app/tracing/testing';
import { KvPodCache, MemoryPodCache, podCacheGlobalKey, podCacheKey, type CacheResult, type PodCache } from './pod-cache.js';


const NODE = 'n1';
const entry = (uid: string, timestamp: number): PodCacheEntry => ({ uid, name: `pod-${uid}`, namespace: 'default', timestamp, sandboxStatuses: [], containerStatuses: [], ips: [] });
/** FakeKv has the KV method the cache uses (watch). */
const asKv = (fake: FakeKv): Pick<KV, 'watch'> => fake;
const tick = async () => {
  for (let i = 0; i < 5; i++) await new Promise<void>((r) => setImmediate(r));
};

/** What a test does to a cache: the PLEG's writes, and the reads under test. */
interface Flavour {
  cache: PodCache;
  set(e: PodCacheEntry): Promise<void>;
  updateTime(t: number): Promise<void>;
  remove(uid: string): Promise<void>;
  stop(): void;
}

const flavours: { name: string; make: (initial: { entries: PodCacheEntry[]; global?: number }) => Promise<Flavour> }[] = [
  {
    name: 'MemoryPodCache',
    make: ({ entries, global }) => {
      const cache = new MemoryPodCache();
      for (const e of entries) cache.set(e);
      if (global !== undefined) cache.updateTime(global);
      return Promise.resolve({
        cache,
        set: (e) => Promise.resolve(cache.set(e)),
        updateTime: (t) => Promise.resolve(cache.updateTime(t)),
        remove: (uid) => Promise.resolve(cache.delete(uid)),
        stop: () => undefined,
      });
    },
  },
  {
    name: 'KvPodCache',
    make: async ({ entries, global }) => {
      const bucket = new FakeKv('pod-cache');
      for (const e of entries) await bucket.put(podCacheKey(NODE, e.uid), JSON.stringify(e));
      if (global !== undefined) await bucket.put(podCacheGlobalKey(NODE), JSON.stringify({ timestamp: global } satisfies PodCacheGlobal));
      const cache = new KvPodCache({ kv: asKv(bucket), node: NODE, clock: new FakeClock(), logger: silentLogger() });
      await cache.start();
      const after = async (write: Promise<unknown>) => {
        await write;
        await tick();
      };
      return {
        cache,
        set: (e) => after(bucket.put(podCacheKey(NODE, e.uid), JSON.stringify(e))),
        updateTime: (t) => after(bucket.put(podCacheGlobalKey(NODE), JSON.stringify({ timestamp: t } satisfies PodCacheGlobal))),
        remove: (uid) => after(bucket.delete(podCacheKey(NODE, uid))),
        stop: () => cache.stop(),
      };
    },
  },
];

/** The wait, and whether it has been answered yet. */
function waiting(cache: PodCache, uid: string, minTime: number, signal?: AbortSignal) {
  const w: { result?: CacheResult; error?: Error; promise: Promise<void> } = { promise: Promise.resolve() };
  w.promise = cache.getNewerThan(uid, minTime, signal).then(
    (r) => void (w.result = r),
    (err: unknown) => void (w.error = err as Error),
  );
  return w;
}

for (const flavour of flavours) {
  describe(`${flavour.name}.getNewerThan`, () => {
    const cases: { name: string; entry?: number; global?: number; minTime: number; want: { entry: boolean; timestamp: number } | 'waits' }[] = [
      { name: 'the entry is newer: at once, with the entry', entry: 200, global: 100, minTime: 150, want: { entry: true, timestamp: 200 } },
      { name: 'the entry is older but a relist since is newer: at once, with the entry, at the global time', entry: 100, global: 200, minTime: 150, want: { entry: true, timestamp: 200 } },
      { name: 'no entry, a relist is newer: at once, without an entry (the runtime has nothing for the pod)', global: 200, minTime: 150, want: { entry: false, timestamp: 200 } },
      { name: 'as new as t is not newer: it waits', entry: 150, global: 150, minTime: 150, want: 'waits' },
      { name: 'entry and relist both older: it waits', entry: 100, global: 120, minTime: 150, want: 'waits' },
      { name: 'no entry and no relist yet: it waits', minTime: 0, want: 'waits' },
    ];
    for (const tc of cases) {
      it(tc.name, async () => {
        const f = await flavour.make({ entries: tc.entry !== undefined ? [entry('a', tc.entry)] : [], ...(tc.global !== undefined ? { global: tc.global } : {}) });
        const abort = new AbortController();
        const w = waiting(f.cache, 'a', tc.minTime, abort.signal);
        await tick();
        if (tc.want === 'waits') {
          assert.equal(w.result, undefined, 'still waiting');
        } else {
          assert.ok(w.result, 'answered at once');
          assert.equal(w.result.entry !== undefined, tc.want.entry);
          assert.equal(w.result.timestamp, tc.want.timestamp);
          if (tc.want.entry) assert.equal(w.result.entry?.timestamp, tc.entry);
        }
        abort.abort();
        await w.promise;
        f.stop();
      });
    }

    it('a newer entry of the pod releases its waiter with that entry; another pod\'s waiter keeps waiting', async () => {
      const f = await flavour.make({ entries: [entry('a', 100), entry('b', 100)], global: 100 });
      const a = waiting(f.cache, 'a', 100);
      const abort = new AbortController();
      const b = waiting(f.cache, 'b', 100, abort.signal);
      await f.set(entry('a', 101));
      await a.promise;
      assert.equal(a.result?.entry?.timestamp, 101);
      assert.equal(b.result, undefined, 'b did not change and no relist happened');
      abort.abort();
      await b.promise;
      f.stop();
    });

    it('a relist (a newer global timestamp) releases every waiter, for pods that did not change and pods the runtime does not have', async () => {
      const f = await flavour.make({ entries: [entry('a', 100)], global: 100 });
      const a = waiting(f.cache, 'a', 100);
      const gone = waiting(f.cache, 'no-such-pod', 100);
      await tick();
      assert.equal(a.result, undefined);
      await f.updateTime(102);
      await Promise.all([a.promise, gone.promise]);
      assert.deepEqual(a.result, { entry: entry('a', 100), timestamp: 102 });
      assert.deepEqual(gone.result, { timestamp: 102 });
      f.stop();
    });

    it('the global timestamp never goes back', async () => {
      const f = await flavour.make({ entries: [], global: 200 });
      await f.updateTime(100);
      assert.equal(f.cache.get('a').timestamp, 200);
      f.stop();
    });

    it('a deleted entry is gone: get has none, and a waiter is released by the next relist without it', async () => {
      const f = await flavour.make({ entries: [entry('a', 100)], global: 100 });
      await f.remove('a');
      assert.deepEqual(f.cache.get('a'), { timestamp: 100 });
      const w = waiting(f.cache, 'a', 100);
      await f.updateTime(101);
      await w.promise;
      assert.deepEqual(w.result, { timestamp: 101 });
      f.stop();
    });

    it('an aborted wait rejects with an AbortError and is not answered later', async () => {
      const f = await flavour.make({ entries: [], global: 100 });
      const abort = new AbortController();
      const w = waiting(f.cache, 'a', 100, abort.signal);
      abort.abort();
      await w.promise;
      assert.equal(w.error?.name, 'AbortError');
      await f.updateTime(200);
      assert.equal(w.result, undefined);
      f.stop();
    });
  });
}

describe('KvPodCache on its bucket', () => {
  it('start reads what is already in the bucket before it resolves, and watches only its node\'s keys', async () => {
    const bucket = new FakeKv('pod-cache');
    await bucket.put(podCacheKey(NODE, 'a'), JSON.stringify(entry('a', 100)));
    await bucket.put(podCacheKey(NODE, 'b'), JSON.stringify(entry('b', 110)));
    await bucket.put(podCacheGlobalKey(NODE), JSON.stringify({ timestamp: 120 }));
    await bucket.put(podCacheGlobalKey('other-node'), JSON.stringify({ timestamp: 999 }));
    const cache = new KvPodCache({ kv: asKv(bucket), node: NODE, clock: new FakeClock(), logger: silentLogger() });
    await cache.start();
    assert.ok(bucket.calls.includes(`watch ${kvKey(NODE)}.>`), bucket.calls.join('\n'));
    assert.deepEqual(cache.get('a'), { entry: entry('a', 100), timestamp: 120 });
    assert.deepEqual(cache.get('b'), { entry: entry('b', 110), timestamp: 120 });
    cache.stop();
  });

  it('a record of a version this build does not read is refused with a logged reason; the cache keeps the entry it had (docs/adr/0034)', async () => {
    const bucket = new FakeKv('pod-cache');
    await bucket.put(podCacheKey(NODE, 'a'), JSON.stringify(entry('a', 100)));
    await bucket.put(podCacheGlobalKey(NODE), JSON.stringify({ timestamp: 120 }));
    const warnings: string[] = [];
    const logger = { info: () => undefined, warn: (obj: Record<string, unknown>, msg: string) => void warnings.push(`${msg}: ${String(obj['err'])}`) };
    const cache = new KvPodCache({ kv: asKv(bucket), node: NODE, clock: new FakeClock(), logger: logger as never });
    await cache.start();
    await bucket.put(podCacheKey(NODE, 'a'), JSON.stringify({ ...entry('a', 130), recordVersion: 2 }));
    await tick();
    assert.deepEqual(cache.get('a'), { entry: entry('a', 100), timestamp: 120 }, 'the entry it had, not the refused one, and not absent');
    assert.equal(warnings.length, 1);
    assert.match(warnings[0] ?? '', /^pod cache: refused a record of a version this service does not read: kept the previous entry: n1\.pod\.a: record version 2 is not one this service reads \(1\)/);
    await bucket.put(podCacheKey(NODE, 'a'), JSON.stringify(entry('a', 140)));
    await tick();
    assert.equal(cache.get('a')?.entry?.timestamp, 140, 'a record it reads is taken again');
    cache.stop();
  });

  it('an empty bucket: start resolves at once (nothing to catch up with)', async () => {
    const cache = new KvPodCache({ kv: asKv(new FakeKv('pod-cache')), node: NODE, clock: new FakeClock(), logger: silentLogger() });
    const first = await Promise.race([cache.start().then(() => 'started'), new Promise((r) => setTimeout(r, 1000).unref()).then(() => 'still waiting')]);
    assert.equal(first, 'started');
    cache.stop();
  });

  it('a pod\'s entry written after the catch-up is recorded as a watch hop of the pod (where it read), the catch-up is not', async () => {
    const recorder = new FakeTraceRecorder();
    installTraceRecorder(recorder);
    try {
      const bucket = new FakeKv('pod-cache');
      await bucket.put(podCacheKey(NODE, 'a'), JSON.stringify(entry('a', 100)));
      const cache = new KvPodCache({ kv: asKv(bucket), node: NODE, clock: new FakeClock(), logger: silentLogger() });
      await cache.start();
      await bucket.put(podCacheGlobalKey(NODE), JSON.stringify({ timestamp: 150 }));
      await bucket.put(podCacheKey(NODE, 'b'), JSON.stringify(entry('b', 160)));
      await tick();
      assert.deepEqual(
        recorder.hops.map((h) => [h.kind, h.podUid, h.bucket, h.key, h.revision]),
        [['kv.watch', 'b', 'pod-cache', podCacheKey(NODE, 'b'), 3]],
      );
      cache.stop();
    } finally {
      installTraceRecorder(new NoTraceRecorder());
    }
  });

  const deaths: { name: string; kill: (kv: FakeKv, clock: FakeClock) => Promise<void> }[] = [
    { name: 'its watch ends', kill: (kv) => Promise.resolve(kv.killWatches()) },
    { name: 'its watch throws', kill: (kv) => Promise.resolve(kv.killWatches(new Error('connection closed'))) },
    {
      name: 'its watch\'s consumer is deleted (the iterator silent)',
      kill: async (kv, clock) => {
        kv.loseConsumers();
        await clock.step(10_000);
      },
    },
  ];
  for (const tc of deaths) {
    it(`a pod worker waiting in getNewerThan wakes after ${tc.name}; the re-list drops a pod deleted meanwhile`, async () => {
      const bucket = new FakeKv('pod-cache');
      await bucket.put(podCacheKey(NODE, 'a'), JSON.stringify(entry('a', 100)));
      await bucket.put(podCacheKey(NODE, 'gone'), JSON.stringify(entry('gone', 100)));
      const clock = new FakeClock();
      const cache = new KvPodCache({ kv: asKv(bucket), node: NODE, clock, logger: silentLogger() });
      await cache.start();
      let woke: CacheResult | undefined;
      void cache.getNewerThan('a', 100).then((r) => (woke = r));
      await tc.kill(bucket, clock);
      await tick();
      await bucket.put(podCacheKey(NODE, 'a'), JSON.stringify(entry('a', 200)));
      await bucket.delete(podCacheKey(NODE, 'gone'));
      bucket.forget(podCacheKey(NODE, 'gone'));
      await tick();
      assert.equal(woke, undefined, 'no watch runs during the back-off');
      await clock.step(800);
      await tick();
      assert.deepEqual(woke, { entry: entry('a', 200), timestamp: 200 });
      assert.equal(cache.get('gone').entry, undefined, 'purged while no watch ran: gone after the re-list');
      cache.stop();
    });
  }

  it('stop ends the watch: later writes do not reach the cache', async () => {
    const bucket = new FakeKv('pod-cache');
    await bucket.put(podCacheGlobalKey(NODE), JSON.stringify({ timestamp: 100 }));
    const cache = new KvPodCache({ kv: asKv(bucket), node: NODE, clock: new FakeClock(), logger: silentLogger() });
    await cache.start();
    cache.stop();
    await bucket.put(podCacheGlobalKey(NODE), JSON.stringify({ timestamp: 200 }));
    await tick();
    assert.equal(cache.get('a').timestamp, 100);
  });
});
