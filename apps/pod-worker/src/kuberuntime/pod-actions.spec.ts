import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { Container, Pod, PodSpec } from '@app/contracts';
import type { RuntimeContainerState, RuntimeContainerStatus, RuntimePodStatus } from '@app/kube';
import { runtimeContainerStatus, runtimePodStatus as status, sandboxStatus as sandbox } from '@app/kube/testing';
import { hashContainer } from './container-hash.js';
import { computePodActions, shouldRestartOnFailure, type PodActions, type ProbeResults } from './pod-actions.js';

// ---- fixtures -------------------------------------------------------------

const c = (name: string, extra: Partial<Container> = {}): Container => ({ name, image: 'localhost/kubelet-split/busybox:1.35', ...extra });
const probe = { exec: { command: ['true'] } };

const app = c('app');
const web = c('web');
const init1 = c('init1');
const init2 = c('init2');
const sideA = c('sideA', { restartPolicy: 'Always' });
const sideB = c('sideB', { restartPolicy: 'Always' });
const sideAStartup = c('sideA', { restartPolicy: 'Always', startupProbe: probe });
const sideALive = c('sideA', { restartPolicy: 'Always', livenessProbe: probe });

const pod = (spec: Partial<PodSpec>, meta: Partial<Pod['metadata']> = {}): Pod => ({
  metadata: { name: 'p', namespace: 'default', uid: 'uid-1', ...meta },
  spec: { containers: [app], restartPolicy: 'Always', ...spec },
});

const ready = sandbox('sb1');
const notReady = sandbox('sb1', { ready: false });

/** One runtime container of spec `spec`, created with its current hash unless told otherwise. */
const ctr = (spec: Container, state: RuntimeContainerState, extra: Partial<RuntimeContainerStatus> = {}): RuntimeContainerStatus =>
  runtimeContainerStatus(spec.name, state, { id: `${spec.name}-id`, image: spec.image ?? '', hash: hashContainer(spec), ...extra });
const running = (spec: Container, extra: Partial<RuntimeContainerStatus> = {}) => ctr(spec, 'running', extra);
const exited = (spec: Container, exitCode: number, extra: Partial<RuntimeContainerStatus> = {}) => ctr(spec, 'exited', { exitCode, ...extra });

type Result = 'Success' | 'Failure';
const probes = (r: { liveness?: Record<string, Result>; startup?: Record<string, Result> } = {}): ProbeResults => ({
  liveness: (id) => r.liveness?.[id],
  startup: (id) => r.startup?.[id],
});

interface Want {
  killPod?: boolean;
  createSandbox?: boolean;
  sandboxId?: string;
  attempt?: number;
  next?: string;
  init?: number[];
  start?: number[];
  /** [containerId, message, reason] */
  kill?: [string, string, string][];
}

const view = (a: PodActions): Required<Omit<Want, 'next'>> & { next: string | undefined } => ({
  killPod: a.killPod,
  createSandbox: a.createSandbox,
  sandboxId: a.sandboxId,
  attempt: a.attempt,
  next: a.nextInitContainerToStart?.name,
  init: a.initContainersToStart,
  start: a.containersToStart,
  kill: [...a.containersToKill.values()].map((k): [string, string, string] => [k.containerId, k.message, k.reason]).sort((x, y) => x[0].localeCompare(y[0])),
});

const none: Required<Omit<Want, 'next'>> & { next: string | undefined } = {
  killPod: false,
  createSandbox: false,
  sandboxId: 'sb1',
  attempt: 0,
  next: undefined,
  init: [],
  start: [],
  kill: [],
};

// ---- computePodActions ----------------------------------------------------

