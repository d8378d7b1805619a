import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { EventMessage, Pod } from '@app/contracts';
import { MessageTypes } from '@app/contracts';
import { describePod, describeProbe } from './describe.js';
import { at, cond, initSpec, MIN, pod, running, S, T0, waiting } from './testing.js';

describe('describe pod: describePod', () => {
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
