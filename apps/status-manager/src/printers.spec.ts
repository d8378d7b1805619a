import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { ContainerStatus, EventMessage, Pod, PodCondition, PodSpec, PodStatus } from '@app/contracts';
import { MessageTypes } from '@app/contracts';
import { describePod, describeProbe, formatAge, podReadyColumn, podRestartsColumn, podStatusColumn, printPodTable, tabwrite } from './printers.js';

const S = 1000;
const MIN = 60 * S;
const H = 60 * MIN;
const D = 24 * H;
const T0 = 1_700_000_000_000; // Tue, 14 Nov 2023 22:13:20 UTC
const at = (ms: number): string => new Date(ms).toISOString().replace('.000Z', 'Z');

const running = (name: string, o: Partial<ContainerStatus> = {}): ContainerStatus => ({
  name,
  state: { running: { startedAt: at(T0) } },
  ready: true,
  restartCount: 0,
  image: 'localhost/kubelet-split/busybox:1.35',
  imageID: 'sha256:b',
  containerID: `containerd://${name}-id`,
  started: true,
  ...o,
});
const waiting = (name: string, reason?: string, o: Partial<ContainerStatus> = {}): ContainerStatus => ({
  ...running(name),
  state: { waiting: reason ? { reason } : {} },
  ready: false,
  started: false,
  ...o,
});
const terminated = (name: string, exitCode: number, reason?: string, o: Partial<ContainerStatus> = {}): ContainerStatus => ({
  ...running(name),
  state: { terminated: { exitCode, ...(reason ? { reason } : {}), startedAt: at(T0), finishedAt: at(T0 + S) } },
  ready: false,
  started: false,
  ...o,
});
const cond = (type: string, status: PodCondition['status'], reason?: string): PodCondition => ({ type, status, ...(reason ? { reason } : {}) });

function pod(o: { spec?: Partial<PodSpec>; status?: PodStatus; deletionTimestamp?: string; name?: string; created?: number } = {}): Pod {
  return {
    metadata: {
      name: o.name ?? 'web-node1',
      namespace: 'default',
      uid: 'uid-1',
      creationTimestamp: at(o.created ?? T0),
      ...(o.deletionTimestamp ? { deletionTimestamp: o.deletionTimestamp } : {}),
    },
    spec: { containers: [{ name: 'app', image: 'localhost/kubelet-split/busybox:1.35' }], restartPolicy: 'Always', nodeName: 'node1', ...o.spec },
    ...(o.status ? { status: o.status } : {}),
  };
}

const initSpec = (...names: string[]): Partial<PodSpec> => ({ initContainers: names.map((name) => ({ name, image: 'busybox' })) });
const sidecarSpec: Partial<PodSpec> = { initContainers: [{ name: 'side', image: 'busybox', restartPolicy: 'Always' }] };

