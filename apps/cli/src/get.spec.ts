import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { ContainerStatus, Pod } from '@app/contracts';
import { podReadyColumn, podRestartsColumn, podStatusColumn, printPodTable } from './get.js';
import { at, cond, H, initSpec, MIN, pod, running, S, sidecarSpec, T0, terminated, waiting } from './testing.js';

describe('get pods: the STATUS column', () => {
  const cases: { name: string; pod: Pod; want: string }[] = [
    { name: 'running', pod: pod({ status: { phase: 'Running', conditions: [cond('Ready', 'True')], containerStatuses: [running('app')] } }), want: 'Running' },
    { name: 'pending, no statuses yet', pod: pod({ status: { phase: 'Pending' } }), want: 'Pending' },
    { name: 'no status at all', pod: pod(), want: '' },
    { name: 'pending, ContainerCreating', pod: pod({ status: { phase: 'Pending', containerStatuses: [waiting('app', 'ContainerCreating')] } }), want: 'ContainerCreating' },
    {
      name: 'crash-looping',
      pod: pod({ status: { phase: 'Running', containerStatuses: [waiting('app', 'CrashLoopBackOff', { restartCount: 3, lastState: { terminated: { exitCode: 1, reason: 'Error', finishedAt: at(T0) } } })] } }),
      want: 'CrashLoopBackOff',
    },
    { name: 'init container running: Init:0/1', pod: pod({ spec: initSpec('init'), status: { phase: 'Pending', initContainerStatuses: [running('init', { ready: false })], containerStatuses: [waiting('app', 'PodInitializing')] } }), want: 'Init:0/1' },
    { name: 'init container waiting PodInitializing: Init:0/1', pod: pod({ spec: initSpec('init'), status: { phase: 'Pending', initContainerStatuses: [waiting('init', 'PodInitializing')] } }), want: 'Init:0/1' },
    {
      name: 'second of two init containers running: Init:1/2',
      pod: pod({ spec: initSpec('i1', 'i2'), status: { phase: 'Pending', initContainerStatuses: [terminated('i1', 0, 'Completed'), running('i2', { ready: false })] } }),
      want: 'Init:1/2',
    },
    { name: 'init crash-looping', pod: pod({ spec: initSpec('init'), status: { phase: 'Pending', initContainerStatuses: [waiting('init', 'CrashLoopBackOff', { restartCount: 2 })] } }), want: 'Init:CrashLoopBackOff' },
    { name: 'init failed with a reason', pod: pod({ spec: { ...initSpec('init'), restartPolicy: 'Never' }, status: { phase: 'Failed', initContainerStatuses: [terminated('init', 1, 'Error')] } }), want: 'Init:Error' },
    { name: 'init failed without a reason', pod: pod({ spec: initSpec('init'), status: { phase: 'Pending', initContainerStatuses: [terminated('init', 2)] } }), want: 'Init:ExitCode:2' },
    {
      name: 'init killed by a signal',
      pod: pod({ spec: initSpec('init'), status: { phase: 'Pending', initContainerStatuses: [{ ...terminated('init', 137), state: { terminated: { exitCode: 137, signal: 9 } } }] } }),
      want: 'Init:Signal:9',
    },
    { name: 'init image pull error', pod: pod({ spec: initSpec('init'), status: { phase: 'Pending', initContainerStatuses: [waiting('init', 'ErrImagePull')] } }), want: 'Init:ErrImagePull' },
    {
      name: 'initialized, container waiting PodInitializing',
      pod: pod({ spec: initSpec('init'), status: { phase: 'Pending', conditions: [cond('Initialized', 'True')], initContainerStatuses: [terminated('init', 0, 'Completed')], containerStatuses: [waiting('app', 'PodInitializing')] } }),
      want: 'PodInitializing',
    },
    { name: 'succeeded', pod: pod({ spec: { restartPolicy: 'Never' }, status: { phase: 'Succeeded', containerStatuses: [terminated('app', 0, 'Completed')] } }), want: 'Completed' },
    { name: 'failed', pod: pod({ spec: { restartPolicy: 'Never' }, status: { phase: 'Failed', containerStatuses: [terminated('app', 1, 'Error')] } }), want: 'Error' },
    { name: 'failed without a reason', pod: pod({ spec: { restartPolicy: 'Never' }, status: { phase: 'Failed', containerStatuses: [terminated('app', 3)] } }), want: 'ExitCode:3' },
    { name: 'ErrImagePull', pod: pod({ status: { phase: 'Pending', containerStatuses: [waiting('app', 'ErrImagePull')] } }), want: 'ErrImagePull' },
    { name: 'ImagePullBackOff', pod: pod({ status: { phase: 'Pending', containerStatuses: [waiting('app', 'ImagePullBackOff')] } }), want: 'ImagePullBackOff' },
    { name: 'ErrImageNeverPull', pod: pod({ status: { phase: 'Pending', containerStatuses: [waiting('app', 'ErrImageNeverPull')] } }), want: 'ErrImageNeverPull' },
    { name: 'CreateContainerError', pod: pod({ status: { phase: 'Pending', containerStatuses: [waiting('app', 'CreateContainerError')] } }), want: 'CreateContainerError' },
    {
      name: 'the first container in the list wins (the loop runs backwards)',
      pod: pod({ spec: { containers: [{ name: 'a' }, { name: 'b' }] }, status: { phase: 'Pending', containerStatuses: [waiting('a', 'ErrImagePull'), waiting('b', 'ContainerCreating')] } }),
      want: 'ErrImagePull',
    },
    { name: 'being deleted', pod: pod({ deletionTimestamp: at(T0), status: { phase: 'Running', containerStatuses: [running('app')] } }), want: 'Terminating' },
    { name: 'being deleted after it succeeded', pod: pod({ deletionTimestamp: at(T0), status: { phase: 'Succeeded', containerStatuses: [terminated('app', 0, 'Completed')] } }), want: 'Completed' },
    { name: 'being deleted on a lost node', pod: pod({ deletionTimestamp: at(T0), status: { phase: 'Running', reason: 'NodeLost', containerStatuses: [running('app')] } }), want: 'Unknown' },
    {
      name: 'deadline exceeded',
      pod: pod({ spec: { activeDeadlineSeconds: 5 }, status: { phase: 'Failed', reason: 'DeadlineExceeded', message: 'Pod was active on the node longer than the specified deadline', containerStatuses: [running('app', { ready: false })] } }),
      want: 'DeadlineExceeded',
    },
    { name: 'rejected: NodeAffinity', pod: pod({ status: { phase: 'Failed', reason: 'NodeAffinity', message: "Pod Predicate NodeAffinity failed" } }), want: 'NodeAffinity' },
    { name: 'rejected: OutOfcpu', pod: pod({ status: { phase: 'Failed', reason: 'OutOfcpu', message: 'Pod was rejected: Node didn\'t have enough resource: cpu' } }), want: 'OutOfcpu' },
    {
      name: 'sidecar and container running',
      pod: pod({ spec: sidecarSpec, status: { phase: 'Running', conditions: [cond('Initialized', 'True'), cond('Ready', 'True')], initContainerStatuses: [running('side')], containerStatuses: [running('app')] } }),
      want: 'Running',
    },
    {
      name: 'sidecar restarting in an initialized pod',
      pod: pod({ spec: sidecarSpec, status: { phase: 'Running', conditions: [cond('Initialized', 'True')], initContainerStatuses: [waiting('side', 'CrashLoopBackOff', { restartCount: 2 })], containerStatuses: [running('app')] } }),
      want: 'Init:CrashLoopBackOff',
    },
    { name: 'sidecar not started yet', pod: pod({ spec: sidecarSpec, status: { phase: 'Pending', initContainerStatuses: [running('side', { started: false, ready: false })], containerStatuses: [waiting('app', 'PodInitializing')] } }), want: 'Init:0/1' },
    {
      name: 'a completed container beside a running one, pod Ready',
      pod: pod({ spec: { containers: [{ name: 'a' }, { name: 'b' }] }, status: { phase: 'Running', conditions: [cond('Ready', 'True')], containerStatuses: [terminated('a', 0, 'Completed'), running('b')] } }),
      want: 'Running',
    },
    {
      name: 'a completed container beside a running one, pod not Ready',
      pod: pod({ spec: { containers: [{ name: 'a' }, { name: 'b' }] }, status: { phase: 'Running', conditions: [cond('Ready', 'False')], containerStatuses: [terminated('a', 0, 'Completed'), running('b')] } }),
      want: 'NotReady',
    },
    { name: 'scheduling gated', pod: pod({ status: { phase: 'Pending', conditions: [cond('PodScheduled', 'False', 'SchedulingGated')] } }), want: 'SchedulingGated' },
  ];
  for (const tc of cases) {
    it(`${tc.name}: ${tc.want || '(empty)'}`, () => {
      assert.equal(podStatusColumn(tc.pod), tc.want);
    });
  }
});

