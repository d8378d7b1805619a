import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { FakeClock } from '@app/clock/testing';
import type { KillPodOptions, Pod } from '@app/contracts';
import { RecordingEventRecorder } from '@app/contracts/testing';
import { parseEvictionHard } from '@app/kube';
import { silentLogger } from '@app/observability';
import type { PodStats } from '@app/stats';
import { FakeSummaryProvider } from '@app/stats/testing';
import { MemoryNodePressureStore } from '../testing.js';
import { EvictionManager, IMMEDIATE_EVICTION_GRACE_PERIOD_SECONDS } from './eviction-manager.js';

const Mi = 2 ** 20;
const Gi = 2 ** 30;
const T = '2026-01-01T00:00:00.000Z';

function pod(name: string, opts: { memory?: string; static?: boolean; priority?: number } = {}): Pod {
  return {
    metadata: { name, namespace: 'default', uid: `uid-${name}`, annotations: { 'kubernetes.io/config.source': opts.static ? 'file' : 'api' } },
    spec: {
      containers: [{ name: 'main', image: 'busybox', ...(opts.memory ? { resources: { requests: { memory: opts.memory } } } : {}) }],
      ...(opts.priority !== undefined ? { priority: opts.priority } : {}),
    },
  };
}

const podStats = (name: string, workingSet: number): PodStats => ({
  podRef: { name, namespace: 'default', uid: `uid-${name}` },
  startTime: T,
  memory: { time: T, workingSetBytes: workingSet },
  containers: [{ name: 'main', startTime: T, memory: { time: T, workingSetBytes: workingSet } }],
});

function setup(opts: { thresholds?: string; active?: Pod[]; periodMs?: number } = {}) {
  const evictions: string[] = [];
  const clock = new FakeClock(Date.parse(T));
  const summary = new FakeSummaryProvider();
  const pressure = new MemoryNodePressureStore();
  const events = new RecordingEventRecorder();
  const killed: { name: string; options: KillPodOptions }[] = [];
  let active = opts.active ?? [];
  const pods = {
    activePods: () => Promise.resolve(active),
    killPod: (p: Pod, options: KillPodOptions) => void killed.push({ name: p.metadata.name ?? '', options }),
  };
  const manager = new EvictionManager({ summary, pressure, pods, events, clock, logger: silentLogger() }, {
    thresholds: parseEvictionHard(opts.thresholds ?? 'memory.available<100Mi,nodefs.available<10%', 'EVICTION_HARD'),
    ...(opts.periodMs !== undefined ? { pressureTransitionPeriodMs: opts.periodMs } : {}),
    onEviction: (signal) => void evictions.push(signal),
  });
  const setMemory = (available: number) => {
    summary.current.node.memory = { time: T, availableBytes: available, workingSetBytes: 8 * Gi - available };
  };
  const setActive = (pods: Pod[]) => void (active = pods);
  setMemory(4 * Gi);
  summary.current.node.fs = { time: T, availableBytes: 50 * Gi, capacityBytes: 100 * Gi, inodes: 1000, inodesFree: 900 };
  return { clock, summary, pressure, events, killed, manager, setMemory, setActive, evictions };
}

