import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { Pod, PodCondition, PodStatus } from '@app/contracts';
import { isMirrorPodOf, mergePodStatus, preparePodStatusPatch } from './pod-status-patch.js';

const NOW = Date.UTC(2026, 0, 1, 12, 0, 0);
const T0 = '2026-01-01T10:00:00Z';
const c = (type: string, status: 'True' | 'False', extra: Partial<PodCondition> = {}): PodCondition => ({ type, status, lastTransitionTime: T0, ...extra });
const types = (s: PodStatus) => (s.conditions ?? []).map((x) => `${x.type}=${x.status}${x.reason ? `(${x.reason})` : ''}`);

const kubeletRunning: PodStatus = {
  phase: 'Running',
  conditions: [c('PodReadyToStartContainers', 'True'), c('Initialized', 'True'), c('Ready', 'True'), c('ContainersReady', 'True'), c('PodScheduled', 'True')],
};

describe('mergePodStatus', () => {
  const cases: { name: string; old: PodStatus; next: PodStatus; couldRun: boolean; phase: string | undefined; conditions: string[]; reason?: string }[] = [
    {
      name: 'the kubelet\'s conditions replace the API\'s; others\' conditions (a readiness gate, DisruptionTarget) are kept',
      old: { phase: 'Pending', conditions: [c('PodScheduled', 'True'), c('example.com/gate', 'True'), c('DisruptionTarget', 'True'), c('Ready', 'False')] },
      next: kubeletRunning,
      couldRun: true,
      phase: 'Running',
      conditions: ['example.com/gate=True', 'DisruptionTarget=True', 'PodReadyToStartContainers=True', 'Initialized=True', 'Ready=True', 'ContainersReady=True', 'PodScheduled=True'],
    },
    {
      name: 'a terminal phase waits while a container could still run: the API\'s phase, reason and message are kept',
      old: { phase: 'Running', conditions: kubeletRunning.conditions },
      next: { ...kubeletRunning, phase: 'Failed', reason: 'Evicted', message: 'out of memory' },
      couldRun: true,
      phase: 'Running',
      conditions: types(kubeletRunning),
    },
    {
      name: 'a terminal phase once nothing can run, with Ready and ContainersReady False (PodFailed)',
      old: { phase: 'Running', conditions: kubeletRunning.conditions },
      next: { ...kubeletRunning, phase: 'Failed', reason: 'Evicted' },
      couldRun: false,
      phase: 'Failed',
      reason: 'Evicted',
      conditions: ['PodReadyToStartContainers=True', 'Initialized=True', 'Ready=False(PodFailed)', 'ContainersReady=False(PodFailed)', 'PodScheduled=True'],
    },
    {
      name: 'Succeeded: Ready and ContainersReady False (PodCompleted)',
      old: { phase: 'Running' },
      next: { ...kubeletRunning, phase: 'Succeeded' },
      couldRun: false,
      phase: 'Succeeded',
      conditions: ['PodReadyToStartContainers=True', 'Initialized=True', 'Ready=False(PodCompleted)', 'ContainersReady=False(PodCompleted)', 'PodScheduled=True'],
    },
    {
      name: 'a terminal phase in the API is never left',
      old: { phase: 'Failed', reason: 'NodeAffinity', message: 'Pod was rejected' },
      next: kubeletRunning,
      couldRun: false,
      phase: 'Failed',
      reason: 'NodeAffinity',
      conditions: ['PodReadyToStartContainers=True', 'Initialized=True', 'Ready=False(PodFailed)', 'ContainersReady=False(PodFailed)', 'PodScheduled=True'],
    },
    {
      name: 'the kubelet\'s DisruptionTarget goes only with the terminal phase',
      old: { phase: 'Running' },
      next: { phase: 'Running', conditions: [c('DisruptionTarget', 'True', { reason: 'TerminationByKubelet' })] },
      couldRun: true,
      phase: 'Running',
      conditions: [],
    },
    {
      name: '... and then it is sent',
      old: { phase: 'Running' },
      next: { phase: 'Failed', conditions: [c('DisruptionTarget', 'True', { reason: 'TerminationByKubelet' })] },
      couldRun: false,
      phase: 'Failed',
      conditions: ['DisruptionTarget=True(TerminationByKubelet)'],
    },
  ];
  for (const tc of cases) {
    it(tc.name, () => {
      const old = structuredClone(tc.old);
      const next = structuredClone(tc.next);
      const merged = mergePodStatus(old, next, tc.couldRun, NOW);
      assert.equal(merged.phase, tc.phase);
      if (tc.reason !== undefined) assert.equal(merged.reason, tc.reason);
      assert.deepEqual(types(merged), tc.conditions);
      assert.deepEqual(old, tc.old, 'the API status is not changed');
      assert.deepEqual(next, tc.next, 'the kubelet status is not changed');
    });
  }

  it('resourceClaimStatuses are the API\'s', () => {
    const claims = [{ name: 'gpu', resourceClaimName: 'gpu-claim' }];
    assert.deepEqual(mergePodStatus({ resourceClaimStatuses: claims }, { phase: 'Running' }, true, NOW).resourceClaimStatuses, claims);
    assert.equal(mergePodStatus({}, { phase: 'Running', resourceClaimStatuses: claims }, true, NOW).resourceClaimStatuses, undefined);
  });

  it('a Ready condition set False at the terminal phase gets a new transition time; one already False keeps its time', () => {
    const merged = mergePodStatus({ phase: 'Running' }, { phase: 'Failed', conditions: [c('Ready', 'True'), c('ContainersReady', 'False')] }, false, NOW);
    assert.equal(merged.conditions?.find((x) => x.type === 'Ready')?.lastTransitionTime, '2026-01-01T12:00:00Z');
    assert.equal(merged.conditions?.find((x) => x.type === 'ContainersReady')?.lastTransitionTime, T0);
  });
});