describe('get pods: the READY column', () => {
  const cases: { name: string; pod: Pod; want: string }[] = [
    { name: 'one of two ready', pod: pod({ spec: { containers: [{ name: 'a' }, { name: 'b' }] }, status: { phase: 'Running', containerStatuses: [running('a'), running('b', { ready: false })] } }), want: '1/2' },
    { name: 'nothing yet', pod: pod({ status: { phase: 'Pending' } }), want: '0/1' },
    { name: 'a sidecar counts', pod: pod({ spec: sidecarSpec, status: { phase: 'Running', initContainerStatuses: [running('side')], containerStatuses: [running('app')] } }), want: '2/2' },
    { name: 'an ordinary init container does not', pod: pod({ spec: initSpec('init'), status: { phase: 'Running', initContainerStatuses: [terminated('init', 0, 'Completed')], containerStatuses: [running('app')] } }), want: '1/1' },
    {
      name: 'a sidecar restarting in an initialized pod: the containers still count',
      pod: pod({ spec: sidecarSpec, status: { phase: 'Running', conditions: [cond('Initialized', 'True')], initContainerStatuses: [waiting('side', 'CrashLoopBackOff', { restartCount: 2 })], containerStatuses: [running('app')] } }),
      want: '1/2',
    },
    { name: 'ready but not running is not counted', pod: pod({ status: { phase: 'Running', containerStatuses: [terminated('app', 0, 'Completed', { ready: true })] } }), want: '0/1' },
  ];
  for (const tc of cases) {
    it(`${tc.name}: ${tc.want}`, () => assert.equal(podReadyColumn(tc.pod), tc.want));
  }
});

