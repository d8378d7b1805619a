/**
 * KvMirror: a bucket's JSON documents under a prefix, kept in memory by one
 * watch. Checked over FakeKv: the initial load (nothing read before it),
 * updates and deletes as they come, the writer's own writes at once and
 * never undone by an older entry, and a watch that dies (ends, or throws)
 * re-created after the retry period, the mirror read again, with a log
 * line and no unhandled rejection.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { FakeClock } from '@app/clock/testing';
import { KvMirror } from './kv-mirror.js';
import { FakeKv } from './testing.js';

interface Doc {
  v: number;
}

const settle = async () => {
  for (let i = 0; i < 10; i++) await new Promise<void>((r) => setImmediate(r));
};

/** A logger that keeps what it is told. */
function recordingLogger() {
  const lines: { level: string; msg: string; obj: Record<string, unknown> }[] = [];
  return {
    lines,
    info: (obj: Record<string, unknown>, msg: string) => void lines.push({ level: 'info', msg, obj }),
    warn: (obj: Record<string, unknown>, msg: string) => void lines.push({ level: 'warn', msg, obj }),
  };
}

async function setup(initial: Record<string, Doc> = {}) {
  const kv = new FakeKv('workers');
  for (const [k, v] of Object.entries(initial)) await kv.put(k, JSON.stringify(v));
  const clock = new FakeClock();
  const logger = recordingLogger();
  const mirror = new KvMirror<Doc>(kv, 'n1', { clock, logger: logger as never, bucket: 'workers', retryMs: 1000 });
  return { kv, clock, logger, mirror };
}

