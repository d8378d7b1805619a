import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { FakeKv } from './testing.js';
import { RecordVersionError } from '@app/contracts';
import { JsonKvStore } from './json-kv-store.js';

interface Rec {
  n: number;
}

describe('JsonKvStore', () => {
  it('puts JSON under <node>.<parts>.<id> and reads it back', async () => {
    const kv = new FakeKv();
    const store = new JsonKvStore<Rec>(kv, 'node-a', 'pod');
    await store.put('uid-1', { n: 1 });
    assert.equal(kv.text('node-a.pod.uid-1'), '{"n":1}');
    assert.deepEqual(await store.get('uid-1'), { n: 1 });
  });

  it('a node name with dots is one key token', async () => {
    const kv = new FakeKv();
    await new JsonKvStore<Rec>(kv, 'node.example.com').put('uid-1', { n: 1 });
    const [key] = kv.calls.map((c) => c.split(' ')[1]);
    assert.equal(key?.split('.').length, 2, `key ${key}`);
  });

  const absent: { name: string; setup: (kv: FakeKv, store: JsonKvStore<Rec>) => Promise<void> }[] = [
    { name: 'never written', setup: () => Promise.resolve() },
    { name: 'deleted', setup: async (_kv, store) => {
      await store.put('uid-1', { n: 1 });
      await store.delete('uid-1');
    } },
    { name: 'written empty', setup: async (kv) => void (await kv.put('node-a.pod.uid-1', '')) },
  ];
  for (const tc of absent) {
    it(`get is undefined for a key ${tc.name}`, async () => {
      const kv = new FakeKv();
      const store = new JsonKvStore<Rec>(kv, 'node-a', 'pod');
      await tc.setup(kv, store);
      assert.equal(await store.get('uid-1'), undefined);
      assert.deepEqual(await store.entries(), new Map());
    });
  }

  it('entries lists the live values under its prefix only, by the rest of the key', async () => {
    const kv = new FakeKv();
    const pods = new JsonKvStore<Rec>(kv, 'node-a', 'pod');
    const queue = new JsonKvStore<Rec>(kv, 'node-a', 'queue');
    const other = new JsonKvStore<Rec>(kv, 'node-b', 'pod');
    await pods.put('u1', { n: 1 });
    await pods.put('u2', { n: 2 });
    await pods.delete('u2');
    await pods.put('u3', { n: 3 });
    await queue.put('u1', { n: 10 });
    await other.put('u1', { n: 100 });
    assert.deepEqual(await pods.entries(), new Map([['u1', { n: 1 }], ['u3', { n: 3 }]]));
    assert.deepEqual(await pods.values(), [{ n: 1 }, { n: 3 }]);
    assert.deepEqual(await new JsonKvStore<Rec>(kv, 'node-a').entries(), new Map([['pod.u1', { n: 1 }], ['pod.u3', { n: 3 }], ['queue.u1', { n: 10 }]]));
  });

  it('a record of a version this build does not read is refused (RecordVersionError naming the key), never read as absent (docs/adr/0034)', async () => {
    const kv = new FakeKv();
    const store = new JsonKvStore<Rec>(kv, 'node-a', 'pod');
    await kv.put('node-a.pod.u1', JSON.stringify({ n: 1, recordVersion: 2 }));
    await assert.rejects(store.get('u1'), (err: unknown) => err instanceof RecordVersionError && /^node-a\.pod\.u1: record version 2 is not one this service reads \(1\)/.test(err.message));
    await assert.rejects(store.entries(), RecordVersionError);
    await kv.put('node-a.pod.u1', JSON.stringify({ n: 1, recordVersion: 1, later: true }));
    assert.deepEqual(await store.get('u1'), { n: 1, recordVersion: 1, later: true }, 'version 1, and the field it does not know kept');
  });

  it('a failing bucket rejects, it is not read as absent', async () => {
    const kv = new FakeKv();
    const store = new JsonKvStore<Rec>(kv, 'node-a', 'pod');
    kv.failNext('get', new Error('timeout'));
    await assert.rejects(store.get('u1'), /timeout/);
    kv.failNext('put', new Error('no responders'));
    await assert.rejects(store.put('u1', { n: 1 }), /no responders/);
  });
});
