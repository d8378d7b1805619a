import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { PodRecord } from '@app/contracts';
import { FakeKv } from '@app/nats/testing';
import { FakeClock } from '@app/clock/testing';
import { silentLogger } from '@app/observability';
import { KvDesiredPodsView } from './kv-desired-pods-view.js';

const record = (uid: string): PodRecord => ({ pod: { metadata: { name: uid, namespace: 'default', uid }, spec: { containers: [] } }, source: 'file', addedAt: 0, admitted: true });
const settle = () => new Promise((r) => setImmediate(r));

describe('KvDesiredPodsView (the pods bucket followed in memory)', () => {
  it('loads the node\'s desired pods, then follows puts and deletes, and nothing after stop', async () => {
    const kv = new FakeKv('pods');
    await kv.put('n1.pod.a', JSON.stringify(record('a')));
    await kv.put('n2.pod.x', JSON.stringify(record('x')));
    await kv.put('n1.queue.a', JSON.stringify({ dueAt: 1 }));
    const seen: string[][] = [];
    let lost = 0;
    const stop = await new KvDesiredPodsView({ kv, node: 'n1', clock: new FakeClock(), logger: silentLogger() }).watch((pods) => seen.push(pods.map((p) => p.pod.metadata.uid ?? '').sort()), () => lost++);
    assert.deepEqual(seen.at(-1), ['a'], 'only this node\'s pods, not its queue');
    await kv.put('n1.pod.b', JSON.stringify(record('b')));
    await settle();
    assert.deepEqual(seen.at(-1), ['a', 'b']);
    await kv.delete('n1.pod.a');
    await settle();
    assert.deepEqual(seen.at(-1), ['b']);
    stop();
    const n = seen.length;
    await kv.put('n1.pod.c', JSON.stringify(record('c')));
    await settle();
    assert.equal(seen.length, n);
    assert.equal(lost, 0, 'stopped, not lost');
  });
});