describe('get pods: the RESTARTS column', () => {
  const lastState = (finishedAt?: number): ContainerStatus['lastState'] => ({ terminated: { exitCode: 1, reason: 'Error', ...(finishedAt !== undefined ? { finishedAt: at(finishedAt) } : {}) } });
  const now = T0 + 10 * MIN;
  const cases: { name: string; pod: Pod; want: string }[] = [
    { name: 'never restarted', pod: pod({ status: { phase: 'Running', containerStatuses: [running('app')] } }), want: '0' },
    { name: 'restarted, 25s ago', pod: pod({ status: { phase: 'Running', containerStatuses: [running('app', { restartCount: 3, lastState: lastState(now - 25 * S) })] } }), want: '3 (25s ago)' },
    {
      name: 'two containers: the sum, and the newest restart',
      pod: pod({ spec: { containers: [{ name: 'a' }, { name: 'b' }] }, status: { phase: 'Running', containerStatuses: [running('a', { restartCount: 2, lastState: lastState(now - 5 * MIN) }), running('b', { restartCount: 1, lastState: lastState(now - 200 * S) })] } }),
      want: '3 (3m20s ago)',
    },
    { name: 'a restart count without a finish time', pod: pod({ status: { phase: 'Running', containerStatuses: [running('app', { restartCount: 2, lastState: lastState() })] } }), want: '2' },
    {
      name: 'while initializing, the init containers count',
      pod: pod({ spec: initSpec('init'), status: { phase: 'Pending', initContainerStatuses: [waiting('init', 'CrashLoopBackOff', { restartCount: 4, lastState: lastState(now - 2 * H) })], containerStatuses: [waiting('app', 'PodInitializing', { restartCount: 0 })] } }),
      want: '4 (120m ago)',
    },
    {
      name: 'once initialized, only sidecars and containers count',
      pod: pod({
        spec: { initContainers: [{ name: 'init' }, { name: 'side', restartPolicy: 'Always' }] },
        status: { phase: 'Running', conditions: [cond('Initialized', 'True')], initContainerStatuses: [terminated('init', 0, 'Completed', { restartCount: 5, lastState: lastState(now - 1 * S) }), running('side', { restartCount: 1, lastState: lastState(now - 70 * S) })], containerStatuses: [running('app', { restartCount: 1, lastState: lastState(now - 90 * S) })] },
      }),
      want: '2 (70s ago)',
    },
  ];
  for (const tc of cases) {
    it(`${tc.name}: ${tc.want}`, () => assert.equal(podRestartsColumn(tc.pod, now), tc.want));
  }
});

