import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { Container, Pod, PodSpec } from '@app/contracts';
import type { PodSandboxStatus } from '@app/cri';
import { hasAnyRegularContainerCreated, networkNamespaceForPod, podSandboxChanged } from './kuberuntime.js';
import type { RuntimeContainerStatus } from './runtime-status.js';
import { runtimeContainerStatus as rc, runtimePodStatus as status, sandboxStatus as sandbox } from './testing.js';

const ctr = (name: string, extra: Partial<Container> = {}): Container => ({ name, image: 'localhost/kubelet-split/busybox:1.35', ...extra });
const pod = (spec: Partial<PodSpec> = {}): Pod => ({ metadata: { name: 'p', namespace: 'default', uid: 'uid-1' }, spec: { containers: [ctr('app')], ...spec } });

describe('podSandboxChanged', () => {
  const cases: { name: string; pod: Pod; sandboxes: PodSandboxStatus[]; want: { changed: boolean; attempt: number; sandboxId: string } }[] = [
    { name: 'no sandbox', pod: pod(), sandboxes: [], want: { changed: true, attempt: 0, sandboxId: '' } },
    { name: 'one ready sandbox, unchanged', pod: pod(), sandboxes: [sandbox('sb1', { attempt: 3 })], want: { changed: false, attempt: 3, sandboxId: 'sb1' } },
    { name: 'an older ready sandbox behind a not-ready newest', pod: pod(), sandboxes: [sandbox('sb2', { ready: false, attempt: 1 }), sandbox('sb1')], want: { changed: true, attempt: 2, sandboxId: 'sb2' } },
    { name: 'two ready sandboxes: reconcile them', pod: pod(), sandboxes: [sandbox('sb2', { attempt: 1 }), sandbox('sb1')], want: { changed: true, attempt: 2, sandboxId: 'sb2' } },
    { name: 'hostNetwork pod in a pod-network sandbox', pod: pod({ hostNetwork: true }), sandboxes: [sandbox('sb1', { attempt: 1 })], want: { changed: true, attempt: 2, sandboxId: '' } },
    { name: 'pod-network pod in a host-network sandbox', pod: pod(), sandboxes: [sandbox('sb1', { netns: 'NODE' })], want: { changed: true, attempt: 1, sandboxId: '' } },
    { name: 'no IP on a pod-network sandbox', pod: pod(), sandboxes: [sandbox('sb1', { ip: '' })], want: { changed: true, attempt: 1, sandboxId: 'sb1' } },
    { name: 'no network status at all: not a missing IP (Network == nil upstream)', pod: pod(), sandboxes: [sandbox('sb1', { noNetwork: true })], want: { changed: false, attempt: 0, sandboxId: 'sb1' } },
    { name: 'host-network sandbox of a hostNetwork pod needs no IP', pod: pod({ hostNetwork: true }), sandboxes: [sandbox('sb1', { netns: 'NODE' })], want: { changed: false, attempt: 0, sandboxId: 'sb1' } },
  ];
  for (const tc of cases) {
    it(tc.name, () => {
      const { changed, attempt, sandboxId, reason } = podSandboxChanged(tc.pod, status(tc.sandboxes));
      assert.deepEqual({ changed, attempt, sandboxId }, tc.want);
      assert.equal(reason !== undefined, tc.want.changed, 'a reason exactly when changed');
    });
  }

  it('an ip field absent from the status is an empty IP, as in Go', () => {
    const sb = sandbox('sb1');
    sb.network = { additionalIps: [] } as unknown as PodSandboxStatus['network'];
    assert.equal(podSandboxChanged(pod(), status([sb])).changed, true);
  });
});

describe('networkNamespaceForPod', () => {
  it('NODE for a hostNetwork pod, POD otherwise', () => {
    assert.equal(networkNamespaceForPod(pod({ hostNetwork: true })), 'NODE');
    assert.equal(networkNamespaceForPod(pod()), 'POD');
  });
});

describe('hasAnyRegularContainerCreated', () => {
  const cases: { name: string; containers: RuntimeContainerStatus[]; want: boolean }[] = [
    { name: 'no container at all', containers: [], want: false },
    { name: 'only an init container', containers: [rc('init', 'exited')], want: false },
    { name: 'a regular container created', containers: [rc('app', 'created')], want: true },
    { name: 'a regular container running', containers: [rc('app', 'running')], want: true },
    { name: 'a regular container exited', containers: [rc('app', 'exited')], want: true },
    { name: 'the newest instance unknown, an older one exited: the newest counts', containers: [rc('app', 'exited'), rc('app', 'unknown')], want: false },
  ];
  for (const tc of cases) {
    it(tc.name, () => {
      assert.equal(hasAnyRegularContainerCreated(pod({ initContainers: [ctr('init')] }), status([sandbox('sb1')], tc.containers)), tc.want);
    });
  }
});
