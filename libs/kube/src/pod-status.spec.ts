import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { generateAPIPodStatus } from './pod-status.js';
import type { StatusInputs } from './pod-status.js';
import { ago, ALL_TRUE, BACKOFF, check, conditionsOf, ctr, HOST_IP, IMAGE_REF, IMG, inputs, iso, mkPod, NOW, POD_IP, probe, rc, running, runtime, sandbox, sidecar, statusNamed, waiting, type Want } from './pod-status.testing.js';

// ---------------------------------------------------------------------------
// generateAPIPodStatus
// ---------------------------------------------------------------------------

interface Case {
  name: string;
  inputs: StatusInputs;
  want: Want;
}

const cases: Case[] = [
  {
    name: 'running, one container: every condition True, full container status',
    inputs: inputs(mkPod(), runtime([rc('app', 'running', { createdAt: ago(91), startedAt: ago(90) })])),
    want: {
      phase: 'Running',
      conditions: ALL_TRUE,
      containers: {
        app: { state: running(ago(90)), lastState: {}, ready: true, started: true, restartCount: 0, image: IMG, imageID: IMAGE_REF, containerID: 'containerd://app-0' },
      },
      extra: (s) => {
        assert.equal(s.podIP, POD_IP);
        assert.deepEqual(s.podIPs, [{ ip: POD_IP }]);
        assert.equal(s.hostIP, HOST_IP);
        assert.deepEqual(s.hostIPs, [{ ip: HOST_IP }]);
        assert.equal(s.qosClass, 'BestEffort');
        assert.equal(s.initContainerStatuses, undefined);
        // The first sandbox is older than now: it is the start time.
        assert.equal(s.startTime, iso(ago(120)));
      },
    },
  },
  {
    name: 'running, two containers, statuses in spec order',
    inputs: inputs(mkPod({ containers: [ctr('web'), ctr('log')] }), runtime([rc('log', 'running', { createdAt: ago(80) }), rc('web', 'running', { createdAt: ago(90) })])),
    want: {
      phase: 'Running',
      conditions: ALL_TRUE,
      containers: { web: { ready: true, started: true, containerID: 'containerd://web-0' }, log: { ready: true, started: true, containerID: 'containerd://log-0' } },
      extra: (s) => assert.deepEqual(s.containerStatuses?.map((c) => c.name), ['web', 'log']),
    },
  },
  {
    name: 'running beside a crashed one: Running, not ready',
    inputs: inputs(mkPod({ containers: [ctr('web'), ctr('app')] }), runtime([rc('web', 'running'), rc('app', 'exited', { exitCode: 2, restartCount: 1 })]), { reasons: { app: ['CrashLoopBackOff', BACKOFF] } }),
    want: {
      phase: 'Running',
      conditions: { ...ALL_TRUE, Ready: 'False ContainersNotReady: containers with unready status: [app]', ContainersReady: 'False ContainersNotReady: containers with unready status: [app]' },
      containers: { web: { ready: true }, app: { state: waiting('CrashLoopBackOff', BACKOFF), ready: false, started: false, restartCount: 1 } },
    },
  },
  {
    name: 'crash-looping: waiting CrashLoopBackOff, the last run in lastState, restartCount 3',
    inputs: inputs(
      mkPod(),
      runtime([
        rc('app', 'exited', { exitCode: 1, reason: 'Error', message: 'boom', restartCount: 3, createdAt: ago(30), startedAt: ago(29), finishedAt: ago(20) }),
        rc('app', 'exited', { exitCode: 1, restartCount: 2, createdAt: ago(70) }),
      ]),
      { reasons: { app: ['CrashLoopBackOff', BACKOFF] } },
    ),
    want: {
      phase: 'Running',
      conditions: { ...ALL_TRUE, Ready: 'False ContainersNotReady: containers with unready status: [app]', ContainersReady: 'False ContainersNotReady: containers with unready status: [app]' },
      containers: {
        app: {
          state: waiting('CrashLoopBackOff', BACKOFF),
          lastState: { terminated: { exitCode: 1, reason: 'Error', message: 'boom', startedAt: iso(ago(29)), finishedAt: iso(ago(20)), containerID: 'containerd://app-3' } },
          ready: false,
          started: false,
          restartCount: 3,
          containerID: 'containerd://app-3',
        },
      },
    },
  },
  {
    name: 'restarted after a crash: running, lastState from the instance before',
    inputs: inputs(mkPod(), runtime([rc('app', 'running', { restartCount: 1, createdAt: ago(10), startedAt: ago(9) }), rc('app', 'exited', { exitCode: 2, createdAt: ago(60), finishedAt: ago(15) })])),
    want: {
      phase: 'Running',
      conditions: ALL_TRUE,
      containers: {
        app: {
          state: running(ago(9)),
          lastState: { terminated: { exitCode: 2, reason: 'Error', startedAt: iso(ago(59)), finishedAt: iso(ago(15)), containerID: 'containerd://app-0' } },
          restartCount: 1,
          ready: true,
        },
      },
    },
  },
  {
    name: 'crashed again and the instance before already removed (cleanUpContainersInPod keeps the newest dead one): the last termination the status gave for this instance stays',
    inputs: inputs(
      mkPod({
        status: {
          phase: 'Running',
          containerStatuses: [
            { name: 'app', state: running(ago(25)), lastState: { terminated: { exitCode: 1, reason: 'Error', containerID: 'containerd://app-2' } }, ready: false, restartCount: 3, image: IMG, imageID: IMAGE_REF, containerID: 'containerd://app-3' },
          ],
        },
      }),
      runtime([rc('app', 'exited', { exitCode: 1, reason: 'Error', restartCount: 3, createdAt: ago(26), startedAt: ago(25), finishedAt: ago(24) })]),
    ),
    want: { phase: 'Running', containers: { app: { state: { terminated: { exitCode: 1, reason: 'Error', startedAt: iso(ago(25)), finishedAt: iso(ago(24)), containerID: 'containerd://app-3' } }, lastState: { terminated: { exitCode: 1, reason: 'Error', containerID: 'containerd://app-2' } }, restartCount: 3 } } },
  },
  {
    name: 'crashed again so fast no status showed it running, the instance before removed: its termination from the back-off status stays the last one',
    inputs: inputs(
      mkPod({
        status: {
          phase: 'Running',
          containerStatuses: [
            { name: 'app', state: waiting('CrashLoopBackOff', BACKOFF), lastState: { terminated: { exitCode: 1, reason: 'Error', containerID: 'containerd://app-2' } }, ready: false, restartCount: 2, image: IMG, imageID: IMAGE_REF, containerID: 'containerd://app-2' },
          ],
        },
      }),
      runtime([rc('app', 'exited', { exitCode: 1, reason: 'Error', restartCount: 3, createdAt: ago(26), startedAt: ago(25), finishedAt: ago(24) })]),
    ),
    want: { phase: 'Running', containers: { app: { lastState: { terminated: { exitCode: 1, reason: 'Error', containerID: 'containerd://app-2' } }, restartCount: 3, containerID: 'containerd://app-3' } } },
  },
  {
    name: 'a new instance with no instance before in the runtime: no last termination taken from another instance\'s status',
    inputs: inputs(
      mkPod({
        status: {
          phase: 'Running',
          containerStatuses: [{ name: 'app', state: running(ago(25)), lastState: { terminated: { exitCode: 1, reason: 'Error', containerID: 'containerd://app-1' } }, ready: false, restartCount: 2, image: IMG, imageID: IMAGE_REF, containerID: 'containerd://app-2' }],
        },
      }),
      runtime([rc('app', 'running', { restartCount: 3, createdAt: ago(5), startedAt: ago(4) })]),
    ),
    want: { phase: 'Running', containers: { app: { state: running(ago(4)), lastState: {}, restartCount: 3 } } },
  },
  {
    name: 'restart count without the annotation: the dead instances still there are counted',
    inputs: inputs(mkPod(), runtime([rc('app', 'running', { id: 'c', createdAt: ago(10) }), rc('app', 'exited', { id: 'b', exitCode: 1, createdAt: ago(40) }), rc('app', 'exited', { id: 'a', exitCode: 1, createdAt: ago(80) })])),
    want: { phase: 'Running', containers: { app: { restartCount: 2, containerID: 'containerd://c' } } },
  },
  {
    name: 'init blocked: the first init container failed and is restarting; the app waits PodInitializing',
    inputs: inputs(
      mkPod({ initContainers: [ctr('init'), ctr('init2')] }),
      runtime([rc('init', 'exited', { exitCode: 1, reason: 'Error', restartCount: 2, createdAt: ago(20), finishedAt: ago(18) })]),
      { reasons: { init: ['CrashLoopBackOff', 'back-off 20s restarting failed container=init pod=web_default(uid-1)'] } },
    ),
    want: {
      phase: 'Pending',
      conditions: {
        ...ALL_TRUE,
        Initialized: 'False ContainersNotInitialized: containers with incomplete status: [init init2]',
        Ready: 'False ContainersNotReady: containers with unready status: [app]',
        ContainersReady: 'False ContainersNotReady: containers with unready status: [app]',
      },
      init: {
        init: {
          state: waiting('CrashLoopBackOff', 'back-off 20s restarting failed container=init pod=web_default(uid-1)'),
          lastState: { terminated: { exitCode: 1, reason: 'Error', startedAt: iso(ago(19)), finishedAt: iso(ago(18)), containerID: 'containerd://init-2' } },
          restartCount: 2,
          ready: false,
        },
        init2: { state: waiting('PodInitializing'), ready: false, started: false, restartCount: 0, imageID: '' },
      },
      containers: { app: { state: waiting('PodInitializing'), lastState: {}, ready: false, started: false, restartCount: 0, image: IMG, imageID: '' } },
      extra: (s) => {
        assert.deepEqual(s.initContainerStatuses?.map((c) => c.name), ['init', 'init2']);
        assert.equal(statusNamed(s.containerStatuses, 'app').containerID, undefined);
      },
    },
  },
  {
    name: 'init in progress: the first init container done, the second running',
    inputs: inputs(mkPod({ initContainers: [ctr('init'), ctr('init2')] }), runtime([rc('init2', 'running', { createdAt: ago(50) }), rc('init', 'exited', { exitCode: 0, createdAt: ago(90) })])),
    want: {
      phase: 'Pending',
      conditions: {
        ...ALL_TRUE,
        Initialized: 'False ContainersNotInitialized: containers with incomplete status: [init2]',
        Ready: 'False ContainersNotReady: containers with unready status: [app]',
        ContainersReady: 'False ContainersNotReady: containers with unready status: [app]',
      },
      init: { init: { state: { terminated: { exitCode: 0, reason: 'Completed', startedAt: iso(ago(89)), finishedAt: iso(ago(80)), containerID: 'containerd://init-0' } }, ready: true }, init2: { ready: false, started: true } },
      containers: { app: { state: waiting('PodInitializing') } },
    },
  },
  {
    name: 'init failed with restartPolicy Never: Failed',
    inputs: inputs(mkPod({ initContainers: [ctr('init')], restartPolicy: 'Never' }), runtime([rc('init', 'exited', { exitCode: 1, reason: 'Error' })], [sandbox({ ready: false })])),
    want: {
      phase: 'Failed',
      conditions: {
        PodReadyToStartContainers: 'False',
        Initialized: 'False ContainersNotInitialized: containers with incomplete status: [init]',
        Ready: 'False PodFailed',
        ContainersReady: 'False PodFailed',
        PodScheduled: 'True',
      },
      init: { init: { state: { terminated: { exitCode: 1, reason: 'Error', startedAt: iso(ago(99)), finishedAt: iso(ago(90)), containerID: 'containerd://init-0' } }, ready: false } },
      containers: { app: { state: waiting('PodInitializing'), ready: false } },
      extra: (s) => assert.equal(s.podIP, undefined),
    },
  },
  {
    name: 'a completed init container is not run again: a stale back-off for it is not shown',
    inputs: inputs(mkPod({ initContainers: [ctr('init')] }), runtime([rc('app', 'running', { createdAt: ago(60) }), rc('init', 'exited', { exitCode: 0, createdAt: ago(90) })]), {
      reasons: { init: ['CrashLoopBackOff', 'back-off 10s restarting failed container=init pod=web_default(uid-1)'] },
    }),
    want: {
      phase: 'Running',
      conditions: ALL_TRUE,
      init: { init: { state: { terminated: { exitCode: 0, reason: 'Completed', startedAt: iso(ago(89)), finishedAt: iso(ago(80)), containerID: 'containerd://init-0' } }, ready: true, started: false } },
    },
  },
  {
    name: 'init removed from the runtime after the app was created: inferred Completed',
    inputs: inputs(mkPod({ initContainers: [ctr('init')] }), runtime([rc('app', 'running')])),
    want: {
      phase: 'Running',
      conditions: ALL_TRUE,
      init: {
        init: {
          state: { terminated: { exitCode: 0, reason: 'Completed', message: 'Unable to get init container status from container runtime and pod has been initialized, treat it as exited normally' } },
          ready: true,
        },
      },
    },
  },
  {
    name: 'sidecar running beside the main container: Running, Ready when both ready',
    inputs: inputs(
      mkPod({ initContainers: [sidecar('proxy', { readinessProbe: probe })], containers: [ctr('app', { readinessProbe: probe })] }),
      runtime([rc('app', 'running', { createdAt: ago(100) }), rc('proxy', 'running', { createdAt: ago(110) })]),
      { readinessById: { 'proxy-0': true, 'app-0': true } },
    ),
    want: {
      phase: 'Running',
      conditions: ALL_TRUE,
      init: { proxy: { state: running(ago(109)), ready: true, started: true } },
      containers: { app: { ready: true, started: true } },
    },
  },
  {
    name: 'sidecar not ready yet: the pod is not Ready',
    inputs: inputs(
      mkPod({ initContainers: [sidecar('proxy', { readinessProbe: probe })], containers: [ctr('app')] }),
      runtime([rc('app', 'running', { createdAt: ago(100) }), rc('proxy', 'running', { createdAt: ago(110) })]),
      { readinessById: { 'proxy-0': false } },
    ),
    want: {
      phase: 'Running',
      conditions: { ...ALL_TRUE, Ready: 'False ContainersNotReady: containers with unready status: [proxy]', ContainersReady: 'False ContainersNotReady: containers with unready status: [proxy]' },
      init: { proxy: { ready: false, started: true } },
    },
  },
  {
    name: 'sidecar started, main container not yet created: Pending, Initialized',
    inputs: inputs(mkPod({ initContainers: [sidecar('proxy')], containers: [ctr('app')] }), runtime([rc('proxy', 'running', { createdAt: ago(110) })])),
    want: {
      phase: 'Pending',
      conditions: { ...ALL_TRUE, Ready: 'False ContainersNotReady: containers with unready status: [app]', ContainersReady: 'False ContainersNotReady: containers with unready status: [app]' },
      containers: { app: { state: waiting('PodInitializing') } },
    },
  },
  {
    name: 'sidecar behind a startup probe: not started, the pod not initialized',
    inputs: inputs(mkPod({ initContainers: [sidecar('proxy', { startupProbe: probe })], containers: [ctr('app')] }), runtime([rc('proxy', 'running', { createdAt: ago(110) })])),
    want: {
      phase: 'Pending',
      conditions: {
        ...ALL_TRUE,
        Initialized: 'False ContainersNotInitialized: containers with incomplete status: [proxy]',
        Ready: 'False ContainersNotReady: containers with unready status: [proxy app]',
        ContainersReady: 'False ContainersNotReady: containers with unready status: [proxy app]',
      },
      init: { proxy: { started: false, ready: false } },
    },
  },
  {
    // kubecontainer.ShouldContainerBeRestarted with ContainerRestartRules off (upstream's default): the pod's
    // policy decides for a sidecar too, so between restarts the sidecar shows how it ended, not its back-off.
    name: 'sidecar crashed in a Never pod: it shows its terminated state, as upstream, though the runtime manager restarts it',
    inputs: inputs(
      mkPod({ initContainers: [sidecar('proxy')], containers: [ctr('app')], restartPolicy: 'Never' }),
      runtime([rc('app', 'running', { createdAt: ago(100) }), rc('proxy', 'exited', { exitCode: 1, restartCount: 1, createdAt: ago(50) })]),
      { reasons: { proxy: ['CrashLoopBackOff', 'back-off 10s restarting failed container=proxy pod=web_default(uid-1)'] } },
    ),
    want: {
      phase: 'Running',
      // The app has run: the pod stays initialized while its sidecar restarts.
      conditions: {
        ...ALL_TRUE,
        Ready: 'False ContainersNotReady: containers with unready status: [proxy]',
        ContainersReady: 'False ContainersNotReady: containers with unready status: [proxy]',
      },
      init: {
        proxy: {
          state: { terminated: { exitCode: 1, reason: 'Error', startedAt: iso(ago(49)), finishedAt: iso(ago(40)), containerID: 'containerd://proxy-1' } },
          lastState: {},
          restartCount: 1,
          ready: false,
        },
      },
    },
  },
  {
    name: 'sidecar stopped after the main container completed (Never): Succeeded, the sidecar does not count',
    inputs: inputs(
      mkPod({ initContainers: [sidecar('proxy')], containers: [ctr('app')], restartPolicy: 'Never' }),
      runtime([rc('proxy', 'exited', { exitCode: 137, createdAt: ago(110) }), rc('app', 'exited', { exitCode: 0, createdAt: ago(100) })]),
    ),
    want: { phase: 'Succeeded' },
  },
  {
    name: 'sidecar still running after the main container completed (Never): Running until it is stopped',
    inputs: inputs(
      mkPod({ initContainers: [sidecar('proxy')], containers: [ctr('app')], restartPolicy: 'Never' }),
      runtime([rc('proxy', 'running', { createdAt: ago(110) }), rc('app', 'exited', { exitCode: 0, createdAt: ago(100) })]),
    ),
    want: { phase: 'Running' },
  },
  {
    name: 'succeeded: restartPolicy Never, exit 0',
    inputs: inputs(mkPod({ restartPolicy: 'Never' }), runtime([rc('app', 'exited', { exitCode: 0 })], [sandbox({ ready: false })])),
    want: {
      phase: 'Succeeded',
      conditions: { PodReadyToStartContainers: 'False', Initialized: 'True PodCompleted', Ready: 'False PodCompleted', ContainersReady: 'False PodCompleted', PodScheduled: 'True' },
      containers: { app: { state: { terminated: { exitCode: 0, reason: 'Completed', startedAt: iso(ago(99)), finishedAt: iso(ago(90)), containerID: 'containerd://app-0' } }, ready: false, started: false } },
    },
  },
  {
    name: 'failed: restartPolicy Never, exit 1',
    inputs: inputs(mkPod({ restartPolicy: 'Never' }), runtime([rc('app', 'exited', { exitCode: 1 })])),
    want: {
      phase: 'Failed',
      conditions: { ...ALL_TRUE, Ready: 'False PodFailed', ContainersReady: 'False PodFailed' },
      containers: { app: { state: { terminated: { exitCode: 1, reason: 'Error', startedAt: iso(ago(99)), finishedAt: iso(ago(90)), containerID: 'containerd://app-0' } } } },
    },
  },
  {
    name: 'OOMKilled under Never: the runtime reason is kept, Failed',
    inputs: inputs(mkPod({ restartPolicy: 'Never' }), runtime([rc('app', 'exited', { exitCode: 137, reason: 'OOMKilled' })])),
    want: { phase: 'Failed', containers: { app: { state: { terminated: { exitCode: 137, reason: 'OOMKilled', startedAt: iso(ago(99)), finishedAt: iso(ago(90)), containerID: 'containerd://app-0' } } } } },
  },
  {
    name: 'OnFailure, exit 0: Succeeded, not restarted even with a stale back-off',
    inputs: inputs(mkPod({ restartPolicy: 'OnFailure' }), runtime([rc('app', 'exited', { exitCode: 0 })]), { reasons: { app: ['CrashLoopBackOff', BACKOFF] } }),
    want: { phase: 'Succeeded', containers: { app: { state: { terminated: { exitCode: 0, reason: 'Completed', startedAt: iso(ago(99)), finishedAt: iso(ago(90)), containerID: 'containerd://app-0' } } } } },
  },
  {
    name: 'OnFailure, exit 1: restarting, Running',
    inputs: inputs(mkPod({ restartPolicy: 'OnFailure' }), runtime([rc('app', 'exited', { exitCode: 1 })]), { reasons: { app: ['CrashLoopBackOff', BACKOFF] } }),
    want: { phase: 'Running', containers: { app: { state: waiting('CrashLoopBackOff', BACKOFF), lastState: { terminated: { exitCode: 1, reason: 'Error', startedAt: iso(ago(99)), finishedAt: iso(ago(90)), containerID: 'containerd://app-0' } } } } },
  },
  ...(
    [
      ['ErrImagePull', 'failed to pull and unpack image "localhost/nope:1": not found'],
      ['ImagePullBackOff', 'Back-off pulling image "localhost/nope:1"'],
      ['ErrImageNeverPull', 'Container image "localhost/nope:1" is not present with pull policy of Never'],
    ] as const
  ).map(
    ([reason, message]): Case => ({
      name: `image error ${reason}: waiting with the reason and message, Pending`,
      inputs: inputs(mkPod({ containers: [ctr('app', { image: 'localhost/nope:1' })] }), runtime([]), { reasons: { app: [reason, message] } }),
      want: {
        phase: 'Pending',
        conditions: { ...ALL_TRUE, Ready: 'False ContainersNotReady: containers with unready status: [app]', ContainersReady: 'False ContainersNotReady: containers with unready status: [app]' },
        containers: { app: { state: waiting(reason, message), lastState: {}, ready: false, started: false, restartCount: 0, image: 'localhost/nope:1', imageID: '' } },
      },
    }),
  ),
  {
    name: 'no sandbox yet: ContainerCreating, PodReadyToStartContainers False, no pod IP',
    inputs: inputs(mkPod(), runtime([], [])),
    want: {
      phase: 'Pending',
      conditions: {
        ...ALL_TRUE,
        PodReadyToStartContainers: 'False',
        Ready: 'False ContainersNotReady: containers with unready status: [app]',
        ContainersReady: 'False ContainersNotReady: containers with unready status: [app]',
      },
      containers: { app: { state: waiting('ContainerCreating'), ready: false, started: false } },
      extra: (s) => {
        assert.equal(s.podIP, undefined);
        assert.equal(s.startTime, iso(NOW));
      },
    },
  },
  {
    name: 'sandbox without an IP: PodReadyToStartContainers False',
    inputs: inputs(mkPod(), runtime([], [sandbox({ ip: '' })])),
    want: { phase: 'Pending', extra: (s) => assert.equal(conditionsOf(s)['PodReadyToStartContainers'], 'False') },
  },
  {
    name: 'host network: no sandbox IP needed, the pod IP is the host IP',
    inputs: inputs(mkPod({ hostNetwork: true }), runtime([rc('app', 'running')], [sandbox({ hostNetwork: true })])),
    want: {
      phase: 'Running',
      conditions: ALL_TRUE,
      extra: (s) => {
        assert.equal(s.podIP, HOST_IP);
        assert.deepEqual(s.podIPs, [{ ip: HOST_IP }]);
      },
    },
  },
  {
    name: 'dual stack: the node family first',
    inputs: inputs(mkPod(), { ...runtime([rc('app', 'running')]), ips: ['fd00:77::5', POD_IP, '10.88.77.6'] }),
    want: { phase: 'Running', extra: (s) => assert.deepEqual(s.podIPs, [{ ip: POD_IP }, { ip: 'fd00:77::5' }]) },
  },
  {
    name: 'deadline exceeded: podFailure makes it Failed with its reason and message',
    inputs: inputs(mkPod(), runtime([rc('app', 'running')]), { podFailure: { reason: 'DeadlineExceeded', message: 'Pod was active on the node longer than the specified deadline' } }),
    want: {
      phase: 'Failed',
      reason: 'DeadlineExceeded',
      message: 'Pod was active on the node longer than the specified deadline',
      conditions: { ...ALL_TRUE, Ready: 'False PodFailed', ContainersReady: 'False PodFailed' },
    },
  },
  {
    name: 'terminating: podIsTerminal with containers still running stays Running',
    inputs: inputs(mkPod({ deleted: true }), runtime([rc('app', 'running')]), { podIsTerminal: true }),
    want: { phase: 'Running', conditions: ALL_TRUE },
  },
  {
    name: 'terminal under restartPolicy Always, all exited 0: Succeeded, no back-off shown',
    inputs: inputs(mkPod({ deleted: true }), runtime([rc('app', 'exited', { exitCode: 0 })]), { podIsTerminal: true, reasons: { app: ['CrashLoopBackOff', BACKOFF] } }),
    want: { phase: 'Succeeded', containers: { app: { state: { terminated: { exitCode: 0, reason: 'Completed', startedAt: iso(ago(99)), finishedAt: iso(ago(90)), containerID: 'containerd://app-0' } } } } },
  },
  {
    name: 'terminal under restartPolicy Always, killed with 137: Failed',
    inputs: inputs(mkPod({ containers: [ctr('web'), ctr('app')] }), runtime([rc('web', 'exited', { exitCode: 0 }), rc('app', 'exited', { exitCode: 137 })]), { podIsTerminal: true }),
    want: { phase: 'Failed' },
  },
  {
    name: 'terminal static pod: no terminal phase yet (upstream #116484), Running under Always',
    inputs: inputs(mkPod({ staticPod: true }), runtime([rc('app', 'exited', { exitCode: 0 })]), { podIsTerminal: true }),
    want: { phase: 'Running' },
  },
  {
    name: 'readiness gate without its condition: Ready False ReadinessGatesNotReady',
    inputs: inputs(mkPod({ readinessGates: ['example.com/lb'] }), runtime([rc('app', 'running')])),
    want: {
      phase: 'Running',
      conditions: { ...ALL_TRUE, Ready: 'False ReadinessGatesNotReady: corresponding condition of pod readiness gate "example.com/lb" does not exist.' },
    },
  },
  {
    name: 'readiness gate condition False: Ready False, the condition kept first',
    inputs: inputs(
      mkPod({ readinessGates: ['example.com/lb'], status: { phase: 'Running', conditions: [{ type: 'example.com/lb', status: 'False', lastTransitionTime: iso(ago(300)) }] } }),
      runtime([rc('app', 'running')]),
    ),
    want: {
      phase: 'Running',
      conditions: { 'example.com/lb': 'False', ...ALL_TRUE, Ready: 'False ReadinessGatesNotReady: the status of pod readiness gate "example.com/lb" is not "True", but False' },
      extra: (s) => {
        assert.deepEqual(
          s.conditions?.map((c) => c.type),
          ['example.com/lb', 'PodReadyToStartContainers', 'Initialized', 'Ready', 'ContainersReady', 'PodScheduled'],
        );
        assert.deepEqual(s.conditions?.[0], { type: 'example.com/lb', status: 'False', lastTransitionTime: iso(ago(300)) });
      },
    },
  },
  {
    name: 'readiness gate condition True: Ready',
    inputs: inputs(mkPod({ readinessGates: ['example.com/lb'], status: { phase: 'Running', conditions: [{ type: 'example.com/lb', status: 'True' }] } }), runtime([rc('app', 'running')])),
    want: { phase: 'Running', conditions: { 'example.com/lb': 'True', ...ALL_TRUE } },
  },
  {
    name: 'readiness probe not yet passed: Ready False ContainersNotReady, started',
    inputs: inputs(mkPod({ containers: [ctr('app', { readinessProbe: probe })] }), runtime([rc('app', 'running')])),
    want: {
      phase: 'Running',
      conditions: { ...ALL_TRUE, Ready: 'False ContainersNotReady: containers with unready status: [app]', ContainersReady: 'False ContainersNotReady: containers with unready status: [app]' },
      containers: { app: { ready: false, started: true } },
    },
  },
  {
    name: 'readiness probe failing: not ready',
    inputs: inputs(mkPod({ containers: [ctr('app', { readinessProbe: probe })] }), runtime([rc('app', 'running')]), { readinessById: { 'app-0': false } }),
    want: { phase: 'Running', containers: { app: { ready: false, started: true } } },
  },
  {
    name: 'readiness probe passed: ready',
    inputs: inputs(mkPod({ containers: [ctr('app', { readinessProbe: probe })] }), runtime([rc('app', 'running')]), { readinessById: { 'app-0': true } }),
    want: { phase: 'Running', conditions: ALL_TRUE, containers: { app: { ready: true, started: true } } },
  },
  {
    name: 'startup probe not yet passed: neither started nor ready, even with readiness Success',
    inputs: inputs(mkPod({ containers: [ctr('app', { startupProbe: probe })] }), runtime([rc('app', 'running')]), { readinessById: { 'app-0': true } }),
    want: { phase: 'Running', containers: { app: { ready: false, started: false } } },
  },
  {
    name: 'started in the previous status under the same ID stays started without a startup result',
    inputs: inputs(
      mkPod({ containers: [ctr('app', { startupProbe: probe })], status: { phase: 'Running', containerStatuses: [{ name: 'app', state: running(ago(99)), ready: true, started: true, restartCount: 0, image: IMG, imageID: IMAGE_REF, containerID: 'containerd://app-0' }] } }),
      runtime([rc('app', 'running')]),
    ),
    want: { phase: 'Running', containers: { app: { started: true, ready: true } } },
  },
  {
    name: 'a running container vanished from the runtime: lastState terminated 137, restart counted',
    inputs: inputs(
      mkPod({ status: { phase: 'Running', containerStatuses: [{ name: 'app', state: running(ago(99)), lastState: {}, ready: true, started: true, restartCount: 4, image: IMG, imageID: IMAGE_REF, containerID: 'containerd://app-4' }] } }),
      runtime([]),
    ),
    want: {
      phase: 'Running',
      containers: {
        app: {
          state: waiting('ContainerCreating'),
          lastState: { terminated: { exitCode: 137, reason: 'ContainerStatusUnknown', message: 'The container could not be located when the pod was deleted.  The container used to be Running' } },
          restartCount: 5,
        },
      },
    },
  },
  {
    name: 'a running container the runtime reports unknown: terminated 137 ContainerStatusUnknown',
    inputs: inputs(
      mkPod({ restartPolicy: 'Never', status: { phase: 'Running', containerStatuses: [{ name: 'app', state: running(ago(99)), ready: true, restartCount: 0, image: IMG, imageID: IMAGE_REF, containerID: 'containerd://app-0' }] } }),
      runtime([rc('app', 'unknown')]),
    ),
    want: {
      phase: 'Failed',
      containers: { app: { state: { terminated: { exitCode: 137, reason: 'ContainerStatusUnknown', message: 'The container could not be located when the pod was terminated' } }, restartCount: 1 } },
    },
  },
  {
    name: 'terminal phase never goes back: Succeeded stays Succeeded whatever the runtime says',
    inputs: inputs(mkPod({ status: { phase: 'Succeeded', startTime: iso(ago(3600)) } }), runtime([rc('app', 'running')])),
    want: {
      phase: 'Succeeded',
      conditions: { ...ALL_TRUE, Initialized: 'True PodCompleted', Ready: 'False PodCompleted', ContainersReady: 'False PodCompleted' },
      extra: (s) => assert.equal(s.startTime, iso(ago(3600))),
    },
  },
  {
    name: 'terminal phase never goes back: Failed stays Failed, even against podFailure it keeps the phase',
    inputs: inputs(mkPod({ status: { phase: 'Succeeded' } }), runtime([]), { podFailure: { reason: 'DeadlineExceeded', message: 'Pod was active on the node longer than the specified deadline' } }),
    want: { phase: 'Succeeded', reason: 'DeadlineExceeded', message: 'Pod was active on the node longer than the specified deadline' },
  },
  {
    name: 'a terminal phase set in the API by someone else is the phase, against a running previous status ("API phase was terminal")',
    inputs: inputs(mkPod({ status: { phase: 'Running' } }), runtime([rc('app', 'running')]), { sourceStatus: { phase: 'Failed', reason: 'Overruled', message: 'by a controller' } }),
    // The reason goes with the previous status' phase only (upstream's: the previous one was Running).
    want: { phase: 'Failed', conditions: { ...ALL_TRUE, Ready: 'False PodFailed', ContainersReady: 'False PodFailed' } },
  },
  {
    name: 'a terminal phase in the API with the same previous phase: its reason and message stand in for missing ones',
    inputs: inputs(mkPod({ status: { phase: 'Failed' } }), runtime([rc('app', 'running')]), { sourceStatus: { phase: 'Failed', reason: 'Overruled', message: 'by a controller' } }),
    want: { phase: 'Failed', reason: 'Overruled', message: 'by a controller' },
  },
  {
    name: 'the API\'s terminal phase wins over the other terminal one (no transition out of it)',
    inputs: inputs(mkPod({ restartPolicy: 'Never', status: { phase: 'Running' } }), runtime([rc('app', 'exited', { exitCode: 0 })]), { sourceStatus: { phase: 'Failed' } }),
    want: { phase: 'Failed' },
  },
  {
    name: 'a non-terminal phase in the API changes nothing',
    inputs: inputs(mkPod({ status: { phase: 'Pending' } }), runtime([rc('app', 'running')]), { sourceStatus: { phase: 'Pending', reason: 'Old' } }),
    want: { phase: 'Running' },
  },
  {
    name: 'a rejected pod keeps its reason and message',
    inputs: inputs(mkPod({ status: { phase: 'Failed', reason: 'OutOfcpu', message: "Node didn't have enough resource: cpu, requested: 8000, used: 0, capacity: 4000" } }), runtime([], [])),
    want: { phase: 'Failed', reason: 'OutOfcpu', message: "Node didn't have enough resource: cpu, requested: 8000, used: 0, capacity: 4000" },
  },
  {
    name: 'the reason goes with its phase: dropped when the phase changes',
    inputs: inputs(mkPod({ status: { phase: 'Pending', reason: 'SomethingPending', message: 'was pending' } }), runtime([rc('app', 'running')])),
    want: { phase: 'Running' },
  },
  {
    name: 'the reason kept while the phase holds',
    inputs: inputs(mkPod({ status: { phase: 'Running', reason: 'NodeReboot', message: 'still here' } }), runtime([rc('app', 'running')])),
    want: { phase: 'Running', reason: 'NodeReboot', message: 'still here' },
  },
  {
    name: 'a previously terminated container missing from the runtime keeps its terminated state (Never)',
    inputs: inputs(
      mkPod({
        restartPolicy: 'Never',
        status: {
          phase: 'Running',
          containerStatuses: [{ name: 'app', state: { terminated: { exitCode: 0, reason: 'Completed', containerID: 'containerd://gone' } }, lastState: {}, ready: false, restartCount: 0, image: IMG, imageID: IMAGE_REF, containerID: 'containerd://gone' }],
        },
      }),
      runtime([]),
    ),
    want: { phase: 'Succeeded', containers: { app: { state: { terminated: { exitCode: 0, reason: 'Completed', containerID: 'containerd://gone' } }, containerID: 'containerd://gone' } } },
  },
];

