import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { ContainerStatus, Pod, PodCondition, PodSpec, PodStatus } from '@app/contracts';
import { containersReadyCondition, podReadyCondition, podReadyToStartContainersCondition, updateLastTransitionTimes } from './pod-conditions.js';
import { generateAPIPodStatus } from './pod-status.js';
import type { RuntimePodStatus } from './runtime-status.js';
import { ago, cs, ctr, inputs, iso, mkPod, NOW, probe, rc, running, runtime, sandbox, sidecar, statusNamed } from './pod-status.testing.js';

describe('generateAPIPodStatus: lastTransitionTime and startTime', () => {
  const T0 = iso(ago(600));
  const previous: PodStatus = {
    phase: 'Running',
    startTime: iso(ago(900)),
    conditions: [
      { type: 'PodReadyToStartContainers', status: 'True', lastTransitionTime: T0 },
      { type: 'Initialized', status: 'True', lastTransitionTime: T0 },
      { type: 'Ready', status: 'True', lastTransitionTime: T0 },
      { type: 'ContainersReady', status: 'False', reason: 'ContainersNotReady', lastTransitionTime: T0 },
      { type: 'PodScheduled', status: 'True', lastTransitionTime: T0 },
    ],
  };
  const cases: { name: string; pod: Pod; rt: RuntimePodStatus; want: Record<string, string> }[] = [
    {
      name: 'kept when the status did not change, now when it did',
      pod: mkPod({ status: previous }),
      rt: runtime([rc('app', 'running')]),
      want: { PodReadyToStartContainers: T0, Initialized: T0, Ready: T0, ContainersReady: iso(NOW), PodScheduled: T0 },
    },
    {
      name: 'a readiness flip moves Ready and ContainersReady only',
      pod: mkPod({ containers: [ctr('app', { readinessProbe: probe })], status: previous }),
      rt: runtime([rc('app', 'running')]),
      want: { PodReadyToStartContainers: T0, Initialized: T0, Ready: iso(NOW), ContainersReady: T0, PodScheduled: T0 },
    },
    {
      name: 'all now on the first status',
      pod: mkPod(),
      rt: runtime([rc('app', 'running')]),
      want: { PodReadyToStartContainers: iso(NOW), Initialized: iso(NOW), Ready: iso(NOW), ContainersReady: iso(NOW), PodScheduled: iso(NOW) },
    },
  ];
  for (const tc of cases) {
    it(tc.name, () => {
      const s = generateAPIPodStatus(inputs(tc.pod, tc.rt));
      assert.deepEqual(Object.fromEntries((s.conditions ?? []).map((c) => [c.type, c.lastTransitionTime])), tc.want);
    });
  }

  it('keeps the previous startTime', () => {
    assert.equal(generateAPIPodStatus(inputs(mkPod({ status: previous }), runtime([rc('app', 'running')]))).startTime, iso(ago(900)));
  });
  it('drops milliseconds from every time', () => {
    const s = generateAPIPodStatus({ ...inputs(mkPod(), runtime([rc('app', 'running', { startedAt: ago(30) + 789 })], [])), now: NOW + 456 });
    assert.equal(s.startTime, '2026-11-29T08:00:00Z');
    assert.deepEqual(statusNamed(s.containerStatuses, 'app').state, running(ago(30)));
    assert.ok((s.conditions ?? []).every((c) => c.lastTransitionTime === '2026-11-29T08:00:00Z'));
  });
});

describe('updateLastTransitionTimes (status_manager.go updateLastTransitionTime)', () => {
  const T0 = iso(ago(600));
  const cases: { name: string; conditions: PodCondition[]; old: PodCondition[] | undefined; want: (string | undefined)[] }[] = [
    { name: 'kept while the status holds', conditions: [{ type: 'Ready', status: 'True' }], old: [{ type: 'Ready', status: 'True', lastTransitionTime: T0 }], want: [T0] },
    { name: 'now when the status changed', conditions: [{ type: 'Ready', status: 'False' }], old: [{ type: 'Ready', status: 'True', lastTransitionTime: T0 }], want: [iso(NOW)] },
    { name: 'now when there was no old condition', conditions: [{ type: 'Initialized', status: 'True' }], old: undefined, want: [iso(NOW)] },
    { name: 'now when the old one had no time', conditions: [{ type: 'PodScheduled', status: 'True' }], old: [{ type: 'PodScheduled', status: 'True' }], want: [iso(NOW)] },
    { name: 'DisruptionTarget is stamped too', conditions: [{ type: 'DisruptionTarget', status: 'True' }], old: [], want: [iso(NOW)] },
    { name: 'a condition the kubelet does not stamp is left alone', conditions: [{ type: 'example.com/gate', status: 'True' }], old: [], want: [undefined] },
  ];
  for (const tc of cases) {
    it(tc.name, () => {
      const conditions = structuredClone(tc.conditions);
      updateLastTransitionTimes(conditions, tc.old, NOW + 456);
      assert.deepEqual(conditions.map((c) => c.lastTransitionTime), tc.want);
    });
  }
});

