import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { Container, ContainerPort, Pod } from '@app/contracts';
import { QuantityError } from './quantity.js';
import { hostPorts, podRequests, type HostPort, type PodRequests } from './resources.js';

function ctr(name: string, requests?: Record<string, string>, limits?: Record<string, string>): Container {
  return { name, image: 'busybox', resources: { ...(requests && { requests }), ...(limits && { limits }) } };
}

function sidecar(name: string, requests?: Record<string, string>, limits?: Record<string, string>): Container {
  return { ...ctr(name, requests, limits), restartPolicy: 'Always' };
}

function pod(containers: Container[], initContainers?: Container[], extra: Partial<Pod['spec']> = {}): Pod {
  return { metadata: { name: 'p', namespace: 'default', uid: 'u' }, spec: { containers, ...(initContainers && { initContainers }), ...extra } };
}

const Mi = 1024 * 1024;

describe('podRequests', () => {
  const cases: { name: string; pod: Pod; want: PodRequests }[] = [
    { name: 'no requests at all is zero', pod: pod([ctr('a')]), want: { cpuMillis: 0, memoryBytes: 0 } },
    { name: 'no resources field is zero', pod: pod([{ name: 'a' }]), want: { cpuMillis: 0, memoryBytes: 0 } },
    {
      name: 'regular containers add up',
      pod: pod([ctr('a', { cpu: '100m', memory: '64Mi' }), ctr('b', { cpu: '250m', memory: '32Mi' })]),
      want: { cpuMillis: 350, memoryBytes: 96 * Mi },
    },
    {
      name: 'limits stand in for missing requests',
      pod: pod([ctr('a', undefined, { cpu: '500m', memory: '128Mi' })]),
      want: { cpuMillis: 500, memoryBytes: 128 * Mi },
    },
    {
      name: 'limits stand in resource by resource: a cpu request keeps, a memory limit fills in',
      pod: pod([ctr('a', { cpu: '100m' }, { cpu: '1', memory: '256Mi' })]),
      want: { cpuMillis: 100, memoryBytes: 256 * Mi },
    },
    {
      name: 'limits stand in for init containers too',
      pod: pod([ctr('a', { cpu: '100m' })], [ctr('init', undefined, { cpu: '2' })]),
      want: { cpuMillis: 2000, memoryBytes: 0 },
    },
    {
      name: 'an init container bigger than the app sets the request (upstream fit.go example: cpu 3, memory 3G)',
      pod: pod(
        [ctr('c1', { cpu: '2', memory: '1G' }), ctr('c2', { cpu: '1', memory: '1G' })],
        [ctr('ic1', { cpu: '2', memory: '1G' }), ctr('ic2', { cpu: '2', memory: '3G' })],
      ),
      want: { cpuMillis: 3000, memoryBytes: 3_000_000_000 },
    },
    {
      name: 'init containers take the max, not the sum',
      pod: pod([ctr('a', { cpu: '100m' })], [ctr('i1', { cpu: '300m' }), ctr('i2', { cpu: '200m' })]),
      want: { cpuMillis: 300, memoryBytes: 0 },
    },
    {
      name: 'a sidecar adds to the running sum',
      pod: pod([ctr('app', { cpu: '500m', memory: '100Mi' })], [sidecar('proxy', { cpu: '200m', memory: '50Mi' })]),
      want: { cpuMillis: 700, memoryBytes: 150 * Mi },
    },
    {
      name: 'an init container after a sidecar runs beside it',
      pod: pod([ctr('app', { cpu: '100m' })], [sidecar('proxy', { cpu: '200m' }), ctr('migrate', { cpu: '1' })]),
      want: { cpuMillis: 1200, memoryBytes: 0 },
    },
    {
      name: 'an init container before a sidecar does not count it',
      pod: pod([ctr('app', { cpu: '100m' })], [ctr('migrate', { cpu: '1' }), sidecar('proxy', { cpu: '200m' })]),
      want: { cpuMillis: 1000, memoryBytes: 0 },
    },
    {
      name: 'KEP-753 example: max(sum of app and sidecars, each init plus the sidecars before it)',
      pod: pod(
        [ctr('app', { cpu: '1', memory: '1Gi' })],
        [
          ctr('i1', { cpu: '2', memory: '100Mi' }),
          sidecar('s1', { cpu: '300m', memory: '200Mi' }),
          ctr('i2', { cpu: '1500m', memory: '2Gi' }),
          sidecar('s2', { cpu: '100m', memory: '100Mi' }),
        ],
      ),
      // running: 1 + 0.3 + 0.1 = 1.4 cpu, 1Gi + 300Mi; i1 alone: 2 cpu; i2 + s1: 1.8 cpu, 2Gi + 200Mi
      want: { cpuMillis: 2000, memoryBytes: 2048 * Mi + 200 * Mi },
    },
    {
      name: 'sub-millicore requests sum before rounding up, as quantities do',
      pod: pod([ctr('a', { cpu: '0.4m' }), ctr('b', { cpu: '0.4m' })]),
      want: { cpuMillis: 1, memoryBytes: 0 },
    },
  ];
  for (const tc of cases) {
    it(tc.name, () => assert.deepEqual(podRequests(tc.pod), tc.want));
  }

  it('throws QuantityError on a malformed request', () => {
    assert.throws(() => podRequests(pod([ctr('a', { memory: '12MB' })])), QuantityError);
  });
});

