/** The pod worker's KV layout: its records at <node>.<uid> (the sync loop reads them), the podManager read at <node>.pod.<uid>. */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { PodRecord, PodSyncStatusRecord } from '@app/contracts';
import { FakeKv } from '@app/nats/testing';
import { KvDesiredPods } from './kv-desired-pods.js';
import { KvWorkerStore } from './kv-worker-store.js';

describe('KvWorkerStore', () => {
  it('saves, loads and deletes a pod\'s record at <node>.<uid>', async () => {
    const kv = new FakeKv('workers');
    const store = new KvWorkerStore(kv, 'node-a');
    const rec = { syncedAt: 5 } as unknown as PodSyncStatusRecord;
    await store.save('u1', rec);
    assert.deepEqual(JSON.parse(kv.text('node-a.u1') ?? ''), rec);
    assert.deepEqual(await store.load('u1'), rec);
    await store.delete('u1');
    assert.equal(await store.load('u1'), undefined);
  });
});

describe('KvDesiredPods', () => {
  it('reads the sync loop\'s pods of its node by UID', async () => {
    const kv = new FakeKv('pods');
    const rec: PodRecord = { pod: { metadata: { uid: 'u1', name: 'p', namespace: 'default' }, spec: { containers: [] } }, source: 'file', addedAt: 1, admitted: true };
    await kv.put('node-a.pod.u1', JSON.stringify(rec));
    await kv.put('node-a.queue.u1', JSON.stringify({ dueAt: 1 }));
    await kv.put('node-b.pod.u2', JSON.stringify(rec));
    assert.deepEqual(await new KvDesiredPods(kv, 'node-a').all(), new Map([['u1', rec]]));
  });
});
