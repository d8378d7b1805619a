import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { parseEvictionHard } from '@app/kube';
import { PressureConditions, thresholdsMet, type SignalObservations } from './eviction.js';

const Mi = 2 ** 20;
const Gi = 2 ** 30;
const DEFAULTS = parseEvictionHard('memory.available<100Mi,nodefs.available<10%,nodefs.inodesFree<5%,imagefs.available<15%,imagefs.inodesFree<5%', 'EVICTION_HARD');
const healthy: SignalObservations = {
  'memory.available': { available: 2 * Gi, capacity: 8 * Gi },
  'nodefs.available': { available: 50 * Gi, capacity: 100 * Gi },
  'nodefs.inodesFree': { available: 500_000, capacity: 1_000_000 },
  'pid.available': { available: 30_000, capacity: 32_768 },
};

describe('thresholdsMet against upstream\'s default hard thresholds', () => {
  const cases: { name: string; obs: SignalObservations; want: string[] }[] = [
    { name: 'a healthy machine meets none', obs: healthy, want: [] },
    { name: 'memory below 100Mi', obs: { ...healthy, 'memory.available': { available: 99 * Mi, capacity: 8 * Gi } }, want: ['memory.available'] },
    { name: 'exactly 100Mi is not below', obs: { ...healthy, 'memory.available': { available: 100 * Mi, capacity: 8 * Gi } }, want: [] },
    { name: 'the node fs under 10% free', obs: { ...healthy, 'nodefs.available': { available: 9 * Gi, capacity: 100 * Gi } }, want: ['nodefs.available'] },
    { name: 'inodes under 5% free', obs: { ...healthy, 'nodefs.inodesFree': { available: 49_999, capacity: 1_000_000 } }, want: ['nodefs.inodesFree'] },
    { name: 'imagefs is not observed: its thresholds meet nothing', obs: healthy, want: [] },
    { name: 'no pid.available threshold by default: PIDs never count', obs: { ...healthy, 'pid.available': { available: 0, capacity: 32_768 } }, want: [] },
  ];
  for (const tc of cases) it(tc.name, () => assert.deepEqual(thresholdsMet(DEFAULTS, tc.obs).map((t) => t.signal), tc.want));
});

describe('PressureConditions (nodeConditionsObservedSince and the transition period)', () => {
  it('a condition holds for the transition period after its threshold was last met, then clears', () => {
    const p = new PressureConditions([...DEFAULTS, ...parseEvictionHard('pid.available<1000', 'EVICTION_HARD')], 300_000);
    const low: SignalObservations = { ...healthy, 'memory.available': { available: 50 * Mi, capacity: 8 * Gi }, 'pid.available': { available: 10, capacity: 32_768 } };
    assert.deepEqual(p.observe(healthy, 0).pressure, { MemoryPressure: false, DiskPressure: false, PIDPressure: false });
    assert.deepEqual(p.observe(low, 10_000).pressure, { MemoryPressure: true, DiskPressure: false, PIDPressure: true });
    assert.deepEqual(p.observe(healthy, 20_000).pressure, { MemoryPressure: true, DiskPressure: false, PIDPressure: true }, 'still within 5 minutes');
    assert.deepEqual(p.observe(healthy, 310_000).pressure, { MemoryPressure: false, DiskPressure: false, PIDPressure: false });
  });
});
