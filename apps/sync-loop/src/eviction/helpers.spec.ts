import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { Pod } from '@app/contracts';
import { parseEvictionHard } from '@app/kube';
import type { PodStats, Summary } from '@app/stats';
import {
  byEvictionPriority,
  evictionMessage,
  formatQuantity,
  makeSignalObservations,
  nodeConditions,
  nodeConditionsLastObservedAt,
  nodeConditionsObservedSince,
  rankDiskPressure,
  rankMemoryPressure,
  thresholdString,
  thresholdsMet,
  type SignalObservations,
  type StatsFunc,
} from './helpers.js';

const Ki = 2 ** 10;
const Mi = 2 ** 20;
const Gi = 2 ** 30;
const T = '2026-01-01T00:00:00.000Z';
const DEFAULTS = parseEvictionHard('memory.available<100Mi,nodefs.available<10%,nodefs.inodesFree<5%,imagefs.available<15%,imagefs.inodesFree<5%', 'EVICTION_HARD');
const healthy: SignalObservations = {
  'memory.available': { available: 2 * Gi, capacity: 8 * Gi },
  'nodefs.available': { available: 50 * Gi, capacity: 100 * Gi },
  'nodefs.inodesFree': { available: 500_000, capacity: 1_000_000 },
  'pid.available': { available: 30_000, capacity: 32_768 },
};

/** A pod with one container per entry (name, memory request, ephemeral-storage request), at a priority. */
function pod(name: string, containers: { name: string; memory?: string; storage?: string }[] = [{ name: 'c' }], priority?: number): Pod {
  return {
    metadata: { name, namespace: 'default', uid: `uid-${name}` },
    spec: {
      containers: containers.map((c) => ({
        name: c.name,
        image: 'busybox',
        ...(c.memory || c.storage ? { resources: { requests: { ...(c.memory ? { memory: c.memory } : {}), ...(c.storage ? { 'ephemeral-storage': c.storage } : {}) } } } : {}),
      })),
      ...(priority !== undefined ? { priority } : {}),
    },
  };
}

/** Stats: the pod's working set, and per container its working set and disk use (rootfs + logs). */
function stats(entries: Record<string, { memory?: number; containers?: Record<string, { memory?: number; disk?: number }> }>): StatsFunc {
  const byUid = new Map<string, PodStats>();
  for (const [name, e] of Object.entries(entries)) {
    byUid.set(`uid-${name}`, {
      podRef: { name, namespace: 'default', uid: `uid-${name}` },
      startTime: T,
      ...(e.memory !== undefined ? { memory: { time: T, workingSetBytes: e.memory } } : {}),
      containers: Object.entries(e.containers ?? {}).map(([cname, c]) => ({
        name: cname,
        startTime: T,
        ...(c.memory !== undefined ? { memory: { time: T, workingSetBytes: c.memory } } : {}),
        ...(c.disk !== undefined ? { rootfs: { time: T, usedBytes: c.disk, inodesUsed: 10 }, logs: { time: T, usedBytes: 0, inodesUsed: 1 } } : {}),
      })),
    });
  }
  return (p) => byUid.get(p.metadata.uid ?? '');
}

describe('makeSignalObservations: the node\'s signals in the summary', () => {
  it('memory.available (capacity = available + working set), nodefs, imagefs and pid.available; the pods\' stats by UID', () => {
    const summary: Summary = {
      node: {
        nodeName: 'n',
        startTime: T,
        memory: { time: T, availableBytes: 6 * Gi, workingSetBytes: 2 * Gi, usageBytes: 3 * Gi },
        fs: { time: T, availableBytes: 40 * Gi, capacityBytes: 100 * Gi, inodes: 1000, inodesFree: 900 },
        runtime: { imageFs: { time: T, availableBytes: 30 * Gi, capacityBytes: 50 * Gi, inodes: 500, inodesFree: 100 } },
        rlimit: { time: T, maxpid: 4_194_304, curproc: 300 },
      },
      pods: [{ podRef: { name: 'a', namespace: 'default', uid: 'uid-a' }, startTime: T, containers: [] }],
    };
    const { observations, stats: statsOf } = makeSignalObservations(summary);
    assert.deepEqual(
      Object.fromEntries(Object.entries(observations).map(([k, o]) => [k, [o.available, o.capacity]])),
      {
        'memory.available': [6 * Gi, 8 * Gi],
        'nodefs.available': [40 * Gi, 100 * Gi],
        'nodefs.inodesFree': [900, 1000],
        'imagefs.available': [30 * Gi, 50 * Gi],
        'imagefs.inodesFree': [100, 500],
        'pid.available': [4_194_304 - 300, 4_194_304],
      },
    );
    assert.equal(statsOf(pod('a'))?.podRef.name, 'a');
    assert.equal(statsOf(pod('b')), undefined);
  });

  it('a summary without figures observes nothing', () => {
    assert.deepEqual(makeSignalObservations({ node: { nodeName: 'n', startTime: T }, pods: [] }).observations, {});
  });
});

