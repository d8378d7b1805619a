import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { FakeClock } from '@app/clock/testing';
import type { Pod } from '@app/contracts';
import { RecordingEventRecorder } from '@app/contracts/testing';
import type { RunPodSandboxRequest } from '@app/cri';
import { FakeCri } from '@app/cri/testing';
import { runtimePodStatus } from '@app/kube/testing';
import { silentLogger } from '@app/observability';
import { CrashLoopBackOff } from '../kuberuntime/backoff.js';
import { RuntimeClassManager } from './runtime-class.js';
import { ImagePuller } from '../images/image-puller.js';
import { RuntimeManager } from '../kuberuntime/runtime-manager.js';
import { FakeApiObjects, FakeHookRunner } from '../testing.js';

describe('RuntimeClassManager.lookupRuntimeHandler (runtimeclass_manager.go)', () => {
  const cases: { name: string; runtimeClassName?: string; setup?: (o: FakeApiObjects) => void; want?: string; error?: string }[] = [
    { name: 'no runtimeClassName: the default handler', want: '' },
    { name: 'a RuntimeClass: its handler', runtimeClassName: 'sandboxed', setup: (o) => o.put('RuntimeClass', '', 'sandboxed', { handler: 'runsc' }), want: 'runsc' },
    { name: 'an unknown RuntimeClass: upstream\'s NotFound', runtimeClassName: 'nope', error: 'runtimeclass.node.k8s.io "nope" not found' },
    {
      name: 'an unreadable RuntimeClass: what failed',
      runtimeClassName: 'x',
      setup: (o) => o.failWith('Unavailable', 'failed to sync runtimeclass.node.k8s.io cache: connection refused'),
      error: 'failed to lookup RuntimeClass x: failed to sync runtimeclass.node.k8s.io cache: connection refused',
    },
    { name: 'a node that has not joined a cluster: the name is the handler (ADR 0014)', runtimeClassName: 'kata', setup: (o) => o.failWith('NotJoined', 'not joined'), want: 'kata' },
  ];
  for (const tc of cases) {
    it(tc.name, async () => {
      const objects = new FakeApiObjects();
      tc.setup?.(objects);
      const lookup = new RuntimeClassManager(objects).lookupRuntimeHandler(tc.runtimeClassName);
      if (tc.error !== undefined) await assert.rejects(lookup, { message: tc.error });
      else assert.equal(await lookup, tc.want);
      if (tc.runtimeClassName) assert.deepEqual(objects.asked, [`RuntimeClass /${tc.runtimeClassName}`]);
      else assert.deepEqual(objects.asked, [], 'no runtimeClassName, no request');
    });
  }
});

describe('createPodSandbox with a RuntimeClass', () => {
  function setup(objects: FakeApiObjects) {
    const clock = new FakeClock(1_000_000);
    const events = new RecordingEventRecorder();
    const cri = new FakeCri()
      .onImage('ImageStatus', () => ({ image: { id: 'sha256:img' } }) as never)
      .onRuntime('ListPodSandbox', () => ({ items: [] }))
      .onRuntime('ListContainers', () => ({ containers: [] }))
      .onRuntime('RunPodSandbox', () => ({ podSandboxId: 'sb-new' }))
      .onRuntime('PodSandboxStatus', () => ({ info: {} }) as never)
      .onRuntime('CreateContainer', () => ({ containerId: 'c-new' }));
    const node = { nodeName: 'n1', hostIP: '10.0.0.1', logRoot: '/var/log/pods', podRoot: '/var/lib/kubelet/pods', hostDns: { servers: [], searches: [], options: [] } };
    const backOff = { initialMs: 10_000, maxMs: 300_000 };
    const manager = new RuntimeManager({ cri, images: new ImagePuller({ cri, events, clock, pullBackOff: backOff }), backOff: new CrashLoopBackOff(backOff), hooks: new FakeHookRunner(), events, node, clock, logger: silentLogger(), objects });
    return { cri, events, manager };
  }
  const pod = (runtimeClassName?: string): Pod => ({
    metadata: { name: 'p', namespace: 'default', uid: 'uid-1' },
    spec: { hostNetwork: true, containers: [{ name: 'app', image: 'img' }], ...(runtimeClassName ? { runtimeClassName } : {}) },
  });
  const noProbes = { liveness: () => undefined, startup: () => undefined };

  it('the RuntimeClass\'s handler is RunPodSandbox\'s runtime_handler', async () => {
    const objects = new FakeApiObjects();
    objects.put('RuntimeClass', '', 'sandboxed', { handler: 'runsc' });
    const { cri, manager } = setup(objects);
    const result = await manager.syncPod(pod('sandboxed'), runtimePodStatus([], []), noProbes);
    assert.equal(result.createdSandbox, true);
    assert.equal((cri.callsOf('RunPodSandbox')[0] as RunPodSandboxRequest).runtimeHandler, 'runsc');
  });

  it('an unknown RuntimeClass: no sandbox, a FailedCreatePodSandBox event and the pod\'s error', async () => {
    const { cri, events, manager } = setup(new FakeApiObjects());
    const result = await manager.syncPod(pod('nope'), runtimePodStatus([], []), noProbes);
    const message = 'Failed to create pod sandbox: runtimeclass.node.k8s.io "nope" not found';
    assert.deepEqual(result.podError, { reason: 'FailedCreatePodSandBox', message });
    assert.equal(cri.callsOf('RunPodSandbox').length, 0);
    assert.deepEqual(events.events.filter((e) => e.reason === 'FailedCreatePodSandBox').map((e) => `${e.type} ${e.message}`), [`Warning ${message}`]);
  });
});