describe('KvMirror', () => {
  it('reads nothing before its initial values are in, then holds every key under its prefix', async () => {
    const { kv, mirror } = await setup({ 'n1.a': { v: 1 }, 'n1.b': { v: 2 }, 'n2.c': { v: 3 } });
    await kv.delete('n1.b');
    assert.throws(() => mirror.entries(), /has not loaded yet/);
    await mirror.start();
    assert.equal(mirror.ready, true);
    assert.deepEqual(mirror.entries(), new Map([['a', { v: 1 }]]), 'a deleted key and another prefix left out');
    assert.deepEqual(mirror.get('a'), { v: 1 });
    assert.equal(kv.calls.filter((c) => c.startsWith('watch')).length, 1);
    mirror.stop();
  });

  it('loads an empty prefix at once', async () => {
    const { mirror } = await setup({ 'n2.c': { v: 3 } });
    await mirror.start();
    assert.deepEqual(mirror.entries(), new Map());
    mirror.stop();
  });

  const updates: { name: string; write: (kv: FakeKv) => Promise<unknown>; want: Map<string, Doc> }[] = [
    { name: 'a new key', write: (kv) => kv.put('n1.z', JSON.stringify({ v: 9 })), want: new Map([['a', { v: 1 }], ['z', { v: 9 }]]) },
    { name: 'a key written again', write: (kv) => kv.put('n1.a', JSON.stringify({ v: 2 })), want: new Map([['a', { v: 2 }]]) },
    { name: 'a key deleted', write: (kv) => kv.delete('n1.a'), want: new Map() },
    { name: "another prefix's key", write: (kv) => kv.put('n2.a', JSON.stringify({ v: 5 })), want: new Map([['a', { v: 1 }]]) },
  ];
  it('refuses a record of a version this build does not read with a logged reason, and keeps the value it had (docs/adr/0034)', async () => {
    const { kv, mirror, logger } = await setup({ 'n1.a': { v: 1 } });
    await mirror.start();
    await kv.put('n1.a', JSON.stringify({ v: 2, recordVersion: 2 }));
    await kv.put('n1.b', JSON.stringify({ v: 3, recordVersion: 9 }));
    await settle();
    assert.deepEqual(mirror.entries(), new Map([['a', { v: 1 }]]), 'a keeps what it had; b, never readable, is not there');
    assert.deepEqual(
      logger.lines.filter((l) => l.level === 'warn').map((l) => [l.msg, l.obj['key']]),
      [['KV mirror: refused a record of a version this service does not read: kept the previous value', 'n1.a'], ['KV mirror: refused a record of a version this service does not read: kept the previous value', 'n1.b']],
    );
    await kv.put('n1.a', JSON.stringify({ v: 4 }));
    await settle();
    assert.deepEqual(mirror.get('a'), { v: 4 }, 'a record it reads is taken again');
    mirror.stop();
  });

  for (const tc of updates) {
    it(`follows ${tc.name} without reading the bucket again`, async () => {
      const { kv, mirror } = await setup({ 'n1.a': { v: 1 } });
      await mirror.start();
      const calls = kv.calls.length;
      await tc.write(kv);
      await settle();
      assert.deepEqual(mirror.entries(), tc.want);
      assert.deepEqual(kv.calls.slice(calls).filter((c) => !/^(put|delete) /.test(c)), [], 'no listing, no get');
      mirror.stop();
    });
  }

  it("keeps the writer's own write until a newer entry comes, never an older one", async () => {
    const { kv, mirror } = await setup({ 'n1.a': { v: 1 } });
    await mirror.start();
    // The watch is behind: the writer's put is noted first, its watch brings older entries after it.
    const rev = await kv.put('n1.a', JSON.stringify({ v: 2 }));
    mirror.noteWrite('a', { v: 3 }, rev + 1);
    await settle();
    assert.deepEqual(mirror.get('a'), { v: 3 }, 'the entry at the older revision is ignored');
    await kv.put('n1.a', JSON.stringify({ v: 4 }));
    await kv.put('n1.a', JSON.stringify({ v: 5 }));
    await settle();
    assert.deepEqual(mirror.get('a'), { v: 5 }, 'newer entries apply');
    // A delete carries no revision: it holds until the delete's own entry, and a put after it applies.
    mirror.noteWrite('a', undefined);
    assert.equal(mirror.get('a'), undefined);
    await kv.delete('n1.a');
    await kv.put('n1.a', JSON.stringify({ v: 6 }));
    await settle();
    assert.deepEqual(mirror.get('a'), { v: 6 });
    mirror.stop();
  });

  const deaths: { name: string; kill: (kv: FakeKv) => void }[] = [
    { name: 'ends', kill: (kv) => kv.killWatches() },
    { name: 'throws', kill: (kv) => kv.killWatches(new Error('consumer deleted')) },
  ];
  for (const tc of deaths) {
    it(`re-creates a watch that ${tc.name}, after the retry period, and reads the bucket again`, async () => {
      const { kv, clock, logger, mirror } = await setup({ 'n1.a': { v: 1 }, 'n1.b': { v: 2 } });
      const unhandled: unknown[] = [];
      const onUnhandled = (e: unknown) => void unhandled.push(e);
      process.on('unhandledRejection', onUnhandled);
      try {
        await mirror.start();
        tc.kill(kv);
        await settle();
        assert.equal(kv.openWatches, 0);
        assert.equal(logger.lines.filter((l) => l.level === 'warn').length, 1, 'one log line');
        assert.match(logger.lines.find((l) => l.level === 'warn')?.msg ?? '', /a KV watch died: listed and watched again/);
        // Meanwhile: one key changed, one deleted, one purged without a marker. The old map still serves reads.
        await kv.put('n1.a', JSON.stringify({ v: 10 }));
        await kv.delete('n1.b');
        await kv.put('n1.c', JSON.stringify({ v: 3 }));
        kv.forget('n1.c');
        assert.deepEqual(mirror.entries(), new Map([['a', { v: 1 }], ['b', { v: 2 }]]));
        await clock.step(999);
        assert.equal(mirror.watches, 1, 'not before the retry period');
        await clock.step(1);
        await settle();
        assert.equal(mirror.watches, 2);
        assert.equal(kv.openWatches, 1);
        assert.deepEqual(mirror.entries(), new Map([['a', { v: 10 }]]));
        await kv.put('n1.d', JSON.stringify({ v: 4 }));
        await settle();
        assert.deepEqual(mirror.entries(), new Map([['a', { v: 10 }], ['d', { v: 4 }]]), 'the new watch follows');
        assert.deepEqual(unhandled, []);
      } finally {
        mirror.stop();
        process.off('unhandledRejection', onUnhandled);
      }
    });
  }

  it('retries a watch that cannot be opened, and start() resolves once one has loaded', async () => {
    const { kv, clock, logger, mirror } = await setup({ 'n1.a': { v: 1 } });
    kv.failNext('watch', new Error('no responders'));
    let loaded = false;
    void mirror.start().then(() => (loaded = true));
    await settle();
    assert.equal(loaded, false);
    assert.match(String(logger.lines.at(-1)?.obj['err']), /no responders/);
    await clock.step(1000);
    await settle();
    assert.equal(loaded, true);
    assert.deepEqual(mirror.entries(), new Map([['a', { v: 1 }]]));
    mirror.stop();
  });

  it('opens no watch again once stopped', async () => {
    const { kv, clock, mirror } = await setup({ 'n1.a': { v: 1 } });
    await mirror.start();
    mirror.stop();
    await settle();
    await clock.step(5000);
    await settle();
    assert.equal(mirror.watches, 1);
    assert.equal(kv.openWatches, 0);
  });

  it('leaves out a value that is not JSON, with a log line, and goes on', async () => {
    const { kv, logger, mirror } = await setup({ 'n1.a': { v: 1 } });
    await kv.put('n1.bad', '{not json');
    await mirror.start();
    assert.deepEqual(mirror.entries(), new Map([['a', { v: 1 }]]));
    assert.ok(logger.lines.some((l) => l.level === 'warn' && /not JSON/.test(l.msg)));
    mirror.stop();
  });
});
