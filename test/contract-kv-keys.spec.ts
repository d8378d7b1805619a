/**
 * The published contract's KV key layouts (libs/contracts KV_LAYOUTS, in
 * docs/contract/asyncapi.yaml as `$KV.<bucket>.<key>` channels) are the keys
 * the code writes: each layout's key is built here by the writer's own code
 * (its store adapter, or the key function it calls) and must match it.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { KV_LAYOUTS, nodePressureKey, nodeToken, probeResultKey, subjectMatches, syncLoopMonitorKey } from '@app/contracts';
import { leaderLeaseKey } from '@app/leader-election';
import { FakeLeaderFence } from '@app/leader-election/testing';
import { podCacheGlobalKey, podCacheKey } from '@app/pod-cache';
import { podStatusStore, podWorkersStore, probeResultsStore, sharedSettingKey, type JsonKv, type KV } from '@app/nats';
import { KvPodStore } from '../apps/sync-loop/src/adapters/kv-pod-store.js';
import { KvLeaseStore } from '../apps/pod-worker/src/adapters/kv-lease-store.js';

const NODE = 'node-1.example.com';

/** A KV that records the keys written (put, create): a stand-in for the bucket, for the writers' adapters. */
class KeyRecordingKv {
  readonly written: string[] = [];
  put(key: string): Promise<number> {
    this.written.push(key);
    return Promise.resolve(1);
  }
  create(key: string): Promise<number> {
    this.written.push(key);
    return Promise.resolve(1);
  }
}

async function writtenBy(write: (kv: KeyRecordingKv) => Promise<unknown>): Promise<string> {
  const kv = new KeyRecordingKv();
  await write(kv);
  assert.equal(kv.written.length, 1, `one key written: ${kv.written.join(', ')}`);
  return kv.written[0] as string;
}

const pod = { metadata: { uid: 'uid-1', name: 'p', namespace: 'ns' }, spec: { containers: [] } };

/** Each layout, `<bucket> <key>`, and the key its writer writes for node NODE. */
const cases: { layout: string; key: () => Promise<string> | string }[] = [
  {
    layout: 'pods {node}.pod.{uid}',
    key: () => writtenBy((kv) => new KvPodStore(kv as unknown as JsonKv, NODE, new FakeLeaderFence()).putPod({ pod, source: 'file', addedAt: 1, admitted: true })),
  },
  { layout: 'pods {node}.queue.{uid}', key: () => writtenBy((kv) => new KvPodStore(kv as unknown as JsonKv, NODE, new FakeLeaderFence()).putQueue('uid-1', 5)) },
  { layout: 'pods {node}.node-pressure', key: () => nodePressureKey(NODE) },
  { layout: 'pods {node}.sync-loop-monitor', key: () => syncLoopMonitorKey(NODE) },
  { layout: 'workers {node}.{uid}', key: () => podWorkersStore(new KeyRecordingKv() as unknown as JsonKv, NODE).key('uid-1') },
  { layout: 'pod-status {node}.{uid}', key: () => podStatusStore(new KeyRecordingKv() as unknown as JsonKv, NODE).key('uid-1') },
  { layout: 'pod-cache {node}.pod.{uid}', key: () => podCacheKey(NODE, 'uid-1') },
  { layout: 'pod-cache {node}.global', key: () => podCacheGlobalKey(NODE) },
  { layout: 'probe-results {node}.{uid}.{container}.{probeType}', key: () => probeResultsStore(new KeyRecordingKv() as unknown as JsonKv, NODE).key(probeResultKey('uid-1', 'app', 'readiness')) },
  { layout: 'leases {node}.leader.{service}', key: () => leaderLeaseKey(NODE, 'pleg') },
  { layout: 'leases {node}.setting.{name}', key: () => sharedSettingKey(NODE, 'shards') },
  { layout: 'leases {node}.pod-worker-shard.{shard}', key: () => writtenBy((kv) => new KvLeaseStore(kv as unknown as KV, NODE).put(3, { owner: 'pod-worker@n#a', expiresAt: 1 }, 0)) },
  { layout: 'leases {node}.pod-worker-replica.{owner}', key: () => writtenBy((kv) => new KvLeaseStore(kv as unknown as KV, NODE).announce('pod-worker@n#a', 1)) },
];

describe('the contract\'s KV key layouts are the keys the writers write', () => {
  it('every layout of KV_LAYOUTS has its case here', () => {
    const layouts = Object.entries(KV_LAYOUTS).flatMap(([bucket, ls]) => ls.map((l) => `${bucket} ${l.key}`));
    assert.deepEqual(cases.map((c) => c.layout).sort(), layouts.sort());
  });

  for (const tc of cases) {
    it(tc.layout, async () => {
      const [, key] = tc.layout.split(' ') as [string, string];
      const pattern = key.replace('{node}', nodeToken(NODE)).replaceAll(/\{[^}]+\}/g, '*');
      const written = await tc.key();
      assert.ok(subjectMatches(pattern, written), `${written} is a key of ${key}`);
    });
  }
});