describe('computePodActions', () => {
  const cases: { name: string; pod: Pod; status: RuntimePodStatus; probes?: ProbeResults; want: Want }[] = [
    // sandbox
    {
      name: 'sandbox: none yet, create it (attempt 0) and start every container',
      pod: pod({ containers: [app, web] }),
      status: status([], []),
      want: { killPod: true, createSandbox: true, sandboxId: '', attempt: 0, start: [0, 1] },
    },
    {
      name: 'sandbox: two ready, kill and recreate with the highest attempt + 1',
      pod: pod({}),
      status: status([sandbox('sb2', { attempt: 1 }), sandbox('sb1', { attempt: 0 })], [running(app)]),
      want: { killPod: true, createSandbox: true, sandboxId: 'sb2', attempt: 2, start: [0] },
    },
    {
      name: 'sandbox: the newest is not ready, kill and recreate',
      pod: pod({}),
      status: status([sandbox('sb3', { ready: false, attempt: 2 }), sandbox('sb2', { ready: false, attempt: 4 })], [exited(app, 1)]),
      want: { killPod: true, createSandbox: true, sandboxId: 'sb3', attempt: 5, start: [0] },
    },
    {
      name: 'sandbox: network namespace mode changed (now hostNetwork), recreate without naming the old one',
      pod: pod({ hostNetwork: true }),
      status: status([ready], [running(app)]),
      want: { killPod: true, createSandbox: true, sandboxId: '', attempt: 1, start: [0] },
    },
    {
      name: 'sandbox: a pod-network sandbox without an IP is recreated',
      pod: pod({}),
      status: status([sandbox('sb1', { ip: '' })], [running(app)]),
      want: { killPod: true, createSandbox: true, sandboxId: 'sb1', attempt: 1, start: [0] },
    },
    {
      name: 'sandbox: a host-network sandbox needs no IP',
      pod: pod({ hostNetwork: true }),
      status: status([sandbox('sb1', { netns: 'NODE' })], [running(app)]),
      want: {},
    },
    {
      name: 'sandbox: restartPolicy Never and containers already ran, kill without a new sandbox',
      pod: pod({ restartPolicy: 'Never' }),
      status: status([notReady], [exited(app, 0)]),
      want: { killPod: true, createSandbox: false, attempt: 1 },
    },
    {
      name: 'sandbox: restartPolicy Never and no container ever created, retry the sandbox',
      pod: pod({ restartPolicy: 'Never' }),
      status: status([notReady], []),
      want: { killPod: true, createSandbox: true, attempt: 1, start: [0] },
    },
    {
      name: 'sandbox: OnFailure keeps succeeded containers out of the new sandbox',
      pod: pod({ restartPolicy: 'OnFailure', containers: [app, web] }),
      status: status([notReady], [exited(app, 0), exited(web, 1)]),
      want: { killPod: true, createSandbox: true, attempt: 1, start: [1] },
    },
    {
      name: 'sandbox: OnFailure, all succeeded after initialization, kill without a new sandbox',
      pod: pod({ restartPolicy: 'OnFailure', initContainers: [init1] }),
      status: status([notReady], [exited(init1, 0), exited(app, 0)]),
      want: { killPod: true, createSandbox: false, attempt: 1 },
    },
    {
      name: 'sandbox: a new sandbox restarts initialization from the first init container (classic)',
      pod: pod({ initContainers: [init1, init2] }),
      status: status([notReady], [exited(init1, 0), exited(init2, 0), exited(app, 1)]),
      want: { killPod: true, createSandbox: true, attempt: 1, next: 'init1' },
    },
    {
      name: 'sandbox: a new sandbox restarts initialization from index 0 (sidecar pod)',
      pod: pod({ initContainers: [sideA, init1] }),
      status: status([notReady], [exited(sideA, 137), exited(init1, 0), exited(app, 1)]),
      want: { killPod: true, createSandbox: true, attempt: 1, init: [0] },
    },

    // classic init containers
    {
      name: 'init: the first init container starts first',
      pod: pod({ initContainers: [init1, init2] }),
      status: status([ready], []),
      want: { next: 'init1' },
    },
    {
      name: 'init: the next one starts once the previous succeeded',
      pod: pod({ initContainers: [init1, init2] }),
      status: status([ready], [exited(init1, 0)]),
      want: { next: 'init2' },
    },
    {
      name: 'init: one is running, wait for it',
      pod: pod({ initContainers: [init1, init2] }),
      status: status([ready], [exited(init1, 0), running(init2)]),
      want: {},
    },
    {
      name: 'init: failed with restartPolicy Never, kill the pod and start nothing',
      pod: pod({ restartPolicy: 'Never', initContainers: [init1, init2] }),
      status: status([ready], [exited(init1, 1)]),
      want: { killPod: true },
    },
    {
      name: 'init: OOM-killed counts as failed (exit 0 or not)',
      pod: pod({ restartPolicy: 'Never', initContainers: [init1] }),
      status: status([ready], [exited(init1, 0, { reason: 'OOMKilled' })]),
      want: { killPod: true },
    },
    {
      name: 'init: failed with restartPolicy Always, start it again',
      pod: pod({ initContainers: [init1, init2] }),
      status: status([ready], [exited(init1, 0), exited(init2, 2)]),
      want: { next: 'init2' },
    },
    {
      name: 'init: failed with restartPolicy OnFailure, start it again',
      pod: pod({ restartPolicy: 'OnFailure', initContainers: [init1] }),
      status: status([ready], [exited(init1, 1)]),
      want: { next: 'init1' },
    },
    {
      name: 'init: unknown state, kill it before its retry',
      pod: pod({ initContainers: [init1] }),
      status: status([ready], [ctr(init1, 'unknown')]),
      want: { next: 'init1', kill: [['init1-id', 'Init container is in "unknown" state, try killing it before restart', 'Unknown']] },
    },
    {
      name: 'init: all succeeded, the main containers start',
      pod: pod({ initContainers: [init1, init2], containers: [app, web] }),
      status: status([ready], [exited(init1, 0), exited(init2, 0)]),
      want: { start: [0, 1] },
    },
    {
      name: 'init: statuses removed but a main container runs, initialization stays done',
      pod: pod({ initContainers: [init1, init2] }),
      status: status([ready], [running(app)]),
      want: {},
    },

    // sidecars (restartable init containers)
    {
      name: 'sidecar: the first starts first',
      pod: pod({ initContainers: [sideA, sideB] }),
      status: status([ready], []),
      want: { init: [0] },
    },
    {
      name: 'sidecar: once one runs, the next starts',
      pod: pod({ initContainers: [sideA, sideB] }),
      status: status([ready], [running(sideA)]),
      want: { init: [1] },
    },
    {
      name: 'sidecar: once the last runs, the main containers start beside them',
      pod: pod({ initContainers: [sideA, sideB] }),
      status: status([ready], [running(sideA), running(sideB)]),
      want: { start: [0] },
    },
    {
      name: 'sidecar: a startup probe that has not run yet holds what follows',
      pod: pod({ initContainers: [sideAStartup, sideB] }),
      status: status([ready], [running(sideAStartup)]),
      want: {},
    },
    {
      name: 'sidecar: a succeeded startup probe lets the next start',
      pod: pod({ initContainers: [sideAStartup, sideB] }),
      status: status([ready], [running(sideAStartup)]),
      probes: probes({ startup: { 'sideA-id': 'Success' } }),
      want: { init: [1] },
    },
    {
      name: 'sidecar: a failed startup probe kills and restarts it',
      pod: pod({ initContainers: [sideAStartup, sideB] }),
      status: status([ready], [running(sideAStartup)]),
      probes: probes({ startup: { 'sideA-id': 'Failure' } }),
      want: { init: [0], kill: [['sideA-id', 'Init container sideA failed startup probe', 'StartupProbe']] },
    },
    {
      name: 'sidecar: one that exited restarts while the main containers keep running',
      pod: pod({ restartPolicy: 'Never', initContainers: [sideA, sideB] }),
      status: status([ready], [exited(sideA, 0), running(sideB), running(app)]),
      want: { init: [0] },
    },
    // A sidecar that crashes a few seconds after it starts may be exited in every sync after its start
    // (issue 12 fix 10): it did start, so it counts as started, as a running one does.
    {
      name: 'sidecar: one that started and exited before a sync saw it run counts as started: the main containers start beside its restart',
      pod: pod({ initContainers: [sideA] }),
      status: status([ready], [exited(sideA, 1, { startedAt: 5_000, finishedAt: 9_000 })]),
      want: { init: [0], start: [0] },
    },
    {
      name: 'sidecar: one that started and exited lets the next init container start beside its restart',
      pod: pod({ initContainers: [sideA, sideB] }),
      status: status([ready], [exited(sideA, 1, { startedAt: 5_000, finishedAt: 9_000 })]),
      want: { init: [0, 1] },
    },
    {
      name: 'sidecar: one that exited without ever starting (a start error) holds what follows',
      pod: pod({ initContainers: [sideA] }),
      status: status([ready], [exited(sideA, 128, { reason: 'StartError', finishedAt: 9_000 })]),
      want: { init: [0] },
    },
    {
      name: 'sidecar: one with a startup probe that exited holds what follows (the probe may never have passed)',
      pod: pod({ initContainers: [sideAStartup] }),
      status: status([ready], [exited(sideAStartup, 1, { startedAt: 5_000, finishedAt: 9_000 })]),
      want: { init: [0] },
    },
    {
      name: 'sidecar: one in unknown state is killed and restarted',
      pod: pod({ initContainers: [sideA] }),
      status: status([ready], [ctr(sideA, 'unknown'), running(app)]),
      want: { init: [0], kill: [['sideA-id', 'Init container is in "unknown" state, try killing it before restart', 'Unknown']] },
    },
    {
      name: 'sidecar: a changed definition kills and restarts it',
      pod: pod({ initContainers: [sideA] }),
      status: status([ready], [running(sideA, { hash: 'stale' }), running(app)]),
      want: { init: [0], kill: [['sideA-id', 'Init container sideA definition changed', '']] },
    },
    {
      name: 'sidecar: a failed liveness probe kills and restarts it',
      pod: pod({ initContainers: [sideALive] }),
      status: status([ready], [running(sideALive), running(app)]),
      probes: probes({ liveness: { 'sideA-id': 'Failure' } }),
      want: { init: [0], kill: [['sideA-id', 'Init container sideA failed liveness probe', 'LivenessProbe']] },
    },
    {
      name: 'sidecar pod: a classic init container after a sidecar runs in order',
      pod: pod({ initContainers: [sideA, init1] }),
      status: status([ready], [running(sideA), exited(init1, 0)]),
      want: { start: [0] },
    },
    {
      name: 'sidecar pod: a failed classic init container with Never kills the pod',
      pod: pod({ restartPolicy: 'Never', initContainers: [sideA, init1] }),
      status: status([ready], [running(sideA), exited(init1, 1)]),
      want: { killPod: true },
    },
    {
      name: 'sidecar pod: a failed classic init container with Always starts again',
      pod: pod({ initContainers: [sideA, init1] }),
      status: status([ready], [running(sideA), exited(init1, 1)]),
      want: { init: [1] },
    },

    // main containers by restart policy (web keeps running so only app's fate varies)
    ...(
      [
        ['Always', 0, [0]],
        ['Always', 1, [0]],
        ['OnFailure', 0, []],
        ['OnFailure', 1, [0]],
        ['Never', 0, []],
        ['Never', 1, []],
      ] as const
    ).map(([policy, code, start]) => ({
      name: `main: restartPolicy ${policy}, exit ${code}: ${start.length ? 'restarted' : 'left exited'}`,
      pod: pod({ restartPolicy: policy, containers: [app, web] }),
      status: status([ready], [exited(app, code), running(web)]),
      want: { start: [...start] },
    })),
    {
      name: 'main: a created container that never started is started again',
      pod: pod({ restartPolicy: 'Never' }),
      status: status([ready], [ctr(app, 'created')]),
      want: { start: [0] },
    },
    {
      name: 'main: a changed definition kills and restarts it, even with restartPolicy Never',
      pod: pod({ restartPolicy: 'Never' }),
      status: status([ready], [running(app, { hash: 'stale' })]),
      want: { start: [0], kill: [['app-id', 'Container app definition changed, will be restarted', '']] },
    },
    {
      name: 'main: a failed liveness probe kills and restarts it',
      pod: pod({}),
      status: status([ready], [running(app)]),
      probes: probes({ liveness: { 'app-id': 'Failure' } }),
      want: { start: [0], kill: [['app-id', 'Container app failed liveness probe, will be restarted', 'LivenessProbe']] },
    },
    {
      name: 'main: a failed liveness probe with restartPolicy Never kills it for good (and then the pod)',
      pod: pod({ restartPolicy: 'Never' }),
      status: status([ready], [running(app)]),
      probes: probes({ liveness: { 'app-id': 'Failure' } }),
      want: { killPod: true, kill: [['app-id', 'Container app failed liveness probe', 'LivenessProbe']] },
    },
    {
      name: 'main: a failed startup probe kills and restarts it',
      pod: pod({ containers: [app, web] }),
      status: status([ready], [running(app), running(web)]),
      probes: probes({ startup: { 'app-id': 'Failure' }, liveness: { 'web-id': 'Success' } }),
      want: { start: [0], kill: [['app-id', 'Container app failed startup probe, will be restarted', 'StartupProbe']] },
    },
    {
      name: 'main: unknown state, kill it before its replacement starts (even with Never)',
      pod: pod({ restartPolicy: 'Never' }),
      status: status([ready], [ctr(app, 'unknown')]),
      want: { start: [0], kill: [['app-id', 'Container is in "unknown" state, try killing it before restart', 'Unknown']] },
    },
    {
      name: 'main: a running container no longer in the spec is killed',
      pod: pod({}),
      status: status([ready], [running(app), running(c('renamed'))]),
      want: { kill: [['renamed-id', 'Container renamed is no longer in the pod spec', '']] },
    },
    {
      name: 'main: an exited container no longer in the spec is left to garbage collection',
      pod: pod({}),
      status: status([ready], [running(app), exited(c('renamed'), 0)]),
      want: {},
    },
    {
      name: 'main: a pod being deleted starts nothing, so it is killed',
      pod: pod({}, { deletionTimestamp: '2024-01-01T00:00:00Z' }),
      status: status([ready], [exited(app, 1)]),
      want: { killPod: true },
    },

    // the pod as a whole
    {
      name: 'pod: nothing to keep and nothing to start, kill it',
      pod: pod({ restartPolicy: 'Never', containers: [app, web] }),
      status: status([ready], [exited(app, 0), exited(web, 1)]),
      want: { killPod: true },
    },
    {
      name: 'pod: main containers done, running sidecars do not keep it alive',
      pod: pod({ restartPolicy: 'OnFailure', initContainers: [sideA] }),
      status: status([ready], [running(sideA), exited(app, 0)]),
      want: { killPod: true, init: [] },
    },
    {
      name: 'pod: everything running and healthy, nothing to do',
      pod: pod({ initContainers: [init1], containers: [app, web] }),
      status: status([ready], [exited(init1, 0), running(app), running(web)]),
      probes: probes({ liveness: { 'app-id': 'Success' }, startup: { 'app-id': 'Success', 'web-id': 'Success' } }),
      want: {},
    },
    {
      name: 'pod: everything running and healthy with sidecars, nothing to do',
      pod: pod({ initContainers: [sideA, init1, sideB] }),
      status: status([ready], [running(sideA), exited(init1, 0), running(sideB), running(app)]),
      want: {},
    },
  ];

  for (const tc of cases) {
    it(tc.name, () => {
      const got = computePodActions(tc.pod, tc.status, tc.probes ?? probes());
      assert.deepEqual(view(got), { ...none, ...tc.want });
    });
  }

  it('puts the spec of the container to kill in its entry', () => {
    const got = computePodActions(pod({}), status([ready], [running(app, { hash: 'stale' })]), probes());
    assert.equal(got.containersToKill.get('app-id')?.container, app);
    assert.equal(got.containersToKill.get('app-id')?.name, 'app');
  });
});