describe('hostPorts', () => {
  const port = (p: ContainerPort): Container => ({ name: `c${p.containerPort}`, ports: [p] });
  const cases: { name: string; pod: Pod; want: HostPort[] }[] = [
    { name: 'no ports', pod: pod([{ name: 'a' }]), want: [] },
    { name: 'a container port alone binds no host port', pod: pod([port({ containerPort: 80 })]), want: [] },
    {
      name: 'a host port with defaults: TCP on every address',
      pod: pod([port({ containerPort: 80, hostPort: 8080 })]),
      want: [{ port: 8080, protocol: 'TCP', hostIP: '0.0.0.0' }],
    },
    {
      name: 'protocol and host IP as given',
      pod: pod([port({ containerPort: 53, hostPort: 5353, protocol: 'UDP', hostIP: '127.0.0.1' })]),
      want: [{ port: 5353, protocol: 'UDP', hostIP: '127.0.0.1' }],
    },
    {
      name: 'an empty host IP is every address',
      pod: pod([port({ containerPort: 80, hostPort: 80, hostIP: '' })]),
      want: [{ port: 80, protocol: 'TCP', hostIP: '0.0.0.0' }],
    },
    {
      name: 'hostNetwork: the container port is the host port',
      pod: pod([port({ containerPort: 9100 })], undefined, { hostNetwork: true }),
      want: [{ port: 9100, protocol: 'TCP', hostIP: '0.0.0.0' }],
    },
    {
      name: 'hostNetwork: hostPort 0 is unset',
      pod: pod([port({ containerPort: 9100, hostPort: 0 })], undefined, { hostNetwork: true }),
      want: [{ port: 9100, protocol: 'TCP', hostIP: '0.0.0.0' }],
    },
    {
      name: 'hostNetwork: an explicit host port stands',
      pod: pod([port({ containerPort: 9100, hostPort: 9100, protocol: 'SCTP' })], undefined, { hostNetwork: true }),
      want: [{ port: 9100, protocol: 'SCTP', hostIP: '0.0.0.0' }],
    },
    {
      name: 'sidecars come first, ordinary init containers do not count',
      pod: pod(
        [port({ containerPort: 80, hostPort: 80 })],
        [
          { name: 'setup', ports: [{ containerPort: 1, hostPort: 1001 }] },
          { name: 'proxy', restartPolicy: 'Always', ports: [{ containerPort: 15001, hostPort: 15001 }] },
        ],
      ),
      want: [
        { port: 15001, protocol: 'TCP', hostIP: '0.0.0.0' },
        { port: 80, protocol: 'TCP', hostIP: '0.0.0.0' },
      ],
    },
    {
      name: 'every port of every container',
      pod: pod([{ name: 'a', ports: [{ containerPort: 1, hostPort: 81 }, { containerPort: 2, hostPort: 82 }] }, port({ containerPort: 3, hostPort: 83 })]),
      want: [
        { port: 81, protocol: 'TCP', hostIP: '0.0.0.0' },
        { port: 82, protocol: 'TCP', hostIP: '0.0.0.0' },
        { port: 83, protocol: 'TCP', hostIP: '0.0.0.0' },
      ],
    },
  ];
  for (const tc of cases) {
    it(tc.name, () => assert.deepEqual(hostPorts(tc.pod), tc.want));
  }
});
