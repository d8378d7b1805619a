import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { KvEntry, KvWatchEntry } from '@nats-io/kv';
import { FakeKv } from './testing.js';
import { kvSnapshot, type SnapshotKv } from './kv-snapshot.js';

const encoder = new TextEncoder();

function entry(key: string, revision: number, value: string, operation: KvEntry['operation'] = 'PUT'): KvWatchEntry {
  const bytes = encoder.encode(value);
  return {
    bucket: 'b', key, rawKey: key, value: bytes, created: new Date(0), revision, operation, length: bytes.length, isUpdate: false,
    json: <T>() => JSON.parse(value) as T,
    string: () => value,
  };
}

/**
 * A bucket whose watch says `count` entries come first and then delivers
 * `deliveries` (what a server does when a key is written again between the
 * consumer's creation and its turn: that key's message is gone, a later write
 * takes its place), and whose stream holds `stored`.
 */
function scriptedKv(count: number, deliveries: KvWatchEntry[], stored: KvWatchEntry[]) {
  const calls: string[] = [];
  let deleted = false;
  const kv: SnapshotKv = {
    watch: () => {
      async function* iterate() {
        await Promise.resolve();
        yield* deliveries;
      }
      return Promise.resolve(Object.assign(iterate(), {
        stop: () => undefined, getProcessed: () => 0, getPending: () => 0, getReceived: () => 0,
        _data: { info: () => Promise.resolve({ num_pending: count }), delete: () => ((deleted = true), Promise.resolve(true)) },
      }));
    },
    get: (key: string) => {
      calls.push(`get ${key}`);
      return Promise.resolve(stored.find((e) => e.key === key) ?? null);
    },
    keysNow: () => Promise.resolve(stored.map((e) => e.key)),
  };
  return { kv, calls, deleted: () => deleted };
}

describe('kvSnapshot', () => {
  it('takes the values from the watch: no get per key, deleted keys left out, the keys outside the filter not asked', async () => {
    const kv = new FakeKv();
    await kv.put('n.pod.a', '1');
    await kv.put('n.pod.b', '2');
    await kv.delete('n.pod.b');
    await kv.put('n.pod.c', '3');
    await kv.put('n.queue.a', '4');
    await kv.put('m.pod.a', '5');
    const listed = await kvSnapshot(kv, 'n.pod.>');
    assert.deepEqual(listed.map((e) => `${e.key}=${e.string()}`), ['n.pod.a=1', 'n.pod.c=3']);
    assert.deepEqual(kv.calls.filter((c) => c.startsWith('get')), []);
  });

  it('ends after the initial count, though writes go on, and removes its consumer', async () => {
    const { kv, calls, deleted } = scriptedKv(2, [entry('n.pod.a', 1, '1'), entry('n.pod.b', 2, '2'), entry('n.pod.a', 3, 'later')], [entry('n.pod.a', 3, 'later'), entry('n.pod.b', 2, '2')]);
    const listed = await kvSnapshot(kv, 'n.pod.>');
    assert.deepEqual(listed.map((e) => `${e.key}=${e.string()}`), ['n.pod.a=1', 'n.pod.b=2']);
    assert.deepEqual(calls, []);
    assert.ok(deleted());
  });

  it('gets a key written again while listed, which the watch skipped (history 1: its message was gone)', async () => {
    // b was there at the start (count 3 with a and c), was written again before its turn, and the
    // watch delivered a later write of a in its place: b is only found by asking the stream.
    const { kv, calls } = scriptedKv(3, [entry('n.pod.a', 1, '1'), entry('n.pod.c', 3, '3'), entry('n.pod.a', 5, '1b')], [entry('n.pod.a', 5, '1b'), entry('n.pod.b', 4, '2b'), entry('n.pod.c', 3, '3')]);
    const listed = await kvSnapshot(kv, 'n.pod.>');
    assert.deepEqual(new Map(listed.map((e) => [e.key, e.string()])), new Map([['n.pod.a', '1b'], ['n.pod.b', '2b'], ['n.pod.c', '3']]));
    assert.deepEqual(calls, ['get n.pod.b']);
  });

  it('an empty prefix answers at once, without asking the stream', async () => {
    const { kv, calls } = scriptedKv(0, [], [entry('n.pod.a', 1, 'x')]);
    assert.deepEqual(await kvSnapshot(kv, 'n.queue.>'), []);
    assert.deepEqual(calls, []);
  });

  it('a watch that ends before its count rejects, it is not read as a shorter listing', async () => {
    const { kv } = scriptedKv(3, [entry('n.pod.a', 1, '1')], [entry('n.pod.a', 1, '1')]);
    await assert.rejects(kvSnapshot(kv, 'n.pod.>'), /ended after 1 of its 3 entries/);
  });

  it('a failing bucket rejects', async () => {
    const kv = new FakeKv();
    kv.failNext('watch', new Error('timeout'));
    await assert.rejects(kvSnapshot(kv, 'n.pod.>'), /timeout/);
  });
});
