import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { Pod, Toleration } from '@app/contracts';
import { evictionAdmit, isCriticalPod } from './eviction.js';

function pod(name: string, opts: { memory?: string; source?: string; priority?: number; tolerations?: Toleration[] } = {}): Pod {
  return {
    metadata: { name, uid: name, annotations: { 'kubernetes.io/config.source': opts.source ?? 'api' } },
    spec: {
      containers: [{ name: 'c', image: 'busybox', ...(opts.memory ? { resources: { requests: { memory: opts.memory } } } : {}) }],
      ...(opts.priority !== undefined ? { priority: opts.priority } : {}),
      ...(opts.tolerations ? { tolerations: opts.tolerations } : {}),
    },
  };
}

describe('evictionAdmit (eviction_manager.go Admit)', () => {
  const refusedUnder = (conditions: string) => ({ admit: false, reason: 'Evicted', message: `The node had condition: [${conditions}]. ` });
  const cases: { name: string; pod: Pod; conditions: string[]; want: object }[] = [
    { name: 'no condition: a BestEffort pod is admitted', pod: pod('be'), conditions: [], want: { admit: true } },
    { name: 'memory pressure: a BestEffort pod is refused', pod: pod('be'), conditions: ['MemoryPressure'], want: refusedUnder('MemoryPressure') },
    { name: 'memory pressure: a Burstable pod is admitted', pod: pod('bu', { memory: '64Mi' }), conditions: ['MemoryPressure'], want: { admit: true } },
    {
      name: 'memory pressure: a BestEffort pod tolerating the memory-pressure taint is admitted',
      pod: pod('tol', { tolerations: [{ key: 'node.kubernetes.io/memory-pressure', operator: 'Exists', effect: 'NoSchedule' }] }),
      conditions: ['MemoryPressure'],
      want: { admit: true },
    },
    {
      name: 'memory pressure: another toleration does not help',
      pod: pod('tol', { tolerations: [{ key: 'node.kubernetes.io/disk-pressure', operator: 'Exists', effect: 'NoSchedule' }] }),
      conditions: ['MemoryPressure'],
      want: refusedUnder('MemoryPressure'),
    },
    { name: 'disk pressure: even a Burstable pod is refused', pod: pod('bu', { memory: '64Mi' }), conditions: ['DiskPressure'], want: refusedUnder('DiskPressure') },
    { name: 'two conditions: Go\'s list, space-separated', pod: pod('bu', { memory: '64Mi' }), conditions: ['MemoryPressure', 'DiskPressure'], want: refusedUnder('MemoryPressure DiskPressure') },
    { name: 'a static pod is critical: admitted under any pressure', pod: pod('st', { source: 'file' }), conditions: ['MemoryPressure', 'DiskPressure'], want: { admit: true } },
    { name: 'system-critical priority: admitted', pod: pod('sys', { priority: 2_000_001_000 }), conditions: ['DiskPressure'], want: { admit: true } },
  ];
  for (const tc of cases) it(tc.name, () => assert.deepEqual(evictionAdmit(tc.pod, tc.conditions), tc.want));

  it('isCriticalPod: static, mirror, or at system-critical priority', () => {
    assert.deepEqual(
      [pod('a'), pod('b', { source: 'http' }), pod('c', { priority: 1_999_999_999 }), pod('d', { priority: 2_000_000_000 })].map(isCriticalPod),
      [false, true, false, true],
    );
  });
});
