import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { PodCacheEntry } from '@app/contracts';
import { NotLeaderError } from '@app/leader-election';
import { FakeKv } from '@app/nats/testing';
import { FakeLeaderFence } from '@app/leader-election/testing';
import { podCacheGlobalKey, podCacheKey } from '@app/pod-cache';
import { KvPodCacheStore } from './kv-pod-cache-store.js';

describe('KvPodCacheStore', () => {
  it('writes where the pod workers\' KvPodCache reads (podCacheKey, podCacheGlobalKey) and reads it back', async () => {
    const kv = new FakeKv('pod-cache');
    const store = new KvPodCacheStore(kv, 'node-a', new FakeLeaderFence());
    const entry: PodCacheEntry = { uid: 'u1', name: 'web', namespace: 'default', timestamp: 5, sandboxStatuses: [], containerStatuses: [], ips: ['10.0.0.2'] };
    await store.set(entry);
    await store.updateGlobal({ timestamp: 7 });
    assert.ok(kv.text(podCacheKey('node-a', 'u1')));
    assert.deepEqual(JSON.parse(kv.text(podCacheGlobalKey('node-a')) ?? ''), { timestamp: 7 });
    assert.deepEqual(await store.load(), { entries: [entry], global: 7 });
    await store.updateGlobal({ timestamp: 8, relistThresholdMs: 600_000, aliveAt: 9, aliveThresholdMs: 180_000 });
    assert.deepEqual(JSON.parse(kv.text(podCacheGlobalKey('node-a')) ?? ''), { timestamp: 8, relistThresholdMs: 600_000, aliveAt: 9, aliveThresholdMs: 180_000 }, 'the health thresholds and the sign of life beside the relist time');
    await store.delete('u1');
    assert.deepEqual(await store.load(), { entries: [], global: 8 });
  });

  it('refuses every write once this instance is not the leader, and still reads', async () => {
    const kv = new FakeKv('pod-cache');
    const fence = new FakeLeaderFence();
    const store = new KvPodCacheStore(kv, 'node-a', fence);
    const entry: PodCacheEntry = { uid: 'u1', name: 'web', namespace: 'default', timestamp: 5, sandboxStatuses: [], containerStatuses: [], ips: [] };
    await store.set(entry);
    fence.token = undefined;
    await assert.rejects(store.set({ ...entry, timestamp: 6 }), NotLeaderError);
    await assert.rejects(store.delete('u1'), NotLeaderError);
    await assert.rejects(store.updateGlobal({ timestamp: 9 }), NotLeaderError);
    assert.deepEqual(await store.load(), { entries: [entry], global: 0 });
  });
});
