import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { ContainerStatus } from '@app/cri';
import { toRuntimeContainerStatus } from './runtime-status.js';

describe('toRuntimeContainerStatus: the container user', () => {
  const base = { id: 'c1', metadata: { name: 'app', attempt: 0 }, state: 'CONTAINER_RUNNING', createdAt: '1', startedAt: '2', finishedAt: '0', exitCode: 0, image: { image: 'busybox' }, imageRef: 'sha256:1', reason: '', message: '', labels: {}, annotations: {}, mounts: [], logPath: '' };
  it("containerd 2's user, its int64s as the cache's JSON carries them (decimal strings), read as numbers", () => {
    const c = { ...base, user: { linux: { uid: '1000', gid: '3000', supplementalGroups: ['3000', '4000'] } } } as unknown as ContainerStatus;
    assert.deepEqual(toRuntimeContainerStatus(c).user, { linux: { uid: 1000, gid: 3000, supplementalGroups: [3000, 4000] } });
  });
  it('containerd 1.6 says nothing of it: no user', () => {
    assert.equal(toRuntimeContainerStatus(base as unknown as ContainerStatus).user, undefined);
  });
});
