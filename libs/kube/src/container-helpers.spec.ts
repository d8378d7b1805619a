import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { Container, EnvVar, Pod, PodSpec } from '@app/contracts';
import { checkSubPath, expandContainerCommandOnlyStatic, expandContainerVolumeMounts, parseContainerID, shouldContainerBeRestarted } from './container-helpers.js';
import type { RuntimeContainerState, RuntimeContainerStatus, RuntimePodStatus } from './runtime-status.js';
import { runtimeContainerStatus, runtimePodStatus } from './testing.js';

const app: Container = { name: 'app', image: 'img' };
const sidecar: Container = { name: 'proxy', image: 'img', restartPolicy: 'Always' };

const pod = (restartPolicy: PodSpec['restartPolicy'], deleted = false): Pod => ({
  metadata: { name: 'p', namespace: 'default', uid: 'uid-1', ...(deleted ? { deletionTimestamp: '2026-11-30T00:00:00Z' } : {}) },
  spec: { containers: [app], initContainers: [sidecar], ...(restartPolicy ? { restartPolicy } : {}) },
});

const rc = (name: string, state: RuntimeContainerState, exitCode = 0): RuntimeContainerStatus => runtimeContainerStatus(name, state, { exitCode });
const status = (...containers: RuntimeContainerStatus[]): RuntimePodStatus => runtimePodStatus([], containers);

describe('shouldContainerBeRestarted (kubecontainer.ShouldContainerBeRestarted, ContainerRestartRules off)', () => {
  const cases: { name: string; container: Container; pod: Pod; status: RuntimePodStatus; want: boolean }[] = [
    { name: 'never ran: start it', container: app, pod: pod('Never'), status: status(), want: true },
    { name: 'pod being deleted: never', container: app, pod: pod('Always', true), status: status(), want: false },
    { name: 'running: no', container: app, pod: pod('Always'), status: status(rc('app', 'running')), want: false },
    { name: 'created: yes, even under Never', container: app, pod: pod('Never'), status: status(rc('app', 'created')), want: true },
    { name: 'unknown: yes, even under Never', container: app, pod: pod('Never'), status: status(rc('app', 'unknown')), want: true },
    { name: 'exited 0 under Always: yes', container: app, pod: pod('Always'), status: status(rc('app', 'exited', 0)), want: true },
    { name: 'exited 0 with no policy (Always): yes', container: app, pod: pod(undefined), status: status(rc('app', 'exited', 0)), want: true },
    { name: 'exited 0 under OnFailure: no', container: app, pod: pod('OnFailure'), status: status(rc('app', 'exited', 0)), want: false },
    { name: 'exited 1 under OnFailure: yes', container: app, pod: pod('OnFailure'), status: status(rc('app', 'exited', 1)), want: true },
    { name: 'exited 1 under Never: no', container: app, pod: pod('Never'), status: status(rc('app', 'exited', 1)), want: false },
    { name: 'the newest instance decides: exited after a running one', container: app, pod: pod('Never'), status: status(rc('app', 'running'), rc('app', 'exited', 1)), want: false },
    // The branch the two copies disagreed on: the pod's policy applies to a sidecar too (upstream, gate off).
    { name: 'sidecar exited 1 under Never: no (the pod policy applies)', container: sidecar, pod: pod('Never'), status: status(rc('proxy', 'exited', 1)), want: false },
    { name: 'sidecar exited 0 under OnFailure: no (the pod policy applies)', container: sidecar, pod: pod('OnFailure'), status: status(rc('proxy', 'exited', 0)), want: false },
    { name: 'sidecar exited 1 under OnFailure: yes', container: sidecar, pod: pod('OnFailure'), status: status(rc('proxy', 'exited', 1)), want: true },
    { name: 'sidecar exited 0 under Always: yes', container: sidecar, pod: pod('Always'), status: status(rc('proxy', 'exited', 0)), want: true },
    { name: 'sidecar never ran under Never: start it', container: sidecar, pod: pod('Never'), status: status(), want: true },
    { name: 'sidecar of a pod being deleted: never', container: sidecar, pod: pod('Always', true), status: status(rc('proxy', 'exited', 1)), want: false },
  ];
  for (const tc of cases) {
    it(tc.name, () => assert.equal(shouldContainerBeRestarted(tc.container, tc.pod, tc.status), tc.want));
  }
});

describe('parseContainerID', () => {
  const cases: { name: string; in: string; want: { type: string; id: string } }[] = [
    { name: 'typed', in: 'containerd://abc123', want: { type: 'containerd', id: 'abc123' } },
    { name: 'bare: the runtime ID as it is', in: 'abc123', want: { type: '', id: 'abc123' } },
    { name: 'empty', in: '', want: { type: '', id: '' } },
  ];
  for (const tc of cases) it(tc.name, () => assert.deepEqual(parseContainerID(tc.in), tc.want));
});

describe('expandContainerCommandOnlyStatic', () => {
  const env: EnvVar[] = [
    { name: 'PORT', value: '8080' },
    { name: 'EMPTY', value: '' },
    { name: 'FROM_FIELD', valueFrom: { fieldRef: { fieldPath: 'metadata.name' } } },
  ];
  const cases: { name: string; command: string[]; env?: EnvVar[]; want: string[] }[] = [
    { name: 'a literal value', command: ['curl', 'localhost:$(PORT)'], env, want: ['curl', 'localhost:8080'] },
    { name: 'a value from a source is empty', command: ['[$(FROM_FIELD)]'], env, want: ['[]'] },
    { name: 'an unknown reference stays', command: ['$(NOPE)'], env, want: ['$(NOPE)'] },
    { name: '$$ escapes', command: ['$$(PORT)'], env, want: ['$(PORT)'] },
    { name: 'no env at all', command: ['$(PORT)'], want: ['$(PORT)'] },
    { name: 'an unterminated reference stays', command: ['a$(PORT'], env, want: ['a$(PORT'] },
    { name: 'a lone $ stays', command: ['cost $5 $'], env, want: ['cost $5 $'] },
    { name: 'an empty value', command: ['[$(EMPTY)]'], env, want: ['[]'] },
    { name: 'no command', command: [], env, want: [] },
  ];
  for (const tc of cases) it(tc.name, () => assert.deepEqual(expandContainerCommandOnlyStatic(tc.command, tc.env), tc.want));
});

describe('ExpandContainerVolumeMounts and the subPath checks of makeMounts', () => {
  const envs = new Map([['POD_NAME', 'foo'], ['EMPTY', ''], ['ANNOTATION', 'mypath']]);
  it('expands the variables of a subPathExpr', () => {
    assert.equal(expandContainerVolumeMounts('$(ANNOTATION)/$(POD_NAME)', envs), 'mypath/foo');
    assert.equal(expandContainerVolumeMounts('$$(POD_NAME)', envs), '$(POD_NAME)');
  });
  it('a missing or empty variable is an error naming them, sorted', () => {
    assert.throws(() => expandContainerVolumeMounts('$(NOPE)/$(EMPTY)/$(POD_NAME)', envs), { message: 'missing value for EMPTY, NOPE' });
  });
  it('an absolute subPath or one with a .. element is refused with upstream\'s text; a name with dots is not', () => {
    assert.throws(() => checkSubPath('/foo'), { message: 'error SubPath `/foo` must not be an absolute path' });
    assert.throws(() => checkSubPath('a/../b'), { message: "unable to provision SubPath `a/../b`: must not contain '..'" });
    assert.throws(() => checkSubPath('..'), { message: "unable to provision SubPath `..`: must not contain '..'" });
    assert.doesNotThrow(() => checkSubPath('a..b/c'));
  });
});
