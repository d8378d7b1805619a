/**
 * KvReflector: one KV watch that outlives its deaths (client-go's Reflector
 * ListAndWatch under a back-off). Checked over FakeKv and the fake clock:
 * each way a watch dies (its iterator ends, throws, or goes silent with its
 * consumer gone from the server) ends in a new watch after the back-off,
 * whose re-list reaches the handler before the writes made since; the
 * back-off doubles up to its cap and starts again once a watch synced; a
 * stopped reflector opens nothing; a handler that throws does not stop it.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { FakeClock } from '@app/clock/testing';
import type { KvWatchEntry } from '@nats-io/kv';
import { KvReflector, type KvWatchHandler } from './kv-reflector.js';
import { FakeKv } from './testing.js';

const settle = async () => {
  for (let i = 0; i < 10; i++) await new Promise<void>((r) => setImmediate(r));
};
const text = (e: KvWatchEntry) => (e.operation === 'PUT' ? new TextDecoder().decode(e.value) : 'DEL');

/** A handler that records what it was told, as "relist 2", "initial n1.a=1", "update n1.b=2", "synced", "lost <why>". */
function recordingHandler(): KvWatchHandler & { seen: string[] } {
  const seen: string[] = [];
  return {
    seen,
    relisting: (n) => void seen.push(`relist ${n}`),
    entry: (e, initial) => void seen.push(`${initial ? 'initial' : 'update'} ${e.key}=${text(e)}`),
    synced: () => void seen.push('synced'),
    lost: (why) => void seen.push(`lost ${why}`),
  };
}

const silent = { info: () => undefined, warn: () => undefined };

async function setup(opts: { livenessMs?: number } = {}) {
  const kv = new FakeKv('pods');
  await kv.put('n1.a', '1');
  await kv.put('n2.x', 'other node');
  const clock = new FakeClock();
  const handler = recordingHandler();
  const warns: Record<string, unknown>[] = [];
  const reflector = new KvReflector({ kv, key: 'n1.>', bucket: 'pods', watcher: 'test', handler, clock, logger: { ...silent, warn: (o: Record<string, unknown>) => void warns.push(o) }, livenessMs: opts.livenessMs ?? 10_000 });
  return { kv, clock, handler, warns, reflector };
}

describe('KvReflector', () => {
  it('lists, then watches: the re-list first (every key under its filter), synced, then each write', async () => {
    const { kv, handler, reflector } = await setup();
    await reflector.start();
    await kv.put('n1.b', '2');
    await kv.delete('n1.a');
    await settle();
    assert.deepEqual(handler.seen, ['relist 1', 'initial n1.a=1', 'synced', 'update n1.b=2', 'update n1.a=DEL']);
    reflector.stop();
  });

  const deaths: { name: string; kill: (kv: FakeKv, clock: FakeClock) => Promise<void>; why: RegExp; reason: string }[] = [
    { name: 'its iterator ends', kill: (kv) => Promise.resolve(kv.killWatches()), why: /the watch ended/, reason: 'ended' },
    { name: 'its iterator throws', kill: (kv) => Promise.resolve(kv.killWatches(new Error('connection closed'))), why: /connection closed/, reason: 'failed' },
    {
      name: 'its consumer is deleted on the server (the iterator stays open and silent): found by the liveness check',
      kill: async (kv, clock) => {
        kv.loseConsumers();
        await clock.step(10_000);
        await settle();
      },
      why: /consumer is gone/,
      reason: 'consumer-gone',
    },
  ];
  for (const tc of deaths) {
    it(`a watch whose ${tc.name} is listed and watched again after the back-off, the re-list first`, async () => {
      const { kv, clock, handler, warns, reflector } = await setup();
      await reflector.start();
      await tc.kill(kv, clock);
      await settle();
      assert.equal(reflector.deaths, 1, 'one death');
      assert.match(handler.seen.at(-1) ?? '', tc.why);
      assert.equal(warns.length, 1, 'one warn line');
      // Written while no watch ran: the re-list brings them.
      await kv.put('n1.a', '10');
      await kv.put('n1.c', '3');
      await clock.step(799);
      await settle();
      assert.equal(reflector.watches, 1, 'not before the back-off');
      handler.seen.length = 0;
      await clock.step(1);
      await settle();
      assert.equal(reflector.watches, 2);
      await kv.put('n1.d', '4');
      await settle();
      assert.deepEqual(handler.seen, ['relist 2', 'initial n1.a=10', 'initial n1.c=3', 'synced', 'update n1.d=4']);
      reflector.stop();
    });
  }

  it('a live watch is not restarted by the liveness check', async () => {
    const { kv, clock, reflector } = await setup();
    await reflector.start();
    await clock.step(60_000);
    await settle();
    assert.equal(reflector.watches, 1);
    assert.equal(kv.openWatches, 1);
    reflector.stop();
  });

  it('backs off 800 ms doubling to 30 s while watches cannot be opened, and starts again at 800 ms once one synced', async () => {
    const { kv, clock, reflector } = await setup();
    const opened: number[] = [];
    const failing = 8;
    let attempts = 0;
    const watch = kv.watch.bind(kv);
    kv.watch = (opts) => {
      opened.push(clock.now());
      if (++attempts <= failing) return Promise.reject(new Error('no responders'));
      return watch(opts);
    };
    void reflector.start();
    for (let i = 0; i < 120; i++) {
      await clock.step(1000);
      await settle();
    }
    const t0 = opened[0] ?? 0;
    const gaps = opened.slice(1).map((t, i) => t - (opened[i] ?? t0));
    assert.deepEqual(gaps, [800, 1600, 3200, 6400, 12800, 25600, 30000, 30000], 'back-offs of 0.8 s doubling, capped at 30 s');
    kv.killWatches();
    await settle();
    const before = opened.length;
    await clock.step(799);
    await settle();
    assert.equal(opened.length, before, 'not before 800 ms');
    await clock.step(1);
    await settle();
    assert.equal(opened.length, before + 1, 'after a synced watch, the back-off is 800 ms again');
    reflector.stop();
  });

  it('opens no watch once stopped, and a stop during the back-off ends it', async () => {
    const { kv, clock, reflector } = await setup();
    await reflector.start();
    kv.killWatches();
    await settle();
    reflector.stop();
    await clock.step(60_000);
    await settle();
    assert.equal(reflector.watches, 1);
    assert.equal(kv.openWatches, 0);
  });

  it('a handler that throws on an entry is logged; the watch goes on', async () => {
    const { kv, warns, reflector, handler } = await setup();
    const entry = handler.entry.bind(handler);
    handler.entry = (e, initial) => {
      if (e.key === 'n1.bad') throw new Error('not JSON');
      entry(e, initial);
    };
    await reflector.start();
    await kv.put('n1.bad', '{');
    await kv.put('n1.b', '2');
    await settle();
    assert.equal(handler.seen.at(-1), 'update n1.b=2');
    assert.equal(warns.length, 1);
    assert.equal(reflector.deaths, 0);
    reflector.stop();
  });
});