describe('thresholdsMet against upstream\'s default hard thresholds', () => {
  const cases: { name: string; obs: SignalObservations; want: string[] }[] = [
    { name: 'a healthy machine meets none', obs: healthy, want: [] },
    { name: 'memory below 100Mi', obs: { ...healthy, 'memory.available': { available: 99 * Mi, capacity: 8 * Gi } }, want: ['memory.available'] },
    { name: 'exactly 100Mi is not below', obs: { ...healthy, 'memory.available': { available: 100 * Mi, capacity: 8 * Gi } }, want: [] },
    { name: 'the node fs under 10% free', obs: { ...healthy, 'nodefs.available': { available: 9 * Gi, capacity: 100 * Gi } }, want: ['nodefs.available'] },
    { name: 'inodes under 5% free', obs: { ...healthy, 'nodefs.inodesFree': { available: 49_999, capacity: 1_000_000 } }, want: ['nodefs.inodesFree'] },
    { name: 'the image fs under 15% free', obs: { ...healthy, 'imagefs.available': { available: 14 * Gi, capacity: 100 * Gi } }, want: ['imagefs.available'] },
    { name: 'an unobserved signal meets nothing', obs: { 'memory.available': healthy['memory.available'] ?? { available: 0, capacity: 0 } }, want: [] },
    { name: 'no pid.available threshold by default: PIDs never count', obs: { ...healthy, 'pid.available': { available: 0, capacity: 32_768 } }, want: [] },
  ];
  for (const tc of cases) it(tc.name, () => assert.deepEqual(thresholdsMet(DEFAULTS, tc.obs).map((t) => t.signal), tc.want));

  it('the conditions they give, each once: memory, disk (nodefs and imagefs), PIDs', () => {
    const met = parseEvictionHard('nodefs.available<10%,memory.available<1Gi,imagefs.available<15%,pid.available<100', 'EVICTION_HARD');
    assert.deepEqual(nodeConditions(met), ['DiskPressure', 'MemoryPressure', 'PIDPressure']);
    assert.deepEqual(byEvictionPriority(met).map((t) => t.signal), ['memory.available', 'nodefs.available', 'imagefs.available', 'pid.available'], 'memory is reclaimed first');
    assert.deepEqual(met.map(thresholdString), ['nodefs.available<10%', 'memory.available<1Gi', 'imagefs.available<15%', 'pid.available<100']);
  });
});

describe('nodeConditionsObservedSince: the transition period', () => {
  it('a condition holds for the period after it was last observed, then clears', () => {
    const period = 5 * 60_000;
    let at = nodeConditionsLastObservedAt(['MemoryPressure'], new Map(), 10_000);
    assert.deepEqual(nodeConditionsObservedSince(at, period, 10_000), ['MemoryPressure']);
    at = nodeConditionsLastObservedAt([], at, 20_000);
    assert.deepEqual(nodeConditionsObservedSince(at, period, 20_000), ['MemoryPressure'], 'still within 5 minutes');
    at = nodeConditionsLastObservedAt(['DiskPressure'], at, 300_000);
    assert.deepEqual(nodeConditionsObservedSince(at, period, 300_000), ['MemoryPressure', 'DiskPressure']);
    assert.deepEqual(nodeConditionsObservedSince(at, period, 310_000), ['DiskPressure'], 'memory last seen 300 s ago');
    assert.deepEqual(nodeConditionsObservedSince(at, period, 600_000), []);
  });
});