describe('EvictionManager.synchronize', () => {
  it('a healthy node: no condition, nothing evicted, the observation recorded for the Node', async () => {
    const { manager, pressure, killed } = setup({ active: [pod('a')] });
    assert.equal(await manager.synchronize(), undefined);
    assert.deepEqual(killed, []);
    assert.deepEqual(pressure.last?.conditions, []);
    assert.deepEqual(pressure.last?.thresholdsMet, []);
    assert.deepEqual(pressure.last?.observations['memory.available'], { available: 4 * Gi, capacity: 8 * Gi });
  });

  it('under memory pressure: the BestEffort pod is evicted first, one pod per pass, Failed / Evicted with upstream\'s message and an event', async () => {
    const besteffort = pod('besteffort');
    const burstable = pod('burstable', { memory: '256Mi' });
    const { manager, summary, pressure, events, killed, setMemory, setActive, clock, evictions } = setup({ active: [burstable, besteffort] });
    setMemory(50 * Mi);
    summary.current.pods = [podStats('burstable', 200 * Mi), podStats('besteffort', 10 * Mi)];
    const evicted = await manager.synchronize();
    assert.equal(evicted?.metadata.name, 'besteffort');
    const message = 'The node was low on resource: memory. Threshold quantity: 100Mi, available: 50Mi. Container main was using 10Mi, request is 0, has larger consumption of memory. ';
    assert.deepEqual(killed, [
      {
        name: 'besteffort',
        options: { gracePeriodOverride: IMMEDIATE_EVICTION_GRACE_PERIOD_SECONDS, podStatus: { phase: 'Failed', reason: 'Evicted', message, disruptionTarget: { reason: 'TerminationByKubelet', message } } },
      },
    ]);
    assert.deepEqual(events.events, [
      { uid: '', type: 'Warning', reason: 'EvictionThresholdMet', message: 'Attempting to reclaim memory' },
      { uid: 'uid-besteffort', type: 'Warning', reason: 'Evicted', message },
    ]);
    assert.deepEqual([pressure.last?.conditions, pressure.last?.thresholdsMet], [['MemoryPressure'], ['memory.available<100Mi']]);
    assert.ok(manager.isUnderMemoryPressure);

    // The evicted pod still looks active (its worker has not said it terminates yet): it is not chosen again.
    await clock.step(10_000);
    assert.equal((await manager.synchronize())?.metadata.name, 'burstable', 'the next pass takes the next pod');
    setActive([]);
    await clock.step(10_000);
    assert.equal(await manager.synchronize(), undefined, 'no pod left to evict');
    assert.equal(killed.length, 2);
    assert.deepEqual(evictions, ['memory.available', 'memory.available'], 'kubelet_evictions{eviction_signal} counted each');
  });

  it('never evicts a critical pod (a static pod, or system-critical priority)', async () => {
    const { manager, summary, killed, setMemory } = setup({ active: [pod('static', { static: true }), pod('critical', { priority: 2_000_000_000 }), pod('user')] });
    setMemory(50 * Mi);
    summary.current.pods = [podStats('static', 900 * Mi), podStats('critical', 800 * Mi), podStats('user', 1 * Mi)];
    assert.equal((await manager.synchronize())?.metadata.name, 'user');
    assert.deepEqual(killed.map((k) => k.name), ['user']);
  });

  it('disk pressure evicts for ephemeral-storage and reports DiskPressure', async () => {
    const { manager, summary, pressure, killed } = setup({ active: [pod('a')] });
    summary.current.node.fs = { time: T, availableBytes: 5 * Gi, capacityBytes: 100 * Gi, inodes: 1000, inodesFree: 900 };
    summary.current.pods = [{ ...podStats('a', Mi), containers: [{ name: 'main', startTime: T, rootfs: { time: T, usedBytes: 3 * Gi }, logs: { time: T, usedBytes: Gi } }] }];
    await manager.synchronize();
    assert.deepEqual(pressure.last?.conditions, ['DiskPressure']);
    assert.equal(
      killed[0]?.options.podStatus?.message,
      'The node was low on resource: ephemeral-storage. Threshold quantity: 10Gi, available: 5Gi. Container main was using 4Gi, request is 0, has larger consumption of ephemeral-storage. ',
    );
  });

  it('the condition stays for the transition period after the pressure is gone, then clears', async () => {
    const { manager, pressure, clock, setMemory } = setup({ periodMs: 5 * 60_000 });
    setMemory(50 * Mi);
    await manager.synchronize();
    assert.deepEqual(pressure.last?.conditions, ['MemoryPressure']);
    setMemory(4 * Gi);
    await clock.step(4 * 60_000);
    await manager.synchronize();
    assert.deepEqual([pressure.last?.conditions, pressure.last?.thresholdsMet], [['MemoryPressure'], []], 'met no more, but within 5 minutes');
    assert.equal(manager.admit(pod('late')).admit, false, 'admission still sees the pressure');
    await clock.step(60_000);
    await manager.synchronize();
    assert.deepEqual(pressure.last?.conditions, []);
    assert.equal(manager.admit(pod('later')).admit, true);
  });

  it('a summary that cannot be read changes nothing: the last conditions hold, no record is written', async () => {
    const { manager, summary, pressure, setMemory } = setup();
    setMemory(50 * Mi);
    await manager.synchronize();
    summary.fail = true;
    await manager.synchronize();
    assert.equal(pressure.records.length, 1);
    assert.deepEqual(manager.nodeConditions, ['MemoryPressure']);
  });

  it('a record that cannot be written (no longer leader) does not stop the eviction', async () => {
    const { manager, summary, pressure, killed, setMemory } = setup({ active: [pod('a')] });
    pressure.fail = true;
    setMemory(50 * Mi);
    summary.current.pods = [podStats('a', Mi)];
    await manager.synchronize();
    assert.deepEqual(killed.map((k) => k.name), ['a']);
  });

  it('no thresholds: nothing is read', async () => {
    const { manager, summary } = setup({ thresholds: '' });
    await manager.synchronize();
    assert.equal(summary.calls, 0);
  });
});

