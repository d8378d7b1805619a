/** The pod worker's KV layout: its records at <node>.<uid> (the sync loop reads them), the podManager read at <node>.pod.<uid>. */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { PodRecord, PodSyncStatusRecord } from '@app/contracts';
import { FakeKv } from '@app/nats/testing';
import type { KV } from '@app/nats';
import { KvDesiredPods } from './kv-desired-pods.js';
import { KvLeaseStore, replicaToken } from './kv-lease-store.js';
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

describe('KvLeaseStore: the replicas\' heartbeats', () => {
  it('at <node>.pod-worker-replica.<name as a key token>, the name itself in the value', async () => {
    const kv = new FakeKv('leases');
    const store = new KvLeaseStore(kv as unknown as KV, 'node-a');
    await store.announce('pod-worker@node-a#0', 1000);
    await store.announce('pod-worker@node-a#1', 2000);
    await kv.put('node-b.pod-worker-replica.x', JSON.stringify({ owner: 'other-node', expiresAt: 5 }));
    const key = `node-a.pod-worker-replica.${replicaToken('pod-worker@node-a#0')}`;
    assert.match(key, /^[-/=.\w]+$/, 'a valid KV key');
    assert.deepEqual(JSON.parse(kv.text(key) ?? ''), { owner: 'pod-worker@node-a#0', expiresAt: 1000 });
    assert.deepEqual((await store.replicas()).map((r) => `${r.owner} ${r.expiresAt}`).sort(), ['pod-worker@node-a#0 1000', 'pod-worker@node-a#1 2000']);
    await store.withdraw('pod-worker@node-a#0');
    assert.deepEqual((await store.replicas()).map((r) => r.owner), ['pod-worker@node-a#1']);
  });

  it('two names never share a token', () => {
    assert.notEqual(replicaToken('a#1'), replicaToken('a@1'));
    assert.notEqual(replicaToken('a#1'), replicaToken('a_1'));
  });
});