describe('rankMemoryPressure: over requests first, then lower priority, then the use above the request', () => {
  const cases: { name: string; pods: Pod[]; stats: StatsFunc; want: string[] }[] = [
    {
      name: 'a BestEffort pod using little goes before a Burstable one using more but within its request',
      pods: [pod('burstable', [{ name: 'c', memory: '512Mi' }]), pod('besteffort')],
      stats: stats({ burstable: { memory: 300 * Mi }, besteffort: { memory: 10 * Mi } }),
      want: ['besteffort', 'burstable'],
    },
    {
      name: 'both over their requests: the lower priority first',
      pods: [pod('low-big', [{ name: 'c' }], 0), pod('high', [{ name: 'c' }], 1000), pod('low-small', [{ name: 'c' }], 0)],
      stats: stats({ 'low-big': { memory: 500 * Mi }, high: { memory: 900 * Mi }, 'low-small': { memory: 100 * Mi } }),
      want: ['low-big', 'low-small', 'high'],
    },
    {
      name: 'same priority: the larger use above the request first',
      pods: [pod('a', [{ name: 'c', memory: '100Mi' }]), pod('b', [{ name: 'c', memory: '10Mi' }])],
      stats: stats({ a: { memory: 200 * Mi }, b: { memory: 150 * Mi } }),
      want: ['b', 'a'],
    },
    {
      name: 'a pod without stats goes first',
      pods: [pod('measured'), pod('unknown')],
      stats: stats({ measured: { memory: 900 * Mi } }),
      want: ['unknown', 'measured'],
    },
  ];
  for (const tc of cases) it(tc.name, () => assert.deepEqual(rankMemoryPressure(tc.pods, tc.stats).map((p) => p.metadata.name), tc.want));
});

describe('rankDiskPressure: the same order on the writable layers, logs and local volumes', () => {
  it('over the ephemeral-storage request first, then the use above it', () => {
    const pods = [pod('within', [{ name: 'c', storage: '1Gi' }]), pod('over-small', [{ name: 'c', storage: '1Mi' }]), pod('over-big')];
    const s = stats({ within: { containers: { c: { disk: 500 * Mi } } }, 'over-small': { containers: { c: { disk: 2 * Mi } } }, 'over-big': { containers: { c: { disk: 300 * Mi } } } });
    assert.deepEqual(rankDiskPressure(pods, s, 'ephemeral-storage').map((p) => p.metadata.name), ['over-big', 'over-small', 'within']);
  });
});

describe('evictionMessage: upstream\'s words', () => {
  const obs: SignalObservations = { 'memory.available': { available: 50 * Mi, capacity: 8 * Gi } };
  const met = parseEvictionHard('memory.available<100Mi', 'EVICTION_HARD');
  it('names the threshold, what was available, and every container over its request', () => {
    const p = pod('web', [{ name: 'x' }, { name: 'y', memory: '64Mi' }, { name: 'z', memory: '1Gi' }]);
    const s = stats({ web: { memory: 400 * Mi, containers: { x: { memory: 10 * Mi }, y: { memory: 100 * Mi + 512 * Ki }, z: { memory: 200 * Mi } } } });
    const { message, annotations } = evictionMessage('memory', p, s, met, obs);
    assert.equal(
      message,
      'The node was low on resource: memory. Threshold quantity: 100Mi, available: 50Mi. ' +
        'Container x was using 10Mi, request is 0, has larger consumption of memory. ' +
        'Container y was using 102912Ki, request is 64Mi, has larger consumption of memory. ',
    );
    assert.deepEqual(annotations, { offending_containers: 'x,y', offending_containers_usage: '10Mi,102912Ki', starved_resource: 'memory' });
  });

  it('a percentage threshold is shown as the amount it is of the capacity; a pod without stats gets the node\'s part only', () => {
    const fs: SignalObservations = { 'nodefs.available': { available: 5 * Gi, capacity: 100 * Gi } };
    const { message } = evictionMessage('ephemeral-storage', pod('gone'), stats({}), parseEvictionHard('nodefs.available<10%', 'EVICTION_HARD'), fs);
    assert.equal(message, 'The node was low on resource: ephemeral-storage. Threshold quantity: 10Gi, available: 5Gi. ');
  });

  it('quantities print as resource.Quantity does', () => {
    assert.deepEqual([formatQuantity('memory', 0), formatQuantity('memory', 100 * Mi), formatQuantity('memory', 1000), formatQuantity('inodes', 5000), formatQuantity('pids', 123)], ['0', '100Mi', '1000', '5k', '123']);
  });
});
