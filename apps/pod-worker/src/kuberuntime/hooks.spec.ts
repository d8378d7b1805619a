import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { FakeClock } from '@app/clock/testing';
import type { Container, LifecycleHandler, Pod } from '@app/contracts';
import { RecordingEventRecorder } from '@app/contracts/testing';
import { FakeCri } from '@app/cri/testing';
import type { RuntimeContainerStatus, RuntimePodStatus } from '@app/kube';
import { silentLogger } from '@app/observability';
import { HTTP_RESPONSE_TO_HTTPS_CLIENT } from '@app/probe';
import { FakeHttpClient } from '@app/probe/testing';
import { CriHookRunner } from '../adapters/cri-hook-runner.js';
import { CrashLoopBackOff } from './backoff.js';
import { ImagePuller } from '../images/image-puller.js';
import { RuntimeManager } from './runtime-manager.js';
import type { NodeFacts } from './runtime-config.js';
import { HookRunner } from '../ports.js';

// With a cluster DNS, so that the only warnings are the hooks' (no MissingClusterDNS).
const node: NodeFacts = { nodeName: 'node-1', hostIP: '192.168.1.2', logRoot: '/var/log/pods', podRoot: '/var/lib/kubelet/pods', hostDns: { servers: [], searches: [], options: [] }, clusterDns: ['10.96.0.10'] };

function podWith(lifecycle: Container['lifecycle'], o: { hostNetwork?: boolean } = {}): Pod {
  return {
    metadata: { name: 'web', namespace: 'default', uid: 'uid-1' },
    spec: { containers: [{ name: 'app', image: 'nginx:1', ports: [{ name: 'http', containerPort: 8080 }], ...(lifecycle ? { lifecycle } : {}) }], ...(o.hostNetwork ? { hostNetwork: true } : {}) },
  };
}

describe('CriHookRunner: which IP an httpGet hook without a host goes to', () => {
  const cases: { name: string; hostNetwork?: boolean; podIPs: string[]; sandboxIP?: string; wantUrl?: string; wantFailure?: RegExp }[] = [
    { name: 'the pod IP it is handed (postStart)', podIPs: ['10.0.0.5', 'fd00::5'], wantUrl: 'http://10.0.0.5:8080/hook' },
    { name: 'the node IP for a hostNetwork pod', hostNetwork: true, podIPs: [], wantUrl: 'http://192.168.1.2:8080/hook' },
    { name: "no IPs handed (preStop): the ready sandbox's IP", podIPs: [], sandboxIP: '10.0.0.7', wantUrl: 'http://10.0.0.7:8080/hook' },
    { name: 'an IPv6 sandbox IP in brackets', podIPs: [], sandboxIP: 'fd00::7', wantUrl: 'http://[fd00::7]:8080/hook' },
    { name: 'no sandbox: the hook fails, nothing is sent', podIPs: [], wantFailure: /failed to find networking container/ },
  ];
  for (const tc of cases) {
    it(tc.name, async () => {
      const cri = new FakeCri()
        .onRuntime('ListPodSandbox', () => ({ items: tc.sandboxIP ? [{ id: 'sb-1' }] : [] }) as never)
        .onRuntime('PodSandboxStatus', () => ({ status: { network: { ip: tc.sandboxIP ?? '' } } }) as never);
      const http = new FakeHttpClient();
      const pod = podWith(undefined, tc.hostNetwork ? { hostNetwork: true } : {});
      const failure = await new CriHookRunner(cri, node.hostIP, new FakeClock(), { http }).run(pod, pod.spec.containers[0] as Container, 'abc', { httpGet: { port: 'http', path: '/hook' } }, tc.podIPs, 30);
      if (tc.wantFailure) assert.match(failure ?? '', tc.wantFailure);
      else assert.equal(failure, undefined);
      assert.deepEqual(
        http.requests.map((r) => r.url.href),
        tc.wantUrl ? [tc.wantUrl] : [],
      );
      if (tc.wantUrl) assert.equal(http.requests[0]?.headers['User-Agent'], 'kube-lifecycle/1.34');
    });
  }

  it('exec goes through ExecSync; a tcpSocket hook is refused without a dial', async () => {
    const cri = new FakeCri().onRuntime('ExecSync', () => ({ stdout: '', stderr: Buffer.from('nope').toString('base64'), exitCode: 1 }));
    const pod = podWith(undefined);
    const runner = new CriHookRunner(cri, node.hostIP, new FakeClock(), { http: new FakeHttpClient() });
    const c = pod.spec.containers[0] as Container;
    assert.match((await runner.run(pod, c, 'abc', { exec: { command: ['false'] } }, [], 5)) ?? '', /^Exec lifecycle hook \(\[false\]\) for Container "app" in Pod "web_default\(uid-1\)" failed - error: command 'false' exited with 1: nope, message: "nope"$/);
    assert.deepEqual(cri.callsOf('ExecSync'), [{ containerId: 'abc', cmd: ['false'], timeout: '5' }]);
    assert.match((await runner.run(pod, c, 'abc', { tcpSocket: { port: 8080 } }, ['10.0.0.5'], 5)) ?? '', /^Cannot run handler: invalid handler: /);
  });
});

