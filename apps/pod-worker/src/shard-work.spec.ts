import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { FakeClock } from '@app/clock/testing';
import { MessageTypes, shardOf, type Pod, type PodRecord, type UpdatePodOptionsMessage } from '@app/contracts';
import { silentLogger } from '@app/observability';
import { ShardWork } from './shard-work.js';
import { FakeWorkSubscriptions, MemoryDesiredPods } from './testing.js';

const SHARDS = 4;

class RecordingWorkers {
  readonly updates: { update: UpdatePodOptionsMessage; resumeFrom: number | undefined }[] = [];
  updatePod(update: UpdatePodOptionsMessage, resumeFrom?: number): Promise<void> {
    this.updates.push({ update, resumeFrom });
    return Promise.resolve();
  }
}

const pod = (uid: string): Pod => ({ metadata: { uid, name: `p-${uid}`, namespace: 'default' }, spec: { containers: [{ name: 'c', image: 'busybox' }] } });
const record = (uid: string, o: Partial<PodRecord> = {}): PodRecord => ({ pod: pod(uid), source: 'file', addedAt: 0, admitted: true, terminationRequested: false, ...o });

/** A UID in `shard`, the n-th one found. */
function uidIn(shard: number, n = 0): string {
  for (let i = 0, found = 0; ; i++) if (shardOf(`uid-${i}`, SHARDS) === shard && found++ === n) return `uid-${i}`;
}

function setup() {
  const workers = new RecordingWorkers();
  const desired = new MemoryDesiredPods();
  const subs = new FakeWorkSubscriptions();
  const clock = new FakeClock(Date.UTC(2026, 0, 1));
  return { workers, desired, subs, clock, work: new ShardWork(workers, desired, subs, clock, silentLogger(), SHARDS) };
}

describe('ShardWork', () => {
  it('acquiring a shard resyncs its admitted pods from the podManager: SyncPodSync, or SyncPodKill when termination was asked', async () => {
    const { work, desired, workers, clock } = setup();
    const [a, b, c, d] = [uidIn(1, 0), uidIn(1, 1), uidIn(1, 2), uidIn(2, 0)];
    desired.pods.set(a, record(a));
    desired.pods.set(b, record(b, { terminationRequested: true }));
    desired.pods.set(c, record(c, { admitted: false }));
    desired.pods.set(d, record(d));
    await work.acquire(1);
    assert.deepEqual(workers.updates.map((u) => `${u.update.pod.metadata.uid ?? ''}:${u.update.updateType}`), [`${a}:SyncPodSync`, `${b}:SyncPodKill`]);
    assert.ok(workers.updates.every((u) => u.resumeFrom === clock.now()), 'the workers resume from the takeover');
  });

  it('after a NATS reconnection, the pods of every shard still followed are resynced (work sent meanwhile may be lost), the others\' not', async () => {
    const { work, desired, workers } = setup();
    const [a, b, c] = [uidIn(1, 0), uidIn(2, 0), uidIn(3, 0)];
    for (const u of [a, b, c]) desired.pods.set(u, record(u));
    await work.acquire(1);
    await work.acquire(2);
    work.lose(2);
    workers.updates.length = 0;
    assert.equal(await work.resyncOwned(), 1);
    assert.deepEqual(workers.updates.map((u) => `${u.update.pod.metadata.uid ?? ''}:${u.update.updateType}`), [`${a}:SyncPodSync`]);
  });

  it('follows the shard\'s work subject until the shard is lost', async () => {
    const { work, subs, workers } = setup();
    await work.acquire(2);
    await work.acquire(3);
    assert.deepEqual(subs.followed, [2, 3]);
    const update: UpdatePodOptionsMessage = { type: MessageTypes.updatePodOptions, updateType: 'SyncPodCreate', startTime: new Date(0).toISOString(), pod: pod(uidIn(2)) };
    assert.ok(subs.deliver(2, update));
    assert.equal(workers.updates.length, 1);
    work.lose(2);
    assert.deepEqual(subs.followed, [3]);
    assert.equal(subs.deliver(2, update), false);
  });

  const malformed = [
    { name: 'not JSON', body: '{nope' },
    { name: 'not an UpdatePodOptions', body: { type: 'kubelet.v1.something_else' } },
  ];
  for (const tc of malformed) {
    it(`a work message that is ${tc.name} is dropped and the shard keeps working`, async () => {
      const { work, subs, workers } = setup();
      await work.acquire(0);
      assert.ok(subs.deliver(0, tc.body));
      assert.equal(workers.updates.length, 0);
      assert.ok(subs.deliver(0, { type: MessageTypes.updatePodOptions, updateType: 'SyncPodSync', startTime: new Date(0).toISOString(), pod: pod(uidIn(0)) }));
      assert.equal(workers.updates.length, 1);
    });
  }
});
