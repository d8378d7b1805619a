/** The prober's KV layout: each probe worker's result at <node>.<uid>.<container>.<probeType> of the probe-results bucket. */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { ProbeResultRecord } from '@app/contracts';
import { FakeKv } from '@app/nats/testing';
import { KvProbeResultStore } from './kv-probe-result-store.js';

describe('KvProbeResultStore', () => {
  it('puts, loads (its node only) and deletes a worker\'s result at <node>.<uid>.<container>.<probeType>', async () => {
    const kv = new FakeKv('probe-results');
    const store = new KvProbeResultStore(kv, 'node.a');
    const rec: ProbeResultRecord = { podUid: 'u1', containerName: 'app', probeType: 'readiness', containerId: 'c1', result: 'Success', time: 5 };
    await store.put(rec);
    await kv.put('node-b.u2.app.readiness', JSON.stringify({ ...rec, podUid: 'u2' }));
    assert.deepEqual(JSON.parse(kv.text('node_a.u1.app.readiness') ?? ''), rec);
    assert.deepEqual(await store.load(), [rec]);
    await store.delete('u1', 'app', 'readiness');
    assert.deepEqual(await store.load(), []);
  });

  it('a UID or container name that is not a NATS token is refused', async () => {
    const store = new KvProbeResultStore(new FakeKv('probe-results'), 'node-a');
    await assert.rejects(async () => store.put({ podUid: 'u.1', containerName: 'app', probeType: 'liveness', containerId: 'c', result: 'Success', time: 0 }), /invalid pod UID "u.1"/);
  });
});
