/** The sync loop's KV layout, which the status manager and the pod workers read: keys pinned here. */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { PodRecord, PodSyncStatusRecord, VersionedPodStatusRecord } from '@app/contracts';
import { FakeClock } from '@app/clock/testing';
import { NotLeaderError } from '@app/leader-election';
import { silentLogger } from '@app/observability';
import { FakeKv } from '@app/nats/testing';
import { FakeLeaderFence } from '@app/leader-election/testing';
import { KvNodeState } from './kv-node-state.js';
import { KvPodStore } from './kv-pod-store.js';

const record = (uid: string): PodRecord => ({ pod: { metadata: { uid, name: uid, namespace: 'default' }, spec: { containers: [] } }, source: 'file', addedAt: 1, admitted: true });

describe('KvPodStore', () => {
  it('the podManager at <node>.pod.<uid>, the work queue at <node>.queue.<uid>', async () => {
    const kv = new FakeKv('pods');
    const store = new KvPodStore(kv, 'node-a', new FakeLeaderFence());
    await store.putPod(record('u1'));
    await store.putQueue('u1', 42);
    assert.deepEqual(JSON.parse(kv.text('node-a.pod.u1') ?? ''), record('u1'));
    assert.deepEqual(JSON.parse(kv.text('node-a.queue.u1') ?? ''), { dueAt: 42 });
    assert.deepEqual(await store.loadPods(), [record('u1')]);
    assert.deepEqual(await store.loadQueue(), new Map([['u1', 42]]));
    await store.deletePod('u1');
    await store.deleteQueue('u1');
    assert.deepEqual(await store.loadPods(), []);
    assert.deepEqual(await store.loadQueue(), new Map());
  });

  it('refuses every write once this instance is not the leader, and still reads', async () => {
    const kv = new FakeKv('pods');
    const fence = new FakeLeaderFence();
    const store = new KvPodStore(kv, 'node-a', fence);
    await store.putPod(record('u1'));
    fence.token = undefined;
    await assert.rejects(store.putPod(record('u2')), NotLeaderError);
    await assert.rejects(store.deletePod('u1'), NotLeaderError);
    await assert.rejects(store.putQueue('u1', 1), NotLeaderError);
    await assert.rejects(store.deleteQueue('u1'), NotLeaderError);
    assert.deepEqual(await store.loadPods(), [record('u1')]);
    assert.deepEqual(kv.calls.filter((c) => /^(put|create|update|delete) /.test(c)), ['put node-a.pod.u1']);
  });
});

describe('KvNodeState', () => {
  it('reads the workers\' records and the statuses at <node>.<uid>', async () => {
    const workers = new FakeKv('workers');
    const statuses = new FakeKv('pod-status');
    const rec = { syncedAt: 1 } as unknown as PodSyncStatusRecord;
    const status = { status: { phase: 'Running' }, version: 3 } as unknown as VersionedPodStatusRecord;
    await workers.put('node-a.u1', JSON.stringify(rec));
    await statuses.put('node-a.u1', JSON.stringify(status));
    await statuses.put('node-b.u2', JSON.stringify(status));
    const state = new KvNodeState({ workers, statuses, clock: new FakeClock(), logger: silentLogger() }, 'node-a');
    assert.deepEqual(await state.workerStates(), new Map([['u1', rec]]));
    assert.deepEqual(await state.podStatuses(), new Map([['u1', { phase: 'Running' }]]));
    assert.deepEqual(await state.current(['u1', 'u2']), { workers: new Map([['u1', rec]]), statuses: new Map([['u1', { phase: 'Running' }]]) });
  });

  it('keeps both buckets in memory through one watch each, from start() on', async () => {
    const workers = new FakeKv('workers');
    const statuses = new FakeKv('pod-status');
    const rec = (syncedAt: number) => ({ syncedAt }) as unknown as PodSyncStatusRecord;
    const status = { status: { phase: 'Running' }, version: 3 } as unknown as VersionedPodStatusRecord;
    await workers.put('node-a.u1', JSON.stringify(rec(1)));
    await statuses.put('node-a.u1', JSON.stringify(status));
    const state = new KvNodeState({ workers, statuses, clock: new FakeClock(), logger: silentLogger() }, 'node-a');
    assert.throws(() => state.mirrored(), /has not loaded yet/);
    await state.start();
    assert.deepEqual(state.mirrored(), { workers: new Map([['u1', rec(1)]]), statuses: new Map([['u1', { phase: 'Running' }]]) });
    await workers.put('node-a.u2', JSON.stringify(rec(2)));
    await statuses.delete('node-a.u1');
    for (let i = 0; i < 5; i++) await new Promise<void>((r) => setImmediate(r));
    assert.deepEqual(state.mirrored(), { workers: new Map([['u1', rec(1)], ['u2', rec(2)]]), statuses: new Map() });
    const before = workers.calls.length;
    state.mirrored();
    assert.equal(workers.calls.length, before, 'a read of the mirror asks the bucket nothing');
    state.stop();
    assert.equal(workers.openWatches + statuses.openWatches, 0);
  });
});
