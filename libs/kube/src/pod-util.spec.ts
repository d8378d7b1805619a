import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { Container, ContainerStatus, PodStatus } from '@app/contracts';
import { hasRestartableInitContainer } from './kubetypes.js';
import { findContainerStatusByID, getContainerStatus, isRestartableInitContainer } from './pod-util.js';

describe('isRestartableInitContainer', () => {
  const cases: { name: string; container: Container | undefined; want: boolean }[] = [
    { name: 'restartPolicy Always: a sidecar', container: { name: 'proxy', restartPolicy: 'Always' }, want: true },
    { name: 'no restartPolicy: a regular init container', container: { name: 'init' }, want: false },
    { name: 'no container', container: undefined, want: false },
  ];
  for (const tc of cases) it(tc.name, () => assert.equal(isRestartableInitContainer(tc.container), tc.want));

  it('hasRestartableInitContainer: some init container is a sidecar', () => {
    assert.equal(hasRestartableInitContainer({ metadata: {}, spec: { containers: [], initContainers: [{ name: 'init' }, { name: 'proxy', restartPolicy: 'Always' }] } }), true);
    assert.equal(hasRestartableInitContainer({ metadata: {}, spec: { containers: [{ name: 'app', restartPolicy: 'Always' }], initContainers: [{ name: 'init' }] } }), false);
    assert.equal(hasRestartableInitContainer({ metadata: {}, spec: { containers: [] } }), false);
  });
});

describe('getContainerStatus', () => {
  const s = (name: string, restartCount: number): ContainerStatus => ({ name, ready: false, restartCount, image: 'img', imageID: '' });
  it('the first status of that name, or none', () => {
    const list = [s('a', 1), s('b', 2), s('b', 3)];
    assert.equal(getContainerStatus(list, 'b')?.restartCount, 2);
    assert.equal(getContainerStatus(list, 'c'), undefined);
    assert.equal(getContainerStatus(undefined, 'a'), undefined);
  });
});

describe('findContainerStatusByID (status_manager.go findContainerStatus)', () => {
  const s = (name: string, containerID?: string): ContainerStatus => ({ name, ready: false, restartCount: 0, image: 'img', imageID: '', ...(containerID !== undefined ? { containerID } : {}) });
  const status: PodStatus = { containerStatuses: [s('app', 'containerd://app-1'), s('web')], initContainerStatuses: [s('init', 'containerd://init-1')] };
  const cases: { name: string; id: string; want: string | undefined }[] = [
    { name: 'a regular container by its bare ID', id: 'app-1', want: 'app' },
    { name: 'a regular container by its full ID', id: 'containerd://app-1', want: 'app' },
    { name: 'an init container', id: 'init-1', want: 'init' },
    { name: 'an unknown ID', id: 'nope', want: undefined },
  ];
  for (const tc of cases) it(tc.name, () => assert.equal(findContainerStatusByID(status, tc.id)?.name, tc.want));
});