describe('preparePodStatusPatch (statusutil.PatchPodStatus)', () => {
  it('carries metadata.uid as the precondition, and only what changed', () => {
    const { patch, unchanged } = preparePodStatusPatch('u1', { phase: 'Pending', conditions: [c('PodScheduled', 'True')] }, { phase: 'Running', conditions: [c('PodScheduled', 'True'), c('Ready', 'True')] });
    assert.equal(unchanged, false);
    assert.deepEqual(patch, {
      metadata: { uid: 'u1' },
      status: { phase: 'Running', conditions: [c('Ready', 'True')], '$setElementOrder/conditions': [{ type: 'PodScheduled' }, { type: 'Ready' }] },
    });
  });

  it('unchanged when the two differ only as the apiserver writes zero values (null times, false, 0, empty lists)', () => {
    const api: PodStatus = {
      phase: 'Running',
      conditions: [{ ...c('Ready', 'True'), lastProbeTime: null }],
      containerStatuses: [{ name: 'app', image: 'busybox', imageID: '', ready: false, restartCount: 0, started: false, state: { running: { startedAt: T0 } } }],
    };
    const ours: PodStatus = {
      phase: 'Running',
      conditions: [c('Ready', 'True')],
      containerStatuses: [{ name: 'app', image: 'busybox', imageID: '', ready: false, restartCount: 0, started: false, state: { running: { startedAt: T0 } } }],
      initContainerStatuses: [],
    };
    assert.deepEqual(preparePodStatusPatch('u1', api, ours), { patch: { metadata: { uid: 'u1' } }, unchanged: true });
  });

  it('a pointer field that becomes empty or false is sent (started: false, running: {})', () => {
    const api: PodStatus = { containerStatuses: [{ name: 'app', image: 'i', imageID: '', ready: false, restartCount: 0, started: true, state: { waiting: { reason: 'ContainerCreating' } } }] };
    const ours: PodStatus = { containerStatuses: [{ name: 'app', image: 'i', imageID: '', ready: false, restartCount: 0, started: false, state: { running: {} } }] };
    const { patch } = preparePodStatusPatch('u1', api, ours);
    assert.deepEqual((patch['status'] as PodStatus).containerStatuses, [{ name: 'app', image: 'i', started: false, state: { running: {} } }]);
  });
});

describe('isMirrorPodOf', () => {
  const staticPod: Pod = { metadata: { name: 'web-n1', namespace: 'default', uid: 's1', annotations: { 'kubernetes.io/config.hash': 'h1', 'kubernetes.io/config.source': 'file' } }, spec: { containers: [] } };
  const mirror = (hash: string, name = 'web-n1'): Pod => ({ metadata: { name, namespace: 'default', uid: 'm1', annotations: { 'kubernetes.io/config.mirror': hash } }, spec: { containers: [] } });
  const cases = [
    { name: 'same name and the static pod\'s hash', mirror: mirror('h1'), is: true },
    { name: 'an older hash (the manifest changed)', mirror: mirror('h0'), is: false },
    { name: 'another name', mirror: mirror('h1', 'web-n2'), is: false },
    { name: 'not a mirror pod', mirror: { ...mirror('h1'), metadata: { name: 'web-n1', namespace: 'default', uid: 'x' } }, is: false },
  ];
  for (const tc of cases) it(tc.name, () => assert.equal(isMirrorPodOf(tc.mirror, staticPod), tc.is));
});