describe('containersReadyCondition and podReadyCondition (status/generate.go)', () => {
  const spec: PodSpec = { containers: [ctr('app')], initContainers: [sidecar('proxy'), ctr('init')] };
  const st = (name: string, ready: boolean): ContainerStatus => cs(name, running(ago(10)), { ready });
  const summary = (c: PodCondition): string => [c.type, c.status, c.reason, c.message].filter((x) => x !== undefined).join(' ');
  const cases: { name: string; statuses: ContainerStatus[]; phase: PodStatus['phase']; conditions?: PodCondition[]; gates?: string[]; containersReady: string; ready: string }[] = [
    {
      name: 'app and sidecar ready (a regular init container does not count)',
      statuses: [st('app', true), st('proxy', true)],
      phase: 'Running',
      containersReady: 'ContainersReady True',
      ready: 'Ready True',
    },
    {
      name: 'an unready sidecar',
      statuses: [st('app', true), st('proxy', false)],
      phase: 'Running',
      containersReady: 'ContainersReady False ContainersNotReady containers with unready status: [proxy]',
      ready: 'Ready False ContainersNotReady containers with unready status: [proxy]',
    },
    {
      name: 'a container without a status',
      statuses: [st('proxy', true)],
      phase: 'Pending',
      containersReady: 'ContainersReady False ContainersNotReady containers with unknown status: [app]',
      ready: 'Ready False ContainersNotReady containers with unknown status: [app]',
    },
    { name: 'no statuses at all', statuses: [], phase: 'Pending', containersReady: 'ContainersReady False UnknownContainerStatuses', ready: 'Ready False UnknownContainerStatuses' },
    { name: 'Succeeded', statuses: [st('app', false), st('proxy', false)], phase: 'Succeeded', containersReady: 'ContainersReady False PodCompleted', ready: 'Ready False PodCompleted' },
    { name: 'Failed', statuses: [st('app', true), st('proxy', true)], phase: 'Failed', containersReady: 'ContainersReady False PodFailed', ready: 'Ready False PodFailed' },
    {
      name: 'containers ready, a readiness gate missing',
      statuses: [st('app', true), st('proxy', true)],
      phase: 'Running',
      gates: ['example.com/gate'],
      containersReady: 'ContainersReady True',
      ready: 'Ready False ReadinessGatesNotReady corresponding condition of pod readiness gate "example.com/gate" does not exist.',
    },
    {
      name: 'containers ready, a readiness gate True',
      statuses: [st('app', true), st('proxy', true)],
      phase: 'Running',
      gates: ['example.com/gate'],
      conditions: [{ type: 'example.com/gate', status: 'True' }],
      containersReady: 'ContainersReady True',
      ready: 'Ready True',
    },
  ];
  for (const tc of cases) {
    it(tc.name, () => {
      const s: PodSpec = { ...spec, ...(tc.gates ? { readinessGates: tc.gates.map((conditionType) => ({ conditionType })) } : {}) };
      assert.equal(summary(containersReadyCondition(s, tc.statuses, tc.phase)), tc.containersReady);
      assert.equal(summary(podReadyCondition(s, tc.conditions ?? [], tc.statuses, tc.phase)), tc.ready);
    });
  }
});

describe('podReadyToStartContainersCondition', () => {
  const cases: { name: string; pod: Pod; rt: RuntimePodStatus; want: string }[] = [
    { name: 'a ready sandbox with an IP', pod: mkPod(), rt: runtime([]), want: 'True' },
    { name: 'no sandbox', pod: mkPod(), rt: runtime([], []), want: 'False' },
    { name: 'a sandbox not ready', pod: mkPod(), rt: runtime([], [sandbox({ ready: false })]), want: 'False' },
  ];
  for (const tc of cases) it(tc.name, () => assert.equal(podReadyToStartContainersCondition(tc.pod, tc.rt).status, tc.want));
});