describe('generateAPIPodStatus', () => {
  for (const tc of cases) {
    it(tc.name, () => {
      const before = structuredClone(tc.inputs.pod);
      const status = generateAPIPodStatus(tc.inputs);
      check(status, tc.want);
      assert.deepEqual(tc.inputs.pod, before, 'the pod is not modified');
    });
  }
});

describe('generateAPIPodStatus: conditions the kubelet does not own (readiness gates)', () => {
  const gates = ['k8s.io/test-condition1', 'k8s.io/test-condition2'];
  const running1 = runtime([rc('app', 'running', { createdAt: ago(91), startedAt: ago(90) })]);
  const gate = (type: string, status: 'True' | 'False') => ({ type, status, lastProbeTime: null, lastTransitionTime: iso(ago(5)) });
  // The previous status (the status manager's) was generated before anyone set a gate's condition.
  const previous = generateAPIPodStatus(inputs(mkPod({ readinessGates: gates }), running1));

  it('the gates\' conditions missing: Ready False, ReadinessGatesNotReady, upstream\'s message', () => {
    const s = generateAPIPodStatus({ ...inputs(mkPod({ readinessGates: gates, status: previous }), running1), sourceConditions: [] });
    assert.equal(conditionsOf(s)['Ready'], 'False ReadinessGatesNotReady: corresponding condition of pod readiness gate "k8s.io/test-condition1" does not exist., corresponding condition of pod readiness gate "k8s.io/test-condition2" does not exist.');
    assert.equal(conditionsOf(s)['ContainersReady'], 'True');
  });

  it('set True by someone else in the apiserver: read from the source\'s pod, not the previous status, and kept', () => {
    const s = generateAPIPodStatus({ ...inputs(mkPod({ readinessGates: gates, status: previous }), running1), sourceConditions: [gate(gates[0] ?? '', 'True'), gate(gates[1] ?? '', 'True')] });
    assert.equal(conditionsOf(s)['Ready'], 'True');
    assert.equal(conditionsOf(s)[gates[0] ?? ''], 'True');
  });

  it('one True, one False: not Ready, the False one named', () => {
    const s = generateAPIPodStatus({ ...inputs(mkPod({ readinessGates: gates, status: previous }), running1), sourceConditions: [gate(gates[0] ?? '', 'True'), gate(gates[1] ?? '', 'False')] });
    assert.equal(conditionsOf(s)['Ready'], 'False ReadinessGatesNotReady: the status of pod readiness gate "k8s.io/test-condition2" is not "True", but False');
  });

  it('the source\'s kubelet-owned conditions are not taken (the kubelet generates its own); DisruptionTarget stays the previous status\'', () => {
    const disrupted = { ...previous, conditions: [...(previous.conditions ?? []), { type: 'DisruptionTarget', status: 'True' as const, reason: 'TerminationByKubelet', lastTransitionTime: iso(ago(2)) }] };
    const s = generateAPIPodStatus({
      ...inputs(mkPod({ readinessGates: [], status: disrupted }), running1),
      sourceConditions: [{ type: 'Ready', status: 'False', reason: 'Stale' }, { type: 'example.com/other', status: 'True' }],
    });
    assert.equal(conditionsOf(s)['Ready'], 'True');
    assert.equal(conditionsOf(s)['example.com/other'], 'True');
    assert.equal(conditionsOf(s)['DisruptionTarget'], 'True TerminationByKubelet');
  });
});

