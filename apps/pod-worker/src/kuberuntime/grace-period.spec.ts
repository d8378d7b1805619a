import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { Container, Pod } from '@app/contracts';
import { graceReasonOf, killContainerGracePeriod, MINIMUM_GRACE_PERIOD_SECONDS, podTerminationGracePeriod, preStopHookTimeoutSeconds, remainingGracePeriodSeconds, type KillReasonInput } from './grace-period.js';

const pod = (o: { tgps?: number; deletion?: number } = {}): Pod => ({
  metadata: { name: 'p', namespace: 'default', uid: 'u', ...(o.deletion !== undefined ? { deletionGracePeriodSeconds: o.deletion } : {}) },
  spec: { containers: [], ...(o.tgps !== undefined ? { terminationGracePeriodSeconds: o.tgps } : {}) },
});
const probe = (grace?: number) => ({ exec: { command: ['true'] }, ...(grace !== undefined ? { terminationGracePeriodSeconds: grace } : {}) });
const app: Container = { name: 'app', livenessProbe: probe(7), startupProbe: probe(3) };
const plain: Container = { name: 'plain', livenessProbe: probe() };

describe('killContainerGracePeriod', () => {
  const cases: { name: string; input: KillReasonInput; want: number }[] = [
    { name: "the pod's terminationGracePeriodSeconds", input: { pod: pod({ tgps: 45 }), container: app }, want: 45 },
    { name: 'unset terminationGracePeriodSeconds is the API default, 30', input: { pod: pod(), container: app }, want: 30 },
    { name: "the pod's deletionGracePeriodSeconds wins over the spec", input: { pod: pod({ tgps: 45, deletion: 10 }), container: app }, want: 10 },
    { name: 'a liveness kill uses the liveness probe grace period', input: { pod: pod({ tgps: 45 }), container: app, reason: 'liveness' }, want: 7 },
    { name: 'a startup kill uses the startup probe grace period', input: { pod: pod({ tgps: 45 }), container: app, reason: 'startup' }, want: 3 },
    { name: 'a probe grace period longer than the pod one still applies', input: { pod: pod({ tgps: 2 }), container: app, reason: 'liveness' }, want: 7 },
    { name: 'a probe without its own grace period falls back to the pod', input: { pod: pod({ tgps: 45 }), container: plain, reason: 'liveness' }, want: 45 },
    { name: 'a probe grace period does not apply to other kills', input: { pod: pod({ tgps: 45 }), container: app, reason: 'other' }, want: 45 },
    { name: 'a deletion grace period beats the probe grace period', input: { pod: pod({ tgps: 45, deletion: 20 }), container: app, reason: 'liveness' }, want: 20 },
    { name: 'the preStop hook time is deducted', input: { pod: pod({ tgps: 30 }), container: app, preStopDurationSeconds: 12 }, want: 18 },
    { name: 'never below the minimum of 2s', input: { pod: pod({ tgps: 30 }), container: app, preStopDurationSeconds: 30 }, want: MINIMUM_GRACE_PERIOD_SECONDS },
    { name: 'a zero grace period still gets 2s', input: { pod: pod({ tgps: 0 }), container: app }, want: 2 },
    { name: 'the override replaces everything else', input: { pod: pod({ tgps: 45, deletion: 20 }), container: app, reason: 'liveness', gracePeriodOverride: 60 }, want: 60 },
    { name: 'an override of 1 (orphaned pod) is raised to the 2s minimum', input: { pod: pod({ tgps: 45 }), gracePeriodOverride: 1 }, want: 2 },
    { name: 'the preStop time comes off the override too', input: { pod: pod({ tgps: 45 }), container: app, gracePeriodOverride: 20, preStopDurationSeconds: 5 }, want: 15 },
    { name: 'no container spec (restored from labels): the pod grace period', input: { pod: pod({ tgps: 12 }), reason: 'liveness' }, want: 12 },
    { name: "a sidecar's wait for its turn comes off, truncated to whole seconds", input: { pod: pod({ tgps: 30 }), waitedForTurnSeconds: 4.9 }, want: 26 },
    { name: 'the preStop hook and the wait both come off', input: { pod: pod({ tgps: 30 }), container: app, preStopDurationSeconds: 5, waitedForTurnSeconds: 10.2 }, want: 15 },
    { name: 'a wait that used the whole grace period still stops with 2s', input: { pod: pod({ tgps: 30 }), preStopDurationSeconds: 10, waitedForTurnSeconds: 20 }, want: MINIMUM_GRACE_PERIOD_SECONDS },
  ];
  for (const tc of cases) it(tc.name, () => assert.equal(killContainerGracePeriod(tc.input), tc.want));
});

