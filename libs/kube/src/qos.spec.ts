import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { generateAPIPodStatus } from './pod-status.js';
import { getPodQOS, type PodQOSClass } from './qos.js';
import type { Container, Pod } from '@app/contracts';
import { ctr, inputs, mkPod, runtime } from './pod-status.testing.js';

// ---------------------------------------------------------------------------
// getPodQOS
// ---------------------------------------------------------------------------

describe('getPodQOS', () => {
  const res = (requests?: Record<string, string>, limits?: Record<string, string>): Partial<Container> => ({ resources: { ...(requests ? { requests } : {}), ...(limits ? { limits } : {}) } });
  const cases: { name: string; pod: Pod; want: PodQOSClass }[] = [
    { name: 'no requests or limits: BestEffort', pod: mkPod(), want: 'BestEffort' },
    { name: 'only other resources: BestEffort', pod: mkPod({ containers: [ctr('a', res({ 'ephemeral-storage': '1Gi' }, { 'ephemeral-storage': '1Gi' }))] }), want: 'BestEffort' },
    { name: 'zero quantities: BestEffort', pod: mkPod({ containers: [ctr('a', res({ cpu: '0', memory: '0' }))] }), want: 'BestEffort' },
    {
      name: 'requests equal to limits for cpu and memory everywhere: Guaranteed',
      pod: mkPod({ containers: [ctr('a', res({ cpu: '500m', memory: '128Mi' }, { cpu: '0.5', memory: '134217728' })), ctr('b', res({ cpu: '1', memory: '1Gi' }, { cpu: '1', memory: '1Gi' }))] }),
      want: 'Guaranteed',
    },
    { name: 'limits only (requests default to them): Guaranteed', pod: mkPod({ containers: [ctr('a', res(undefined, { cpu: '1', memory: '1Gi' }))] }), want: 'Guaranteed' },
    {
      name: 'init containers count: Guaranteed when they are too',
      pod: mkPod({ containers: [ctr('a', res(undefined, { cpu: '1', memory: '1Gi' }))], initContainers: [ctr('i', res(undefined, { cpu: '2', memory: '2Gi' }))] }),
      want: 'Guaranteed',
    },
    { name: 'requests only: Burstable', pod: mkPod({ containers: [ctr('a', res({ cpu: '100m' }))] }), want: 'Burstable' },
    { name: 'requests below limits: Burstable', pod: mkPod({ containers: [ctr('a', res({ cpu: '500m', memory: '128Mi' }, { cpu: '1', memory: '128Mi' }))] }), want: 'Burstable' },
    { name: 'a cpu limit but no memory limit: Burstable', pod: mkPod({ containers: [ctr('a', res(undefined, { cpu: '1' }))] }), want: 'Burstable' },
    {
      name: 'one guaranteed container beside a best-effort one: Burstable',
      pod: mkPod({ containers: [ctr('a', res(undefined, { cpu: '1', memory: '1Gi' })), ctr('b')] }),
      want: 'Burstable',
    },
    {
      name: 'a best-effort init container beside a guaranteed app: Burstable',
      pod: mkPod({ containers: [ctr('a', res(undefined, { cpu: '1', memory: '1Gi' }))], initContainers: [ctr('i')] }),
      want: 'Burstable',
    },
  ];
  for (const tc of cases) {
    it(tc.name, () => {
      assert.equal(getPodQOS(tc.pod), tc.want);
      assert.equal(generateAPIPodStatus(inputs(tc.pod, runtime([]))).qosClass, tc.want);
    });
  }
});
