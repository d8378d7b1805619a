import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { configuredCapacity, formatResource, nodeAllocatable, nodeReservationsFrom, parseEvictionHard, parseReservation } from './node-allocatable.js';

const Mi = 2 ** 20;
const Gi = 2 ** 30;
const DEFAULT_EVICTION_HARD = 'memory.available<100Mi,nodefs.available<10%,nodefs.inodesFree<5%,imagefs.available<15%,imagefs.inodesFree<5%';

describe('nodeAllocatable (GetNodeAllocatableReservation applied to the capacity, as nodestatus MachineInfo does)', () => {
  const cases: { name: string; capacity: Record<string, number>; kube?: string; system?: string; eviction?: string; want: Record<string, number> }[] = [
    {
      name: 'the default hard thresholds keep 100Mi of memory and 10% of the node fs',
      capacity: { cpu: 4000, memory: 8 * Gi, pods: 110, 'ephemeral-storage': 100 * Gi },
      eviction: DEFAULT_EVICTION_HARD,
      want: { cpu: 4000, memory: 8 * Gi - 100 * Mi, pods: 110, 'ephemeral-storage': 100 * Gi - Math.trunc(100 * Gi * 0.1) },
    },
    {
      name: 'kube and system reservations add up',
      capacity: { cpu: 4000, memory: 8 * Gi, pods: 110 },
      kube: 'cpu=500m,memory=1Gi',
      system: 'cpu=250m,memory=512Mi,pid=1000',
      eviction: 'memory.available<100Mi',
      want: { cpu: 3250, memory: 8 * Gi - Gi - 512 * Mi - 100 * Mi, pods: 110 },
    },
    {
      name: 'huge pages come out of memory',
      capacity: { cpu: 2000, memory: 4 * Gi, pods: 110, 'hugepages-2Mi': 512 * Mi },
      want: { cpu: 2000, memory: 4 * Gi - 512 * Mi, pods: 110, 'hugepages-2Mi': 512 * Mi },
    },
    {
      name: 'never below zero',
      capacity: { cpu: 1000, memory: 64 * Mi, pods: 10 },
      kube: 'cpu=2',
      eviction: 'memory.available<100Mi',
      want: { cpu: 0, memory: 0, pods: 10 },
    },
    {
      name: 'a memory threshold as a share of the capacity',
      capacity: { cpu: 1000, memory: 10 * Gi, pods: 10 },
      eviction: 'memory.available<5%',
      want: { cpu: 1000, memory: 10 * Gi - Math.trunc(10 * Gi * 0.05), pods: 10 },
    },
  ];
  for (const tc of cases) {
    it(tc.name, () => {
      const r = { kubeReserved: parseReservation(tc.kube, 'KUBE_RESERVED'), systemReserved: parseReservation(tc.system, 'SYSTEM_RESERVED'), evictionHard: parseEvictionHard(tc.eviction, 'EVICTION_HARD') };
      assert.deepEqual(nodeAllocatable(tc.capacity, r), tc.want);
    });
  }

  it('configuredCapacity and nodeReservationsFrom read the settings admission and the Node share', () => {
    const s = { cpu: '1500m', memory: '2Gi', maxPods: 20, kubeReserved: 'memory=100Mi', evictionHard: 'memory.available<100Mi' };
    assert.deepEqual(nodeAllocatable(configuredCapacity(s), nodeReservationsFrom(s)), { cpu: 1500, memory: 2 * Gi - 200 * Mi, pods: 20 });
  });
});

describe('parsing the reservation and eviction settings', () => {
  const bad: { name: string; fn: () => unknown; want: RegExp }[] = [
    { name: 'an unknown resource', fn: () => parseReservation('gpu=1', 'KUBE_RESERVED'), want: /^Error: KUBE_RESERVED: "gpu=1" is not <resource>=<quantity>/ },
    { name: 'a bad quantity', fn: () => parseReservation('memory=lots', 'SYSTEM_RESERVED'), want: /^Error: SYSTEM_RESERVED: memory: "lots" is not a valid quantity/ },
    { name: 'an unknown signal', fn: () => parseEvictionHard('disk.available<1Gi', 'EVICTION_HARD'), want: /^Error: EVICTION_HARD: "disk.available<1Gi" is not <signal>/ },
    { name: 'a percentage over 100', fn: () => parseEvictionHard('nodefs.available<120%', 'EVICTION_HARD'), want: /not a percentage between 0% and 100%/ },
    { name: 'another operator', fn: () => parseEvictionHard('memory.available>1Gi', 'EVICTION_HARD'), want: /is not <signal>/ },
  ];
  for (const tc of bad) it(`refuses ${tc.name}`, () => assert.throws(tc.fn, tc.want));

  it('reads the defaults, and drops a 0% threshold as upstream does', () => {
    assert.deepEqual(parseEvictionHard(`${DEFAULT_EVICTION_HARD},pid.available<0%`, 'EVICTION_HARD'), [
      { signal: 'memory.available', quantity: 100 * Mi },
      { signal: 'nodefs.available', percentage: 0.1 },
      { signal: 'nodefs.inodesFree', percentage: 0.05 },
      { signal: 'imagefs.available', percentage: 0.15 },
      { signal: 'imagefs.inodesFree', percentage: 0.05 },
    ]);
  });
});

describe('formatResource (the quantity as the apiserver writes it back)', () => {
  const cases: [string, number, string][] = [
    ['cpu', 4000, '4'],
    ['cpu', 1500, '1500m'],
    ['memory', 16_710_053_888, '16318412Ki'],
    ['memory', 100 * Mi, '100Mi'],
    ['memory', 8 * Gi, '8Gi'],
    ['ephemeral-storage', 1_000_000_001, '1000000001'],
    ['hugepages-2Mi', 0, '0'],
    ['pods', 110, '110'],
  ];
  for (const [resource, amount, want] of cases) it(`${resource} ${amount} -> ${want}`, () => assert.equal(formatResource(resource, amount), want));
});
