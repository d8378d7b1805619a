/**
 * The pod worker's KV layout: its records at <node>.<uid> (the sync loop
 * reads them), the podManager read at <node>.pod.<uid>, the prober's results
 * at <node>.<uid>.<container>.<probeType>, the status manager's statuses at
 * <node>.<uid>.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { Pod, PodRecord, PodSyncStatusRecord, ProbeResultRecord, ProbeType } from '@app/contracts';
import { FakeClock } from '@app/clock/testing';
import { FakeKv } from '@app/nats/testing';
import { silentLogger } from '@app/observability';
import type { KV } from '@app/nats';
import { KvDesiredPods } from './kv-desired-pods.js';
import { KvLeaseStore, replicaToken } from './kv-lease-store.js';
import { KvPodStatusProvider } from './kv-pod-status-provider.js';
import { KvProbeResults } from './kv-probe-results.js';
import { KvWorkerStore } from './kv-worker-store.js';
import { NotLeaderError } from '@app/leader-election';
import { ShardFences } from '../shards.js';

describe('KvWorkerStore', () => {
  it('saves, loads and deletes a pod\'s record at <node>.<uid>', async () => {
    const kv = new FakeKv('workers');
    const store = new KvWorkerStore({ kv, node: 'node-a', clock: new FakeClock(), logger: silentLogger() });
    const rec = { syncedAt: 5 } as unknown as PodSyncStatusRecord;
    await store.save('u1', rec);
    assert.deepEqual(JSON.parse(kv.text('node-a.u1') ?? ''), rec);
    assert.deepEqual(await store.load('u1'), rec);
    await store.delete('u1');
    assert.equal(await store.load('u1'), undefined);
  });

  it('a rewrite keeps the fields a newer pod worker wrote that this one does not know, and clears the known ones it leaves out (docs/adr/0034)', async () => {
    const kv = new FakeKv('workers');
    await kv.put('node-a.u1', JSON.stringify({ syncedAt: 1, terminatingAt: 2, fromANewerWorker: { x: 1 } }));
    const store = new KvWorkerStore({ kv, node: 'node-a', clock: new FakeClock(), logger: silentLogger() });
    await store.start();
    await store.save('u1', { syncedAt: 9 });
    assert.deepEqual(JSON.parse(kv.text('node-a.u1') ?? ''), { syncedAt: 9, fromANewerWorker: { x: 1 } });
    store.stop();
  });

  it('writes and deletes a record only while the fence of the pod\'s shard holds (its lease, as last written, not run out)', async () => {
    const kv = new FakeKv('workers');
    const clock = new FakeClock(1000);
    const fences = new ShardFences({ clock, leaseMs: 4000, shardCount: 1 });
    const store = new KvWorkerStore({ kv, node: 'node-a', clock, logger: silentLogger(), fences });
    const rec = { syncedAt: 5 } as unknown as PodSyncStatusRecord;
    await assert.rejects(store.save('u1', rec), NotLeaderError, 'not ours');
    fences.hold(0, { revision: 2, expiresAt: 5000 });
    await store.save('u1', rec);
    await clock.step(3000); // the lease has a quarter left: another replica may take it before this write lands
    await assert.rejects(store.save('u1', { syncedAt: 6 }), /not the owner of pod-worker shard 0: refused to write the workers record of pod u1/);
    await assert.rejects(store.delete('u1'), NotLeaderError);
    assert.deepEqual(JSON.parse(kv.text('node-a.u1') ?? ''), rec, 'the record as the owner last wrote it');
  });

  it('keeps the records in memory from start() on; its own writes are there at once, before its watch brings them', async () => {
    const kv = new FakeKv('workers');
    const rec = (syncedAt: number) => ({ syncedAt }) as unknown as PodSyncStatusRecord;
    await kv.put('node-a.u1', JSON.stringify(rec(1)));
    await kv.put('node-b.u9', JSON.stringify(rec(9)));
    const store = new KvWorkerStore({ kv, node: 'node-a', clock: new FakeClock(), logger: silentLogger() });
    await store.start();
    assert.deepEqual(store.mirrored(), new Map([['u1', rec(1)]]));
    const saved = rec(2);
    await store.save('u2', saved);
    saved.syncedAt = 3;
    assert.deepEqual(store.mirrored(), new Map([['u1', rec(1)], ['u2', rec(2)]]), 'its own write, as written');
    await store.delete('u1');
    assert.deepEqual(store.mirrored(), new Map([['u2', rec(2)]]));
    await kv.put('node-a.u3', JSON.stringify(rec(3)));
    await settle();
    assert.deepEqual(store.mirrored(), new Map([['u2', rec(2)], ['u3', rec(3)]]), 'another replica\'s write, from the watch');
    store.stop();
    assert.equal(kv.openWatches, 0);
  });
});

const settle = async () => {
  for (let i = 0; i < 5; i++) await new Promise<void>((r) => setImmediate(r));
};

describe('KvDesiredPods', () => {
  it('reads the sync loop\'s pods of its node by UID', async () => {
    const kv = new FakeKv('pods');
    const rec: PodRecord = { pod: { metadata: { uid: 'u1', name: 'p', namespace: 'default' }, spec: { containers: [] } }, source: 'file', addedAt: 1, admitted: true };
    await kv.put('node-a.pod.u1', JSON.stringify(rec));
    await kv.put('node-a.queue.u1', JSON.stringify({ dueAt: 1 }));
    await kv.put('node-b.pod.u2', JSON.stringify(rec));
    const desired = new KvDesiredPods(kv, 'node-a', new FakeClock(), silentLogger());
    assert.deepEqual(await desired.all(), new Map([['u1', rec]]));
    assert.deepEqual(await desired.get('u1'), rec);
    await desired.start();
    assert.deepEqual(desired.mirrored(), new Map([['u1', rec]]), 'the mirror: the pods only, not the work queue');
    await kv.delete('node-a.pod.u1');
    await settle();
    assert.deepEqual(desired.mirrored(), new Map());
    desired.stop();
  });
});

describe('KvProbeResults', () => {
  it('reads the prober\'s records of the pod\'s probes at <node>.<uid>.<container>.<probeType>, by container ID; Unknown is no result', async () => {
    const kv = new FakeKv('probe-results');
    const rec = (containerName: string, probeType: ProbeType, containerId: string, result: ProbeResultRecord['result']): ProbeResultRecord => ({ podUid: 'u1', containerName, probeType, containerId, result, time: 1 });
    await kv.put('node-a.u1.app.readiness', JSON.stringify(rec('app', 'readiness', 'c1', 'Success')));
    await kv.put('node-a.u1.app.liveness', JSON.stringify(rec('app', 'liveness', 'c1', 'Failure')));
    await kv.put('node-a.u1.side.startup', JSON.stringify(rec('side', 'startup', 's1', 'Unknown')));
    await kv.put('node-b.u1.app.readiness', JSON.stringify(rec('app', 'readiness', 'c9', 'Success')));
    const probe = { exec: { command: ['true'] } };
    const pod: Pod = { metadata: { uid: 'u1' }, spec: { containers: [{ name: 'app', readinessProbe: probe, livenessProbe: probe }, { name: 'plain' }], initContainers: [{ name: 'side', restartPolicy: 'Always', startupProbe: probe }] } };
    const view = await new KvProbeResults(kv, 'node-a').forPod(pod);
    assert.equal(view.readiness('c1'), 'Success');
    assert.equal(view.liveness('c1'), 'Failure');
    assert.equal(view.startup('s1'), undefined);
    assert.equal(view.readiness('c9'), undefined, 'another node\'s record');
    assert.deepEqual(kv.calls.filter((c) => c.startsWith('get')).sort(), ['get node-a.u1.app.liveness', 'get node-a.u1.app.readiness', 'get node-a.u1.side.startup'], 'one read per declared probe');
  });
});

describe('KvPodStatusProvider', () => {
  it('reads the status manager\'s status of a UID at <node>.<uid>, with whether that instance finished', async () => {
    const kv = new FakeKv('pod-status');
    await kv.put('node-a.u1', JSON.stringify({ version: 3, podName: 'p', podNamespace: 'default', status: { phase: 'Running' } }));
    await kv.put('node-a.u2', JSON.stringify({ version: 4, podName: 'q', podNamespace: 'default', status: { phase: 'Failed' }, podIsFinished: true }));
    const provider = new KvPodStatusProvider(kv, 'node-a');
    assert.deepEqual(await provider.getPodStatus('u1'), { status: { phase: 'Running' }, podIsFinished: false });
    assert.deepEqual(await provider.getPodStatus('u2'), { status: { phase: 'Failed' }, podIsFinished: true });
    assert.equal(await provider.getPodStatus('u3'), undefined);
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