describe('generateAPIPodStatus: ephemeral containers (ephemeralContainerStatuses)', () => {
  const debuggerSpec = { name: 'debugger', image: IMG, stdin: true, tty: true, targetContainerName: 'app' };
  const withDebugger = () => {
    const p = mkPod();
    p.spec.ephemeralContainers = [debuggerSpec];
    return p;
  };

  it('one that runs: its status, running, never ready; the pod\'s phase and conditions are the regular containers\'', () => {
    const s = generateAPIPodStatus(inputs(withDebugger(), runtime([rc('app', 'running'), rc('debugger', 'running', { createdAt: ago(10), startedAt: ago(9) })])));
    assert.equal(s.phase, 'Running');
    assert.deepEqual(conditionsOf(s), ALL_TRUE);
    assert.deepEqual(s.containerStatuses?.map((c) => c.name), ['app']);
    const ec = statusNamed(s.ephemeralContainerStatuses, 'debugger');
    assert.deepEqual(ec.state, running(ago(9)));
    assert.equal(ec.ready, false);
    assert.equal(ec.containerID, 'containerd://debugger-0');
  });

  it('one not started yet: waiting, ContainerCreating; one that exited: terminated with its exit code', () => {
    const waitingPod = generateAPIPodStatus(inputs(withDebugger(), runtime([rc('app', 'running')])));
    assert.deepEqual(statusNamed(waitingPod.ephemeralContainerStatuses, 'debugger').state, waiting('ContainerCreating'));
    const exited = generateAPIPodStatus(inputs(withDebugger(), runtime([rc('app', 'running'), rc('debugger', 'exited', { exitCode: 3 })])));
    assert.equal(statusNamed(exited.ephemeralContainerStatuses, 'debugger').state?.terminated?.exitCode, 3);
    assert.equal(exited.phase, 'Running');
  });

  it('a pod without ephemeral containers has no ephemeralContainerStatuses field', () => {
    const s = generateAPIPodStatus(inputs(mkPod(), runtime([rc('app', 'running')])));
    assert.equal(s.ephemeralContainerStatuses, undefined);
  });
});

describe('generateAPIPodStatus: the container user (convertContainerStatusUser)', () => {
  it("containerd 2's ContainerStatus.user is the status's user, groups and all; a runtime that says none leaves it out", () => {
    const withUser = rc('app', 'running', { user: { linux: { uid: 1000, gid: 3000, supplementalGroups: [3000, 4000] } } });
    const s = generateAPIPodStatus(inputs(mkPod(), runtime([withUser])));
    assert.deepEqual((statusNamed(s.containerStatuses, 'app') as { user?: unknown }).user, { linux: { uid: 1000, gid: 3000, supplementalGroups: [3000, 4000] } });
    const none = generateAPIPodStatus(inputs(mkPod(), runtime([rc('app', 'running')])));
    assert.ok(!('user' in statusNamed(none.containerStatuses, 'app')));
  });
});
