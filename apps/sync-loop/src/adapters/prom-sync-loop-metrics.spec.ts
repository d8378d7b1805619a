import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { Registry } from '@app/observability';
import { PromSyncLoopMetrics } from './prom-sync-loop-metrics.js';

describe('PromSyncLoopMetrics', () => {
  it('writes the dispatch, eviction, image GC and orphan cleanup series under their names', async () => {
    const registry = new Registry();
    const m = new PromSyncLoopMetrics(registry);
    m.workDispatched('SyncPodCreate');
    m.workDispatched('SyncPodCreate');
    m.workDispatched('SyncPodKill');
    m.podEvicted('memory.available');
    m.imageGarbageCollected('space');
    m.orphanedPodDirsCleaned(3, 1);
    const text = await registry.metrics();
    assert.match(text, /^kubelet_split_dispatched_work_total\{update_type="SyncPodCreate"\} 2$/m);
    assert.match(text, /^kubelet_split_dispatched_work_total\{update_type="SyncPodKill"\} 1$/m);
    assert.match(text, /^kubelet_evictions\{eviction_signal="memory\.available"\} 1$/m);
    assert.match(text, /^kubelet_image_garbage_collected_total\{reason="space"\} 1$/m);
    assert.match(text, /^kubelet_orphan_pod_cleaned_volumes 3$/m);
    assert.match(text, /^kubelet_orphan_pod_cleaned_volumes_errors 1$/m);
    m.orphanedPodDirsCleaned(0, 0);
    assert.match(await registry.metrics(), /^kubelet_orphan_pod_cleaned_volumes 0$/m, 'a gauge of the last pass, not a sum');
  });
});