describe('remainingGracePeriodSeconds: what a sidecar may wait for its turn', () => {
  const cases: { name: string; input: KillReasonInput; want: number }[] = [
    { name: 'no hook: the whole grace period', input: { pod: pod({ tgps: 30 }) }, want: 30 },
    { name: 'after the preStop hook: what the hook left', input: { pod: pod({ tgps: 30 }), preStopDurationSeconds: 12 }, want: 18 },
    { name: 'a hook that took it all leaves nothing (no wait), not the 2s minimum', input: { pod: pod({ tgps: 30 }), preStopDurationSeconds: 30 }, want: 0 },
    { name: 'the override of the pod worker counts', input: { pod: pod({ tgps: 30 }), gracePeriodOverride: 5 }, want: 5 },
  ];
  for (const tc of cases) it(tc.name, () => assert.equal(remainingGracePeriodSeconds(tc.input), tc.want));
});

describe('preStopHookTimeoutSeconds', () => {
  const cases: { name: string; input: KillReasonInput; want: number }[] = [
    { name: 'the full grace period before the minimum', input: { pod: pod({ tgps: 30 }), container: app }, want: 30 },
    { name: 'an override of 0 means no hook runs', input: { pod: pod({ tgps: 30 }), gracePeriodOverride: 0 }, want: 0 },
    { name: 'a probe kill gives the hook the probe grace period', input: { pod: pod({ tgps: 30 }), container: app, reason: 'startup' }, want: 3 },
  ];
  for (const tc of cases) it(tc.name, () => assert.equal(preStopHookTimeoutSeconds(tc.input), tc.want));
});

describe('podTerminationGracePeriod', () => {
  const cases: { name: string; pod: Pod; override?: number; previous?: number; want: number }[] = [
    { name: "the pod's spec", pod: pod({ tgps: 45 }), want: 45 },
    { name: 'unset spec is 30', pod: pod(), want: 30 },
    { name: 'the deletion grace period', pod: pod({ tgps: 45, deletion: 10 }), want: 10 },
    { name: 'a longer deletion grace period than the spec still wins (bedrock truth)', pod: pod({ tgps: 45, deletion: 60 }), want: 60 },
    { name: 'an override shorter than the deletion grace period', pod: pod({ tgps: 45, deletion: 10 }), override: 1, want: 1 },
    { name: 'an override longer than the deletion grace period is ignored', pod: pod({ tgps: 45, deletion: 10 }), override: 20, want: 10 },
    { name: 'an override without a deletion grace period', pod: pod({ tgps: 45 }), override: 5, want: 5 },
    { name: 'a force delete (0) is 1, not the spec', pod: pod({ tgps: 45, deletion: 0 }), want: 1 },
    { name: 'an override of 0 is 1', pod: pod({ tgps: 45 }), override: 0, want: 1 },
    { name: 'a terminating pod never lengthens: previous 10, spec 45', pod: pod({ tgps: 45 }), previous: 10, want: 10 },
    { name: 'a terminating pod shortens: previous 30, deletion 5', pod: pod({ tgps: 45, deletion: 5 }), previous: 30, want: 5 },
    { name: 'a terminating pod ignores a longer override', pod: pod({ tgps: 45 }), previous: 10, override: 20, want: 10 },
    { name: 'a spec of 0 is 1', pod: pod({ tgps: 0 }), want: 1 },
  ];
  for (const tc of cases) it(tc.name, () => assert.equal(podTerminationGracePeriod(tc.pod, tc.override, tc.previous), tc.want));
});

describe('graceReasonOf', () => {
  const cases: [string, 'liveness' | 'startup' | 'other'][] = [
    ['LivenessProbe', 'liveness'],
    ['StartupProbe', 'startup'],
    ['Unknown', 'other'],
    ['', 'other'],
  ];
  for (const [reason, want] of cases) it(`${reason || '(empty)'} is ${want}`, () => assert.equal(graceReasonOf(reason), want));
});
