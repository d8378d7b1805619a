import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { FakeClock } from '@app/clock/testing';
import { shardOf, type Pod } from '@app/contracts';
import { FakeCri } from '@app/cri/testing';
import { NotLeaderError } from '@app/leader-election';
import type { CacheResult } from '@app/pod-cache';
import { PodSyncer, type SyncPodResult } from '../pod-workers.js';
import { ShardFences } from '../shards.js';
import { PodScope, PodScopedSyncer, ShardFencedCri, StepFences } from './shard-fenced-cri.js';

const LEASE = 6000;
const T0 = 1_000_000;

/** A UID in shard `shard` of 2. */
function uidIn(shard: number): string {
  for (let i = 0; ; i++) if (shardOf(`uid-${i}`, 2) === shard) return `uid-${i}`;
}
const CACHE: CacheResult = { timestamp: T0 };
const pod = (uid: string): Pod => ({ metadata: { uid, name: `p-${uid}`, namespace: 'default' }, spec: { containers: [{ name: 'c', image: 'busybox' }] } });

/** A syncer that, in its sync, waits for `gate` and then calls the CRI as a step would: a read, then a change. */
class SteppingSyncer extends PodSyncer {
  gate: Promise<void> = Promise.resolve();
  constructor(private readonly cri: ShardFencedCri) {
    super();
  }
  async syncPod(): Promise<SyncPodResult> {
    await this.gate;
    await this.cri.runtime('ListContainers', {});
    await this.cri.runtime('StopContainer', { containerId: 'c1', timeout: '2' });
    return { terminal: false };
  }
  syncTerminatingPod(): Promise<void> {
    return this.cri.runtime('StopContainer', { containerId: 'c1', timeout: '2' }).then(() => undefined);
  }
  syncTerminatedPod(): Promise<void> {
    return this.cri.runtime('RemovePodSandbox', { podSandboxId: 's1' }).then(() => undefined);
  }
}

function setup() {
  const clock = new FakeClock(T0);
  const fences = new ShardFences({ clock, leaseMs: LEASE, shardCount: 2 });
  const inner = new FakeCri();
  const scope = new PodScope((uid) => fences.termOf(uid));
  const cri = new ShardFencedCri(inner, new StepFences(fences, scope), scope);
  const stepping = new SteppingSyncer(cri);
  return { clock, fences, inner, cri, scope, syncer: new PodScopedSyncer(stepping, scope), stepping };
}

describe('ShardFencedCri: the CRI calls a pod\'s step makes, fenced by its shard\'s lease', () => {
  it('a step of a pod whose shard is held makes its calls', async () => {
    const { fences, inner, syncer } = setup();
    fences.hold(0, { revision: 3, expiresAt: T0 + LEASE });
    await syncer.syncPod('SyncPodSync', pod(uidIn(0)), CACHE);
    assert.deepEqual(inner.calls.map((c) => c.method), ['ListContainers', 'StopContainer']);
  });

  it('a step in flight when its event loop stalled past the lease is refused its next change when it runs again (reads go through)', async () => {
    const { fences, inner, syncer, stepping, clock } = setup();
    fences.hold(0, { revision: 3, expiresAt: T0 + LEASE });
    let resume: () => void = () => undefined;
    stepping.gate = new Promise((r) => (resume = r));
    const step = syncer.syncPod('SyncPodSync', pod(uidIn(0)), CACHE);
    await clock.step(LEASE); // stalled: nobody renewed
    resume();
    await assert.rejects(step, (e: unknown) => e instanceof NotLeaderError && /shard 0 since the step began: refused to call StopContainer/.test(e.message));
    assert.deepEqual(inner.calls.map((c) => c.method), ['ListContainers']);
  });

  it('each of the three syncs is fenced by its own pod\'s shard; calls outside a pod\'s step are not fenced', async () => {
    const { fences, inner, syncer, cri } = setup();
    fences.hold(0, { revision: 3, expiresAt: T0 + LEASE }); // shard 1 is not ours
    await syncer.syncTerminatingPod(pod(uidIn(0)), CACHE, 2, undefined, false);
    await assert.rejects(syncer.syncTerminatingPod(pod(uidIn(1)), CACHE, 2, undefined, false), NotLeaderError);
    await assert.rejects(syncer.syncTerminatedPod(pod(uidIn(1)), CACHE, false), NotLeaderError);
    await cri.runtime('StopContainer', { containerId: 'outside', timeout: '0' });
    assert.deepEqual(inner.calls.map((c) => `${c.method} ${JSON.stringify(c.request)}`), ['StopContainer {"containerId":"c1","timeout":"2"}', 'StopContainer {"containerId":"outside","timeout":"0"}']);
  });

  it('a step in flight while its shard was lost and taken again is refused its next change: the retaken shard is a new term', async () => {
    const { fences, inner, syncer, stepping, clock } = setup();
    fences.hold(0, { revision: 3, expiresAt: T0 + LEASE });
    let resume: () => void = () => undefined;
    stepping.gate = new Promise((r) => (resume = r));
    const step = syncer.syncPod('SyncPodSync', pod(uidIn(0)), CACHE);
    await clock.step(LEASE); // stalled past the lease, lost, then taken again after the other replica handed it back
    fences.drop(0);
    fences.hold(0, { revision: 9, expiresAt: clock.now() + LEASE });
    resume();
    await assert.rejects(step, (e: unknown) => e instanceof NotLeaderError && /shard 0 since the step began: refused to call StopContainer/.test(e.message));
    // A step begun in the new term acts.
    stepping.gate = Promise.resolve();
    await syncer.syncPod('SyncPodSync', pod(uidIn(0)), CACHE);
    assert.deepEqual(inner.calls.map((c) => c.method), ['ListContainers', 'ListContainers', 'StopContainer']);
  });

  it('StepFences: outside a step, or for another pod, the shard\'s fence as it is now', () => {
    const { fences, scope } = setup();
    const steps = new StepFences(fences, scope);
    const [a, b] = [uidIn(0), 'uid-other-' + uidIn(0)];
    fences.hold(0, { revision: 3, expiresAt: T0 + LEASE });
    fences.hold(1, { revision: 4, expiresAt: T0 + LEASE });
    const inStep = scope.run(a, () => {
      fences.drop(0);
      fences.hold(0, { revision: 5, expiresAt: T0 + LEASE });
      return { own: steps.forPod(a).fencingToken, other: steps.forPod(b).fencingToken };
    });
    assert.deepEqual(inStep, { own: undefined, other: fences.forPod(b).fencingToken });
    assert.equal(steps.forPod(a).fencingToken, 5);
  });
});
