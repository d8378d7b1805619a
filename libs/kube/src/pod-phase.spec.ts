import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { computePodPhase, isPodPhaseTerminal } from './pod-phase.js';
import type { ContainerStatus, Pod, PodPhase } from '@app/contracts';
import { ago, cs, ctr, mkPod, running, sidecar, waiting } from './pod-status.testing.js';

// ---------------------------------------------------------------------------
// computePodPhase
// ---------------------------------------------------------------------------

describe('computePodPhase', () => {
  const term = (exitCode: number) => ({ terminated: { exitCode } });
  const cases: { name: string; pod: Pod; statuses: ContainerStatus[]; podIsTerminal?: boolean; podHasInitialized?: boolean; want: PodPhase }[] = [
    { name: 'a waiting container: Pending', pod: mkPod(), statuses: [cs('app', waiting('ContainerCreating'))], want: 'Pending' },
    { name: 'no status at all: Pending', pod: mkPod(), statuses: [], want: 'Pending' },
    { name: 'running: Running', pod: mkPod(), statuses: [cs('app', running(ago(1)))], want: 'Running' },
    { name: 'one running, one status missing: Pending', pod: mkPod({ containers: [ctr('a'), ctr('b')] }), statuses: [cs('a', running(ago(1)))], want: 'Pending' },
    { name: 'Always, exited 0: Running (restarting)', pod: mkPod(), statuses: [cs('app', term(0))], want: 'Running' },
    { name: 'Never, exited 0: Succeeded', pod: mkPod({ restartPolicy: 'Never' }), statuses: [cs('app', term(0))], want: 'Succeeded' },
    { name: 'Never, one of two failed: Failed', pod: mkPod({ restartPolicy: 'Never', containers: [ctr('a'), ctr('b')] }), statuses: [cs('a', term(0)), cs('b', term(3))], want: 'Failed' },
    { name: 'OnFailure, failed: Running', pod: mkPod({ restartPolicy: 'OnFailure' }), statuses: [cs('app', term(1))], want: 'Running' },
    { name: 'OnFailure, waiting after a failure counts as stopped: Running', pod: mkPod({ restartPolicy: 'OnFailure' }), statuses: [cs('app', waiting('CrashLoopBackOff'), { lastState: term(1) })], want: 'Running' },
    { name: 'terminal, Always, all 0: Succeeded', pod: mkPod(), statuses: [cs('app', term(0))], podIsTerminal: true, want: 'Succeeded' },
    { name: 'terminal, Always, a failure: Failed', pod: mkPod(), statuses: [cs('app', term(143))], podIsTerminal: true, want: 'Failed' },
    {
      name: 'init running: Pending',
      pod: mkPod({ initContainers: [ctr('init')] }),
      statuses: [cs('app', waiting('PodInitializing')), cs('init', running(ago(1)))],
      want: 'Pending',
    },
    {
      name: 'init failed under OnFailure: Pending (it restarts)',
      pod: mkPod({ restartPolicy: 'OnFailure', initContainers: [ctr('init')] }),
      statuses: [cs('app', waiting('PodInitializing')), cs('init', waiting('CrashLoopBackOff'), { lastState: term(1) })],
      want: 'Pending',
    },
    {
      name: 'init failed under Never, even waiting: Failed',
      pod: mkPod({ restartPolicy: 'Never', initContainers: [ctr('init')] }),
      statuses: [cs('app', waiting('PodInitializing')), cs('init', waiting(''), { lastState: term(1) })],
      want: 'Failed',
    },
    {
      name: 'sidecar running but not started, regular containers running, not initialized: Pending',
      pod: mkPod({ initContainers: [sidecar('proxy')] }),
      statuses: [cs('app', running(ago(1))), cs('proxy', running(ago(2)), { started: false })],
      want: 'Pending',
    },
    {
      name: 'sidecar restarting after the pod initialized: Running',
      pod: mkPod({ initContainers: [sidecar('proxy')] }),
      statuses: [cs('app', running(ago(1))), cs('proxy', running(ago(2)), { started: false })],
      podHasInitialized: true,
      want: 'Running',
    },
    {
      name: 'sidecar crashed and waiting while the app runs: Running',
      pod: mkPod({ initContainers: [sidecar('proxy')] }),
      statuses: [cs('app', running(ago(1))), cs('proxy', waiting('CrashLoopBackOff'), { lastState: term(1) })],
      want: 'Running',
    },
  ];
  for (const tc of cases) {
    it(tc.name, () => {
      assert.equal(computePodPhase(tc.pod, tc.statuses, { podIsTerminal: tc.podIsTerminal ?? false, podHasInitialized: tc.podHasInitialized ?? false }), tc.want);
    });
  }
});

describe('isPodPhaseTerminal', () => {
  const cases: { phase: string | undefined; want: boolean }[] = [
    { phase: 'Succeeded', want: true },
    { phase: 'Failed', want: true },
    { phase: 'Running', want: false },
    { phase: 'Pending', want: false },
    { phase: 'Unknown', want: false },
    { phase: undefined, want: false },
  ];
  for (const tc of cases) it(`${String(tc.phase)} -> ${tc.want}`, () => assert.equal(isPodPhaseTerminal(tc.phase), tc.want));
});
