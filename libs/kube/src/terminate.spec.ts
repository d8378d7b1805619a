import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { generateAPIPodStatus } from './pod-status.js';
import { terminatePodStatus } from './terminate.js';
import type { ContainerStatus, Pod, PodPhase, PodStatus } from '@app/contracts';
import { ago, cs, ctr, inputs, iso, mkPod, NOW, rc, running, runtime, statusNamed, waiting } from './pod-status.testing.js';

// ---------------------------------------------------------------------------
// terminatePodStatus
// ---------------------------------------------------------------------------

const UNKNOWN_137 = { terminated: { exitCode: 137, reason: 'ContainerStatusUnknown', message: 'The container could not be located when the pod was terminated' } };


describe('terminatePodStatus', () => {
  const completed = { terminated: { exitCode: 0, reason: 'Completed', containerID: 'containerd://done' } };
  const cases: { name: string; pod: Pod; status: PodStatus; want: { phase: PodPhase | undefined; containers: Record<string, ContainerStatus['state']>; init?: Record<string, ContainerStatus['state']> } }[] = [
    {
      name: 'running containers never seen terminated: 137 ContainerStatusUnknown; Running becomes Failed',
      pod: mkPod({ containers: [ctr('web'), ctr('app')] }),
      status: { phase: 'Running', containerStatuses: [cs('web', running(ago(50))), cs('app', completed)] },
      want: { phase: 'Failed', containers: { web: UNKNOWN_137, app: completed } },
    },
    {
      name: 'a waiting container of an initialized pod is terminated too',
      pod: mkPod(),
      status: { phase: 'Pending', containerStatuses: [cs('app', waiting('ContainerCreating'))] },
      want: { phase: 'Failed', containers: { app: UNKNOWN_137 } },
    },
    {
      name: 'a terminal phase is kept',
      pod: mkPod({ restartPolicy: 'Never' }),
      status: { phase: 'Succeeded', containerStatuses: [cs('app', completed)] },
      want: { phase: 'Succeeded', containers: { app: completed } },
    },
    {
      name: 'not initialized: regular containers stay waiting; init containers up to the last that started are terminated',
      pod: mkPod({ initContainers: [ctr('init1'), ctr('init2'), ctr('init3')] }),
      status: {
        phase: 'Pending',
        initContainerStatuses: [cs('init1', completed), cs('init2', running(ago(10))), cs('init3', waiting('PodInitializing'))],
        containerStatuses: [cs('app', waiting('PodInitializing'))],
      },
      want: { phase: 'Failed', init: { init1: completed, init2: UNKNOWN_137, init3: waiting('PodInitializing') }, containers: { app: waiting('PodInitializing') } },
    },
    {
      name: 'no init container ever started: the first one is marked anyway',
      pod: mkPod({ initContainers: [ctr('init1'), ctr('init2')] }),
      status: { phase: 'Pending', initContainerStatuses: [cs('init1', waiting('PodInitializing')), cs('init2', waiting('PodInitializing'))], containerStatuses: [cs('app', waiting('PodInitializing'))] },
      want: { phase: 'Failed', init: { init1: UNKNOWN_137, init2: waiting('PodInitializing') }, containers: { app: waiting('PodInitializing') } },
    },
    {
      name: 'initialized (the last init container succeeded): regular containers are terminated',
      pod: mkPod({ initContainers: [ctr('init1')] }),
      status: { phase: 'Pending', initContainerStatuses: [cs('init1', completed)], containerStatuses: [cs('app', waiting('PodInitializing'))] },
      want: { phase: 'Failed', init: { init1: completed }, containers: { app: UNKNOWN_137 } },
    },
    {
      name: 'a static pod keeps its phase (upstream #116484), its containers are still terminated',
      pod: mkPod({ staticPod: true }),
      status: { phase: 'Running', containerStatuses: [cs('app', running(ago(50)))] },
      want: { phase: 'Running', containers: { app: UNKNOWN_137 } },
    },
  ];
  for (const tc of cases) {
    it(tc.name, () => {
      const before = structuredClone(tc.status);
      const s = terminatePodStatus(tc.pod, tc.status, NOW);
      assert.equal(s.phase, tc.want.phase);
      assert.deepEqual(Object.fromEntries((s.containerStatuses ?? []).map((c) => [c.name, c.state])), tc.want.containers);
      if (tc.want.init) assert.deepEqual(Object.fromEntries((s.initContainerStatuses ?? []).map((c) => [c.name, c.state])), tc.want.init);
      assert.deepEqual(tc.status, before, 'the input status is not modified');
    });
  }

  it('stamps startTime and transition times only where missing', () => {
    const s = terminatePodStatus(mkPod(), { phase: 'Running', conditions: [{ type: 'Ready', status: 'True', lastTransitionTime: iso(ago(60)) }, { type: 'PodScheduled', status: 'True' }], containerStatuses: [] }, NOW);
    assert.equal(s.startTime, iso(NOW));
    assert.deepEqual(
      s.conditions?.map((c) => c.lastTransitionTime),
      [iso(ago(60)), iso(NOW)],
    );
  });

  it('a status generated for a running pod, then terminated: every container accounted for', () => {
    const pod = mkPod({ containers: [ctr('web'), ctr('app')] });
    const generated = generateAPIPodStatus(inputs(pod, runtime([rc('web', 'running'), rc('app', 'exited', { exitCode: 0 })]), { podIsTerminal: true }));
    assert.equal(generated.phase, 'Running');
    const final = terminatePodStatus(pod, generated, NOW);
    assert.equal(final.phase, 'Failed');
    assert.deepEqual(statusNamed(final.containerStatuses, 'web').state, UNKNOWN_137);
    assert.equal(statusNamed(final.containerStatuses, 'app').state?.terminated?.exitCode, 0);
  });
});
