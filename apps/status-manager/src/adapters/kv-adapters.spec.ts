/** The status manager's KV layout: statuses at <node>.<uid> (the sync loop reads them), the prober's results read at <node>.<uid>.<container>.<probeType>. */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { ProbeResultRecord } from '@app/contracts';
import { NotLeaderError } from '@app/leader-election';
import { FakeKv } from '@app/nats/testing';
import { FakeLeaderFence } from '@app/leader-election/testing';
import type { StatusEntry } from '../pod-status-versions.js';
import { KvProbeResults } from './kv-probe-results.js';
import { KvStatusStore } from './kv-status-store.js';

describe('KvStatusStore', () => {
  it('puts, loads and deletes statuses at <node>.<uid>', async () => {
    const kv = new FakeKv('pod-status');
    const store = new KvStatusStore(kv, 'node-a', new FakeLeaderFence());
    const entry = { version: 1, status: { phase: 'Pending' } } as unknown as StatusEntry;
    await store.put('u1', entry);
    assert.deepEqual(JSON.parse(kv.text('node-a.u1') ?? ''), entry);
    assert.deepEqual(await store.load(), [['u1', entry]]);
    await store.delete('u1');
    assert.deepEqual(await store.load(), []);
  });

  it('refuses every write once this instance is not the leader, and still reads', async () => {
    const kv = new FakeKv('pod-status');
    const fence = new FakeLeaderFence();
    const store = new KvStatusStore(kv, 'node-a', fence);
    const entry = { version: 1, status: { phase: 'Pending' } } as unknown as StatusEntry;
    await store.put('u1', entry);
    fence.token = undefined;
    await assert.rejects(store.put('u1', { ...entry, version: 2 }), NotLeaderError);
    await assert.rejects(store.delete('u1'), NotLeaderError);
    assert.deepEqual(await store.load(), [['u1', entry]]);
  });
});

describe('KvProbeResults', () => {
  it('lists the prober\'s results of its node', async () => {
    const kv = new FakeKv('probe-results');
    const rec: ProbeResultRecord = { podUid: 'u1', containerName: 'app', probeType: 'readiness', containerId: 'c1', result: 'Success', time: 1 };
    await kv.put('node-a.u1.app.readiness', JSON.stringify(rec));
    await kv.put('node-b.u1.app.readiness', JSON.stringify({ ...rec, containerId: 'c9' }));
    assert.deepEqual(await new KvProbeResults(kv, 'node-a').all(), [rec]);
  });
});