describe('shouldRestartOnFailure', () => {
  const cases: { name: string; policy: PodSpec['restartPolicy']; want: boolean }[] = [
    { name: 'Always', policy: 'Always', want: true },
    { name: 'OnFailure', policy: 'OnFailure', want: true },
    { name: 'Never', policy: 'Never', want: false },
    { name: 'unset (Always)', policy: undefined, want: true },
  ];
  for (const tc of cases) {
    it(tc.name, () => {
      const p = pod({});
      if (tc.policy === undefined) delete p.spec.restartPolicy;
      else p.spec.restartPolicy = tc.policy;
      assert.equal(shouldRestartOnFailure(p), tc.want);
    });
  }
});

describe('computePodActions: ephemeral containers (EphemeralContainersToStart)', () => {
  const debugger1 = { name: 'debugger', image: 'localhost/kubelet-split/busybox:1.35', stdin: true, tty: true };
  const debugger2 = { name: 'debugger2', image: 'localhost/kubelet-split/busybox:1.35', targetContainerName: 'app' };
  const withEphemeral = (spec: Partial<PodSpec>, ...ecs: object[]) => pod({ ...spec, ephemeralContainers: ecs as NonNullable<PodSpec['ephemeralContainers']> });
  const cases: { name: string; pod: Pod; status: RuntimePodStatus; start: number[]; want?: Want }[] = [
    {
      name: 'added to a running pod: started, the pod\'s containers kept',
      pod: withEphemeral({}, debugger1),
      status: status([ready], [running(app)]),
      start: [0],
    },
    {
      name: 'a second one added: only the new one is started',
      pod: withEphemeral({}, debugger1, debugger2),
      status: status([ready], [running(app), running(c('debugger'))]),
      start: [1],
    },
    {
      name: 'one that exited is never restarted, whatever the restart policy',
      pod: withEphemeral({ restartPolicy: 'Always' }, debugger1),
      status: status([ready], [running(app), exited(c('debugger'), 1)]),
      start: [],
    },
    {
      name: 'while an init container still runs (initialization not done): started',
      pod: withEphemeral({ initContainers: [init1] }, debugger1),
      status: status([ready], [running(init1)]),
      start: [0],
      want: { },
    },
    {
      name: 'the sandbox must be recreated: not started with it',
      pod: withEphemeral({}, debugger1),
      status: status([], []),
      start: [],
      want: { killPod: true, createSandbox: true, sandboxId: '', attempt: 0, start: [0] },
    },
  ];
  for (const tc of cases) {
    it(tc.name, () => {
      const got = computePodActions(tc.pod, tc.status, probes());
      assert.deepEqual(got.ephemeralContainersToStart, tc.start);
      assert.deepEqual(view(got), { ...none, ...(tc.want ?? {}) });
    });
  }

  it('a running ephemeral container is not killed as a container no longer in the spec', () => {
    const got = computePodActions(withEphemeral({}, debugger1), status([ready], [running(app), running(c('debugger'))]), probes());
    assert.deepEqual([...got.containersToKill.keys()], []);
    assert.equal(got.killPod, false);
  });
});
