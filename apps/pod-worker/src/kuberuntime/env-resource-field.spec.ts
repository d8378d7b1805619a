import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { Container, Pod } from '@app/contracts';
import { containerEnv } from './runtime-config.js';

const NODE = {
  nodeName: 'n1',
  hostIP: '10.0.0.1',
  logRoot: '/var/log/pods',
  podRoot: '/var/lib/kubelet/pods',
  hostDns: { servers: [], searches: [], options: [] },
  allocatable: { cpuMillis: 2000, memoryBytes: 8 * 1024 ** 3 },
};
const pod = (...containers: Container[]): Pod => ({ metadata: { name: 'p', namespace: 'ns', uid: 'u1' }, spec: { containers } });
const resourceEnv = (name: string, resource: string, extra: { containerName?: string; divisor?: string } = {}) => ({ name, valueFrom: { resourceFieldRef: { resource, ...extra } } });
const env = (p: Pod, c: Container) => containerEnv(p, c, ['10.1.0.5'], NODE).map((e) => `${e.key ?? ''}=${e.value ?? ''}`);

describe('containerEnv: resourceFieldRef variables (the downward API in env)', () => {
  it('gives the container\'s own requests and limits, divided and rounded up', () => {
    const c: Container = {
      name: 'dapi',
      image: 'i',
      resources: { requests: { cpu: '250m', memory: '32Mi' }, limits: { cpu: '1250m', memory: '64Mi' } },
      env: [resourceEnv('CPU_REQUEST', 'requests.cpu', { divisor: '1m' }), resourceEnv('CPU_LIMIT', 'limits.cpu'), resourceEnv('MEMORY_REQUEST', 'requests.memory', { divisor: '1Mi' }), resourceEnv('MEMORY_LIMIT', 'limits.memory')],
    };
    assert.deepEqual(env(pod(c), c), ['CPU_REQUEST=250', 'CPU_LIMIT=2', 'MEMORY_REQUEST=32', `MEMORY_LIMIT=${64 * 1024 ** 2}`]);
  });

  it('an unset limit is the node\'s allocatable, an unset request 0 (defaultPodLimitsForDownwardAPI)', () => {
    const c: Container = { name: 'dapi', image: 'i', env: [resourceEnv('CPU_LIMIT', 'limits.cpu'), resourceEnv('MEMORY_LIMIT', 'limits.memory'), resourceEnv('CPU_REQUEST', 'requests.cpu')] };
    assert.deepEqual(env(pod(c), c), ['CPU_LIMIT=2', `MEMORY_LIMIT=${8 * 1024 ** 3}`, 'CPU_REQUEST=0']);
  });

  it('names another container of the pod', () => {
    const other: Container = { name: 'other', image: 'i', resources: { limits: { memory: '1Gi' } } };
    const c: Container = { name: 'dapi', image: 'i', env: [resourceEnv('OTHER_MEMORY', 'limits.memory', { containerName: 'other', divisor: '1Mi' })] };
    assert.deepEqual(env(pod(c, other), c), ['OTHER_MEMORY=1024']);
  });
});