describe('EvictionManager.admit', () => {
  it('under memory pressure: BestEffort refused with upstream\'s reason and message, Burstable and static pods admitted', async () => {
    const { manager, setMemory } = setup();
    assert.deepEqual(manager.admit(pod('be')), { admit: true }, 'no pressure: everyone');
    setMemory(50 * Mi);
    await manager.synchronize();
    assert.deepEqual(manager.admit(pod('be')), { admit: false, reason: 'Evicted', message: 'The node had condition: [MemoryPressure]. ' });
    assert.equal(manager.admit(pod('burstable', { memory: '64Mi' })).admit, true);
    assert.equal(manager.admit(pod('static', { static: true })).admit, true, 'a critical pod is always admitted');
  });
});

describe('EvictionManager.restore: a new leader', () => {
  it('holds the last leader\'s conditions for what is left of their transition period, refusing BestEffort pods before its first synchronize', async () => {
    const first = setup({ periodMs: 5 * 60_000 });
    first.setMemory(50 * Mi);
    await first.manager.synchronize();
    await first.clock.step(60_000);
    // The next leader: the same bucket, a fresh manager, the pressure gone.
    const next = new EvictionManager({ summary: first.summary, pressure: first.pressure, pods: { activePods: () => Promise.resolve([]), killPod: () => undefined }, events: first.events, clock: first.clock, logger: silentLogger() }, {
      thresholds: parseEvictionHard('memory.available<100Mi', 'EVICTION_HARD'),
      pressureTransitionPeriodMs: 5 * 60_000,
    });
    assert.equal(next.admit(pod('be')).admit, true, 'before restoring: nothing known');
    await next.restore();
    assert.deepEqual(next.nodeConditions, ['MemoryPressure']);
    assert.equal(next.admit(pod('be')).admit, false);
    first.setMemory(4 * Gi);
    await next.synchronize();
    assert.deepEqual(first.pressure.last?.conditions, ['MemoryPressure'], 'still within the period the last leader started');
    await first.clock.step(4 * 60_000);
    await next.synchronize();
    assert.deepEqual(first.pressure.last?.conditions, [], 'five minutes after it was last met, not five minutes after the hand-over');
  });

  it('no record (a new node) or one that cannot be read: no condition', async () => {
    const { manager, pressure } = setup();
    await manager.restore();
    assert.deepEqual(manager.nodeConditions, []);
    pressure.get = () => Promise.reject(new Error('KV away'));
    await manager.restore();
    assert.deepEqual(manager.nodeConditions, []);
  });
});