describe('printers: the STATUS column', () => {
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

describe('printers: the READY column', () => {
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

describe('printers: the RESTARTS column', () => {
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

describe('printers: formatAge (duration.HumanDuration)', () => {
  const cases: [number, string][] = [
    [-2 * S, '<invalid>'],
    [-1500, '0s'],
    [0, '0s'],
    [999, '0s'],
    [5 * S, '5s'],
    [119 * S, '119s'],
    [120 * S, '2m'],
    [200 * S, '3m20s'],
    [9 * MIN + 59 * S, '9m59s'],
    [10 * MIN + 30 * S, '10m'],
    [179 * MIN, '179m'],
    [3 * H, '3h'],
    [5 * H + 30 * MIN, '5h30m'],
    [7 * H + 59 * MIN, '7h59m'],
    [8 * H + 30 * MIN, '8h'],
    [47 * H, '47h'],
    [48 * H, '2d'],
    [51 * H, '2d3h'],
    [7 * D + 23 * H, '7d23h'],
    [8 * D, '8d'],
    [45 * D, '45d'],
    [729 * D, '729d'],
    [730 * D, '2y'],
    [760 * D, '2y30d'],
    [9 * 365 * D, '9y'],
  ];
  for (const [ms, want] of cases) {
    it(`${ms}ms is ${want}`, () => assert.equal(formatAge(ms), want));
  }
});

describe('printers: tabwrite (text/tabwriter)', () => {
  const cases: { name: string; text: string; minWidth: number; padding: number; want: string }[] = [
    { name: 'columns padded to the widest cell', text: 'a\tbb\tc\nccc\td\te\n', minWidth: 0, padding: 2, want: 'a    bb  c\nccc  d   e\n' },
    { name: 'the minimal width', text: 'a\tb\n', minWidth: 6, padding: 3, want: 'a     b\n' },
    { name: 'a line without a tab ends the block', text: 'Name:\tx\nContainers:\nImage ID:\ty\n', minWidth: 0, padding: 2, want: 'Name:  x\nContainers:\nImage ID:  y\n' },
    { name: 'lines with fewer cells split the inner column', text: 'a\tb\tc\naaaa\tb\nx\tbbbbb\tc\n', minWidth: 0, padding: 1, want: 'a    b c\naaaa b\nx    bbbbb c\n' },
    { name: 'an empty leading cell is padded too', text: 'Labels:\ta=b\n\tc=d\n', minWidth: 0, padding: 2, want: 'Labels:  a=b\n         c=d\n' },
    { name: 'width counts characters, not bytes', text: 'é\tx\nab\ty\n', minWidth: 0, padding: 1, want: 'é  x\nab y\n' },
  ];
  for (const tc of cases) {
    it(tc.name, () => assert.equal(tabwrite(tc.text, { minWidth: tc.minWidth, padding: tc.padding }), tc.want));
  }
});

describe('printers: printPodTable', () => {
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

describe('printers: describePod', () => {
  const now = T0 + 10 * MIN;
  const event = (reason: string, message: string, ago: number, eventType: EventMessage['eventType'] = 'Normal'): EventMessage => ({
    type: MessageTypes.event,
    involvedObject: { kind: 'Pod', namespace: 'default', name: 'web-node1', uid: 'uid-1', fieldPath: 'spec.containers{app}' },
    eventType,
    reason,
    message,
    source: { component: 'kubelet', host: 'node1' },
    timestamp: at(now - ago),
  });
  const full = pod({
    spec: {
      containers: [
        {
          name: 'app',
          image: 'localhost/kubelet-split/busybox:1.35',
          command: ['sh', '-c'],
          args: ['httpd -f -p 8080'],
          ports: [{ containerPort: 8080, protocol: 'TCP' }],
          readinessProbe: { httpGet: { path: '/', port: 8080, scheme: 'HTTP' }, timeoutSeconds: 1, periodSeconds: 10, successThreshold: 1, failureThreshold: 3 },
          env: [{ name: 'MODE', value: 'test' }, { name: 'POD_NAME', valueFrom: { fieldRef: { apiVersion: 'v1', fieldPath: 'metadata.name' } } }],
          resources: { limits: { cpu: '100m', memory: '64Mi' }, requests: { cpu: '100m', memory: '64Mi' } },
          volumeMounts: [{ name: 'data', mountPath: '/data' }],
        },
      ],
      volumes: [{ name: 'data', emptyDir: {} }],
      tolerations: [{ operator: 'Exists', effect: 'NoExecute' }],
      priority: 0,
    },
    status: {
      phase: 'Running',
      hostIP: '192.168.1.10',
      podIP: '10.88.77.5',
      podIPs: [{ ip: '10.88.77.5' }],
      startTime: at(T0),
      qosClass: 'Guaranteed',
      conditions: [cond('PodReadyToStartContainers', 'True'), cond('Initialized', 'True'), cond('Ready', 'True'), cond('ContainersReady', 'True'), cond('PodScheduled', 'True')],
      containerStatuses: [running('app', { restartCount: 1, lastState: { terminated: { exitCode: 137, reason: 'Error', startedAt: at(T0 - MIN), finishedAt: at(T0) } } })],
    },
  });
  full.metadata.labels = { app: 'web', tier: 'front' };
  full.metadata.annotations = { 'kubernetes.io/config.source': 'file', 'kubernetes.io/config.hash': 'abc123' };

  // A block of aligned cells runs over every consecutive line with a tab: the
  // volume's lines and QoS Class, Node-Selectors, Tolerations share a column.
  it('the whole layout, as kubectl prints it', () => {
    const want = [
      'Name:         web-node1',
      'Namespace:    default',
      'Priority:     0',
      'Node:         node1/192.168.1.10',
      'Start Time:   Tue, 14 Nov 2023 22:13:20 +0000',
      'Labels:       app=web',
      '              tier=front',
      'Annotations:  kubernetes.io/config.hash: abc123',
      '              kubernetes.io/config.source: file',
      'Status:       Running',
      'IP:           10.88.77.5',
      'IPs:',
      '  IP:  10.88.77.5',
      'Containers:',
      '  app:',
      '    Container ID:  containerd://app-id',
      '    Image:         localhost/kubelet-split/busybox:1.35',
      '    Image ID:      sha256:b',
      '    Port:          8080/TCP',
      '    Host Port:     0/TCP',
      '    Command:',
      '      sh',
      '      -c',
      '    Args:',
      '      httpd -f -p 8080',
      '    State:          Running',
      '      Started:      Tue, 14 Nov 2023 22:13:20 +0000',
      '    Last State:     Terminated',
      '      Reason:       Error',
      '      Exit Code:    137',
      '      Started:      Tue, 14 Nov 2023 22:12:20 +0000',
      '      Finished:     Tue, 14 Nov 2023 22:13:20 +0000',
      '    Ready:          True',
      '    Restart Count:  1',
      '    Limits:',
      '      cpu:     100m',
      '      memory:  64Mi',
      '    Requests:',
      '      cpu:      100m',
      '      memory:   64Mi',
      '    Readiness:  http-get http://:8080/ delay=0s timeout=1s period=10s #success=1 #failure=3',
      '    Environment:',
      '      MODE:      test',
      '      POD_NAME:  web-node1 (v1:metadata.name)',
      '    Mounts:',
      '      /data from data (rw)',
      'Conditions:',
      '  Type                        Status',
      '  PodReadyToStartContainers   True ',
      '  Initialized                 True ',
      '  Ready                       True ',
      '  ContainersReady             True ',
      '  PodScheduled                True ',
      'Volumes:',
      '  data:',
      "    Type:        EmptyDir (a temporary directory that shares a pod's lifetime)",
      '    Medium:      ',
      '    SizeLimit:   <unset>',
      'QoS Class:       Guaranteed',
      'Node-Selectors:  <none>',
      'Tolerations:     :NoExecute op=Exists',
      'Events:',
      '  Type     Reason   Age   From     Message',
      '  ----     ------   ----  ----     -------',
      '  Normal   Pulled   3m    kubelet  Container image "busybox" already present on machine',
      '  Warning  BackOff  25s   kubelet  Back-off restarting failed container app',
      '',
    ].join('\n');
    const events = [event('BackOff', 'Back-off restarting failed container app ', 25 * S, 'Warning'), event('Pulled', 'Container image "busybox" already present on machine', 3 * MIN)];
    assert.equal(describePod(full, events, now), want);
  });

  it('no events, no volumes, a pod being deleted', () => {
    const deleted = pod({ deletionTimestamp: at(now - 40 * S), status: { phase: 'Running', containerStatuses: [running('app')] } });
    const p: Pod = { ...deleted, metadata: { ...deleted.metadata, deletionGracePeriodSeconds: 30 } };
    const out = describePod(p, [], now);
    assert.match(out, /^Status:\s+Terminating \(lasts 40s\)$/m);
    assert.match(out, /^Termination Grace Period:\s+30s$/m);
    assert.match(out, /^IPs:\s+<none>$/m);
    assert.match(out, /^Labels:\s+<none>$/m);
    assert.match(out, /^Volumes:\s+<none>$/m);
    assert.match(out, /^QoS Class:\s+BestEffort$/m);
    assert.match(out, /^Events:\s+<none>\n$/m);
  });

  it('a rejected pod: Reason and Message, no container state', () => {
    const p = pod({ status: { phase: 'Failed', reason: 'OutOfcpu', message: "Pod was rejected: Node didn't have enough resource: cpu" } });
    const out = describePod(p, [], now);
    assert.match(out, /^Status:\s+Failed\nReason:\s+OutOfcpu\nMessage:\s+Pod was rejected: Node didn't have enough resource: cpu$/m);
    assert.doesNotMatch(out, /State:/);
  });

  it('init containers come first, in a section of their own', () => {
    const p = pod({ spec: initSpec('init'), status: { phase: 'Pending', initContainerStatuses: [waiting('init', 'PodInitializing')], containerStatuses: [waiting('app', 'PodInitializing')] } });
    const out = describePod(p, [], now);
    assert.match(out, /Init Containers:\n {2}init:\n(.*\n)*? {4}State:\s+Waiting\n {6}Reason:\s+PodInitializing\n(.*\n)*Containers:\n {2}app:/);
  });

  const probes: { name: string; probe: Parameters<typeof describeProbe>[0]; want: string }[] = [
    { name: 'exec', probe: { exec: { command: ['cat', '/tmp/ok'] }, initialDelaySeconds: 5, timeoutSeconds: 1, periodSeconds: 10, successThreshold: 1, failureThreshold: 3 }, want: 'exec [cat /tmp/ok] delay=5s timeout=1s period=10s #success=1 #failure=3' },
    { name: 'tcp', probe: { tcpSocket: { port: 80 } }, want: 'tcp-socket :80 delay=0s timeout=0s period=0s #success=0 #failure=0' },
    { name: 'http with a host', probe: { httpGet: { host: '10.0.0.1', port: 'http', path: 'healthz', scheme: 'HTTPS' } }, want: 'http-get https://10.0.0.1:http/healthz delay=0s timeout=0s period=0s #success=0 #failure=0' },
    { name: 'grpc', probe: { grpc: { port: 9000 } }, want: 'grpc <pod>:9000  delay=0s timeout=0s period=0s #success=0 #failure=0' },
  ];
  for (const tc of probes) {
    it(`DescribeProbe: ${tc.name}`, () => assert.equal(describeProbe(tc.probe), tc.want));
  }
});