describe('CriHookRunner: an HTTPS hook that an HTTP server answers', () => {
  it('succeeds over HTTP and records a LifecycleHTTPFallback warning on the pod', async () => {
    const events = new Events();
    const http = new FakeHttpClient().answer({ error: 'EPROTO', message: HTTP_RESPONSE_TO_HTTPS_CLIENT }, { status: 200 });
    const pod = podWith(undefined);
    const runner = new CriHookRunner(new FakeCri(), node.hostIP, new FakeClock(), { http, events });
    assert.equal(await runner.run(pod, pod.spec.containers[0] as Container, 'abc', { httpGet: { port: 8443, scheme: 'HTTPS' } }, ['10.0.0.5'], 30), undefined);
    assert.deepEqual(events.seen, [{ type: 'Warning', reason: 'LifecycleHTTPFallback', message: 'request to HTTPS lifecycle hook 10.0.0.5:8443 got HTTP response, retry with HTTP succeeded' }]);
  });
});

/** A HookRunner answering with a failure that carries the hook's output, as a secret would be. */
class FailingHooks extends HookRunner {
  readonly runs: LifecycleHandler[] = [];
  constructor(private readonly message: string | undefined) {
    super();
  }
  run(_pod: Pod, _c: Container, _id: string, handler: LifecycleHandler): Promise<string | undefined> {
    this.runs.push(handler);
    return Promise.resolve(this.message);
  }
}

class Events extends RecordingEventRecorder {
  get seen(): { type: string; reason: string; message: string }[] {
    return this.events.map(({ type, reason, message }) => ({ type, reason, message }));
  }
}

const SECRET_MESSAGE = 'Exec lifecycle hook ([cat /secret]) for Container "app" in Pod "web_default(uid-1)" failed - error: command \'cat /secret\' exited with 1: , message: "password=hunter2"';

function runtimeManager(hooks: HookRunner) {
  const cri = new FakeCri()
    .onRuntime('RunPodSandbox', () => ({ podSandboxId: 'sb-1' }))
    .onRuntime('PodSandboxStatus', () => ({ status: { network: { ip: '10.0.0.5' } } }) as never)
    .onRuntime('ListPodSandbox', () => ({ items: [] }))
    .onRuntime('ListContainers', () => ({ containers: [] }))
    .onRuntime('CreateContainer', () => ({ containerId: 'c-1' }))
    .onImage('ImageStatus', () => ({ image: { id: 'sha256:abc' } }) as never);
  const events = new Events();
  const clock = new FakeClock();
  const rm = new RuntimeManager({ cri, images: new ImagePuller({ cri, events, clock, pullBackOff: { initialMs: 10_000, maxMs: 300_000 } }), backOff: new CrashLoopBackOff({ initialMs: 10_000, maxMs: 300_000 }), hooks, events, node, clock, logger: silentLogger() });
  return { rm, cri, events };
}

const emptyStatus: RuntimePodStatus = { uid: 'uid-1', name: 'web', namespace: 'default', ips: [], sandboxStatuses: [], containerStatuses: [], timestamp: 0 };
const noProbes = { liveness: () => undefined, readiness: () => undefined, startup: () => undefined };

describe('RuntimeManager: a failed hook is reported without its output in events', () => {
  it('postStart: FailedPostStartHook "PostStartHook failed", the container killed, PostStartHookError with the message in the status', async () => {
    const hooks = new FailingHooks(SECRET_MESSAGE);
    const { rm, cri, events } = runtimeManager(hooks);
    const result = await rm.syncPod(podWith({ postStart: { exec: { command: ['cat', '/secret'] } } }), emptyStatus, noProbes);
    assert.deepEqual(result.errors.get('app'), { reason: 'PostStartHookError', message: SECRET_MESSAGE });
    assert.deepEqual(
      events.seen.filter((e) => e.type === 'Warning' || e.reason === 'Killing'),
      [
        { type: 'Warning', reason: 'FailedPostStartHook', message: 'PostStartHook failed' },
        { type: 'Normal', reason: 'Killing', message: 'FailedPostStartHook' },
      ],
    );
    assert.ok(!events.seen.some((e) => e.message.includes('hunter2')), 'no event carries the output');
    assert.deepEqual(cri.callsOf('StopContainer'), [{ containerId: 'c-1', timeout: '30' }]);
  });

  it('postStart succeeded: no hook event, no kill', async () => {
    const { rm, cri, events } = runtimeManager(new FailingHooks(undefined));
    const result = await rm.syncPod(podWith({ postStart: { httpGet: { port: 8080 } } }), emptyStatus, noProbes);
    assert.equal(result.errors.size, 0);
    assert.ok(!events.seen.some((e) => e.type === 'Warning'));
    assert.equal(cri.callsOf('StopContainer').length, 0);
  });

  it('preStop: FailedPreStopHook "PreStopHook failed", then the container is stopped', async () => {
    const hooks = new FailingHooks(SECRET_MESSAGE);
    const { rm, cri, events } = runtimeManager(hooks);
    const pod = podWith({ preStop: { exec: { command: ['cat', '/secret'] } } });
    const running: RuntimeContainerStatus = { id: 'c-1', name: 'app', state: 'running', createdAt: 1, startedAt: 1, finishedAt: 0, exitCode: 0, reason: '', message: '', image: 'nginx:1', imageRef: 'sha256:abc', hash: '', restartCount: 0 };
    await rm.killContainer(pod, pod.spec.containers[0], 'c-1', 'app', running, 'Stopping container app', 'other');
    assert.equal(hooks.runs.length, 1);
    assert.deepEqual(events.seen, [
      { type: 'Normal', reason: 'Killing', message: 'Stopping container app' },
      { type: 'Warning', reason: 'FailedPreStopHook', message: 'PreStopHook failed' },
    ]);
    assert.equal(cri.callsOf('StopContainer').length, 1);
  });
});