describe('get pods: printPodTable', () => {
  const now = T0 + 10 * MIN;
  const web = pod({ name: 'web-node1', created: now - 5 * MIN, status: { phase: 'Running', podIP: '10.88.77.5', podIPs: [{ ip: '10.88.77.5' }], conditions: [cond('Ready', 'True')], containerStatuses: [running('app')] } });
  const crash = pod({
    name: 'crash-node1',
    created: now - 10 * MIN,
    spec: { readinessGates: [{ conditionType: 'example.com/lb' }] },
    status: { phase: 'Running', containerStatuses: [waiting('app', 'CrashLoopBackOff', { restartCount: 3, lastState: { terminated: { exitCode: 1, finishedAt: at(now - 25 * S) } } })] },
  });

  it('NAME, READY, STATUS, RESTARTS, AGE, padded to the widest cell + 3', () => {
    assert.equal(
      printPodTable([web, crash], now, {}),
      [
        'NAME          READY   STATUS             RESTARTS      AGE',
        'web-node1     1/1     Running            0             5m',
        'crash-node1   0/1     CrashLoopBackOff   3 (25s ago)   10m',
        '',
      ].join('\n'),
    );
  });

  it('-o wide adds IP, NODE, NOMINATED NODE, READINESS GATES', () => {
    assert.equal(
      printPodTable([web, crash], now, { wide: true }),
      [
        'NAME          READY   STATUS             RESTARTS      AGE   IP           NODE    NOMINATED NODE   READINESS GATES',
        'web-node1     1/1     Running            0             5m    10.88.77.5   node1   <none>           <none>',
        'crash-node1   0/1     CrashLoopBackOff   3 (25s ago)   10m   <none>       node1   <none>           0/1',
        '',
      ].join('\n'),
    );
  });

  it('the fleet view: NAMESPACE first with -A, NODE after AGE (and only once with -o wide)', () => {
    const other = pod({ name: 'db', created: now - 2 * MIN, spec: { nodeName: 'node2' }, status: { phase: 'Pending' } });
    assert.equal(
      printPodTable([web, other], now, { namespace: true, node: true }),
      [
        'NAMESPACE   NAME        READY   STATUS    RESTARTS   AGE   NODE',
        'default     web-node1   1/1     Running   0          5m    node1',
        'default     db          0/1     Pending   0          2m    node2',
        '',
      ].join('\n'),
    );
    assert.equal(printPodTable([web], now, { wide: true, node: true }).split('\n')[0], 'NAME        READY   STATUS    RESTARTS   AGE   IP           NODE    NOMINATED NODE   READINESS GATES');
  });

  it('--no-headers, and the minimal column width of 6', () => {
    assert.equal(printPodTable([pod({ name: 'a', created: now - 5 * S, status: { phase: 'Pending' } })], now, { noHeaders: true }), 'a     0/1   Pending   0     5s\n');
  });

  it('a pod without a creation time has an <unknown> age; no pods print nothing', () => {
    const created = pod({ status: { phase: 'Pending' } });
    const { creationTimestamp: _created, ...metadata } = created.metadata;
    const p: Pod = { ...created, metadata };
    assert.match(printPodTable([p], now, {}), /Pending {3}0 {10}<unknown>\n$/);
    assert.equal(printPodTable([], now, {}), '');
  });
});
