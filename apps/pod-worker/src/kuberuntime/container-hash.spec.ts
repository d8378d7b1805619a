import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { Container } from '@app/contracts';
import { hashContainer } from './container-hash.js';

const base: Container = {
  name: 'app',
  image: 'localhost/kubelet-split/busybox:1.35',
  command: ['sh', '-c'],
  args: ['sleep 3600'],
  env: [{ name: 'A', value: '1' }],
  ports: [{ containerPort: 8080, protocol: 'TCP' }],
  resources: { requests: { cpu: '100m' } },
};

describe('hashContainer', () => {
  it('is 16 hex digits', () => assert.match(hashContainer(base), /^[0-9a-f]{16}$/));
  it('is stable across calls', () => assert.equal(hashContainer(base), hashContainer({ ...base })));

  const same: { name: string; other: Container }[] = [
    { name: 'key order', other: { args: ['sleep 3600'], command: ['sh', '-c'], resources: base.resources, ports: [{ protocol: 'TCP', containerPort: 8080 }], env: [{ value: '1', name: 'A' }], image: base.image, name: 'app' } },
    { name: 'resources (in-place resize is not done, so no restart)', other: { ...base, resources: { limits: { memory: '64Mi' } } } },
    { name: 'no resources at all', other: (({ resources: _r, ...rest }) => rest)(base) },
    { name: 'an explicit undefined', other: { ...base, workingDir: undefined } },
    { name: 'an empty list spelled out', other: { ...base, volumeMounts: [] } },
    { name: 'an empty object spelled out', other: { ...base, securityContext: {} } },
  ];
  for (const tc of same) it(`ignores ${tc.name}`, () => assert.equal(hashContainer(tc.other), hashContainer(base)));

  const different: { name: string; other: Container }[] = [
    { name: 'name', other: { ...base, name: 'app2' } },
    { name: 'image', other: { ...base, image: 'localhost/kubelet-split/busybox:1.36' } },
    { name: 'command', other: { ...base, command: ['sh', '-ec'] } },
    { name: 'command order', other: { ...base, command: ['-c', 'sh'] } },
    { name: 'env value', other: { ...base, env: [{ name: 'A', value: '2' }] } },
    { name: 'ports', other: { ...base, ports: [{ containerPort: 8081, protocol: 'TCP' }] } },
    { name: 'a liveness probe', other: { ...base, livenessProbe: { tcpSocket: { port: 8080 } } } },
    { name: 'the security context', other: { ...base, securityContext: { runAsUser: 1000 } } },
    { name: 'a volume mount', other: { ...base, volumeMounts: [{ name: 'data', mountPath: '/data' }] } },
    { name: 'the restart policy (sidecar or not)', other: { ...base, restartPolicy: 'Always' } },
  ];
  for (const tc of different) it(`changes with ${tc.name}`, () => assert.notEqual(hashContainer(tc.other), hashContainer(base)));
});
