/**
 * RuntimeManager.syncPod does the steps of kuberuntime_manager.go SyncPod
 * in upstream's order: (2) kill the pod if its sandbox changed, else (3)
 * kill the containers to kill; (4) create the sandbox; (5) start the new
 * ephemeral containers; (6) start init containers;
 * (8) start the main containers. A recording FakeCri shows the order.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { FakeClock } from '@app/clock/testing';
import type { Container, Pod, PodSpec } from '@app/contracts';
import { RecordingEventRecorder } from '@app/contracts/testing';
import type { ContainerConfig, PodSandboxConfig, PodSandboxStatus } from '@app/cri';
import { CriError } from '@app/cri/client';
import { FakeCri } from '@app/cri/testing';
import { NotLeaderError } from '@app/leader-election';
import type { RuntimeContainerState, RuntimeContainerStatus, RuntimePodStatus } from '@app/kube';
import { runtimeContainerStatus, runtimePodStatus as status, sandboxStatus } from '@app/kube/testing';
import { silentLogger } from '@app/observability';
import { CrashLoopBackOff } from './backoff.js';
import { hashContainer } from './container-hash.js';
import { ImagePuller } from '../images/image-puller.js';
import { RuntimeManager } from './runtime-manager.js';
import type { NodeFacts } from './runtime-config.js';
import { PlegInspections } from '../pleg-inspections.js';
import { FakeHookRunner, FakePodInspector } from '../testing.js';

const IMAGE = 'localhost/kubelet-split/busybox:1.35';
const c = (name: string, extra: Partial<Container> = {}): Container => ({ name, image: IMAGE, ...extra });
const app = c('app');
const web = c('web');
const init1 = c('init1');
const init2 = c('init2');
const sideA = c('sideA', { restartPolicy: 'Always' });

const pod = (spec: Partial<PodSpec>): Pod => ({
  metadata: { name: 'p', namespace: 'default', uid: 'uid-1' },
  spec: { hostNetwork: true, containers: [app], restartPolicy: 'Always', terminationGracePeriodSeconds: 30, ...spec },
});

/** A sandbox in the host's network namespace unless told otherwise, with no IP either way. */
const sandbox = (id: string, o: { ready?: boolean; netns?: 'POD' | 'NODE' } = {}): PodSandboxStatus => sandboxStatus(id, { netns: 'NODE', ip: '', ...o });

const ctr = (spec: Container, state: RuntimeContainerState, extra: Partial<RuntimeContainerStatus> = {}): RuntimeContainerStatus =>
  runtimeContainerStatus(spec.name, state, { id: `${spec.name}-id`, image: IMAGE, hash: hashContainer(spec), ...extra });

const noProbes = { liveness: () => undefined, startup: () => undefined };

/** The calls that change the runtime, in order, as `Method <what>` (reads left out). */
function trace(cri: FakeCri): string[] {
  const reads = new Set(['ImageStatus', 'ListContainers', 'ListPodSandbox', 'PodSandboxStatus']);
  return cri.calls
    .filter((x) => !reads.has(x.method))
    .map((x) => {
      const r = x.request as { containerId?: string; podSandboxId?: string; config?: ContainerConfig };
      if (x.method === 'CreateContainer') return `CreateContainer ${r.config?.metadata?.name ?? ''}`;
      if (x.method === 'RunPodSandbox') return 'RunPodSandbox';
      return `${x.method} ${r.containerId ?? r.podSandboxId ?? ''}`;
    });
}

function setup(nodeFacts: Partial<NodeFacts> = {}) {
  const clock = new FakeClock(1_000_000);
  const events = new RecordingEventRecorder();
  const hooks = new FakeHookRunner();
  const cri = new FakeCri()
    .onImage('ImageStatus', () => ({ image: { id: 'sha256:img' } }) as never)
    .onRuntime('ListPodSandbox', () => ({ items: [] }))
    .onRuntime('ListContainers', () => ({ containers: [] }))
    .onRuntime('RunPodSandbox', () => ({ podSandboxId: 'sb-new' }))
    .onRuntime('PodSandboxStatus', () => ({ info: {} }) as never)
    .onRuntime('CreateContainer', (r) => ({ containerId: `${r.config?.metadata?.name ?? ''}-new` }));
  const images = new ImagePuller({ cri, events, clock, pullBackOff: { initialMs: 10_000, maxMs: 300_000 } });
  const backOff = new CrashLoopBackOff({ initialMs: 10_000, maxMs: 300_000 });
  const node = { nodeName: 'n1', hostIP: '10.0.0.1', logRoot: '/var/log/pods', podRoot: '/var/lib/kubelet/pods', hostDns: { servers: [], searches: [], options: [] }, ...nodeFacts };
  const inspector = new FakePodInspector();
  const inspections = new PlegInspections(inspector);
  const manager = new RuntimeManager({ cri, images, backOff, hooks, events, node, clock, logger: silentLogger(), inspections });
  return { cri, events, hooks, manager, clock, inspections, inspector };
}

describe('RuntimeManager.syncPod: the steps of kuberuntime_manager.go SyncPod, in order', () => {
  const cases: { name: string; pod: Pod; status: RuntimePodStatus; want: string[]; events?: string[] }[] = [
    {
      name: 'a new pod: create the sandbox, then start the first init container only',
      pod: pod({ initContainers: [init1, init2] }),
      status: status([], []),
      want: ['RunPodSandbox', 'CreateContainer init1', 'StartContainer init1-new'],
    },
    {
      name: 'a new pod without init containers: create the sandbox, then start every container in spec order',
      pod: pod({ containers: [app, web] }),
      status: status([], []),
      want: ['RunPodSandbox', 'CreateContainer app', 'StartContainer app-new', 'CreateContainer web', 'StartContainer web-new'],
    },
    {
      name: 'the sandbox changed: kill the pod (containers, then sandbox), purge the old init containers, create a sandbox, start the first init container',
      pod: pod({ initContainers: [init1] }),
      status: status([sandbox('sb1', { netns: 'POD' })], [ctr(init1, 'exited'), ctr(app, 'running')]),
      want: ['StopContainer app-id', 'StopPodSandbox sb1', 'RemoveContainer init1-id', 'RunPodSandbox', 'CreateContainer init1', 'StartContainer init1-new'],
      events: ['Normal/SandboxChanged', 'Normal/Killing'],
    },
    {
      name: 'a container whose spec changed: kill it, then start it again in the same sandbox, the others untouched',
      pod: pod({ containers: [app, web] }),
      status: status([sandbox('sb1')], [ctr(app, 'running'), ctr(web, 'running', { hash: 'stale' })]),
      want: ['StopContainer web-id', 'CreateContainer web', 'StartContainer web-new'],
    },
    {
      name: 'init containers done: the main containers start, no sandbox made',
      pod: pod({ initContainers: [init1], containers: [app, web] }),
      status: status([sandbox('sb1')], [ctr(init1, 'exited')]),
      want: ['CreateContainer app', 'StartContainer app-new', 'CreateContainer web', 'StartContainer web-new'],
    },
    {
      name: 'a sidecar is started in the init step, before any main container',
      pod: pod({ initContainers: [sideA], containers: [app] }),
      status: status([], []),
      want: ['RunPodSandbox', 'CreateContainer sideA', 'StartContainer sideA-new'],
    },
    {
      name: 'a pod whose containers all exited with restartPolicy Never: kill the pod, nothing started',
      pod: pod({ restartPolicy: 'Never' }),
      status: status([sandbox('sb1')], [ctr(app, 'exited')]),
      want: ['StopPodSandbox sb1'],
    },
  ];
  for (const tc of cases) {
    it(tc.name, async () => {
      const { cri, events, manager } = setup();
      await manager.syncPod(tc.pod, tc.status, noProbes);
      assert.deepEqual(trace(cri), tc.want);
      if (tc.events) for (const e of tc.events) assert.ok(events.events.some((x) => `${x.type}/${x.reason}` === e), `${e} in ${events.reasons().join(', ')}`);
    });
  }

  it('the sandbox\'s DNS (GetPodDNS): a ClusterFirst pod on the cluster DNS; without CLUSTER_DNS the node\'s, MissingClusterDNS on the node and the pod', async () => {
    const hostDns = { servers: ['192.0.2.1'], searches: ['example.com'], options: ['edns0'] };
    const sandboxDns = (cri: FakeCri) => (cri.callsOf('RunPodSandbox')[0] as { config: PodSandboxConfig }).config.dnsConfig;
    const p = pod({ hostNetwork: false, dnsPolicy: 'ClusterFirst' });
    const cluster = setup({ hostDns, clusterDns: ['10.96.0.10'], clusterDomain: 'cluster.local' });
    await cluster.manager.syncPod(p, status([], []), noProbes);
    assert.deepEqual(sandboxDns(cluster.cri), { servers: ['10.96.0.10'], searches: ['default.svc.cluster.local', 'svc.cluster.local', 'cluster.local', 'example.com'], options: ['ndots:5'] });
    assert.ok(!cluster.events.reasons().includes('MissingClusterDNS'));
    const missing = setup({ hostDns, clusterDomain: 'cluster.local' });
    await missing.manager.syncPod(p, status([], []), noProbes);
    assert.deepEqual(sandboxDns(missing.cri), hostDns);
    assert.deepEqual(missing.events.events.filter((e) => e.reason === 'MissingClusterDNS').map((e) => [e.uid, e.type]), [['', 'Warning'], ['uid-1', 'Warning']]);
  });

  it('a sandbox config that cannot be made (an FQDN hostname over 64 characters): FailedCreatePodSandBox, no sandbox', async () => {
    const { cri, events, manager } = setup({ clusterDomain: 'cluster.local' });
    const r = await manager.syncPod(pod({ hostNetwork: false, hostname: 'h'.repeat(40), subdomain: 'sub', setHostnameAsFQDN: true }), status([], []), noProbes);
    assert.deepEqual(trace(cri), []);
    assert.equal(r.podError?.reason, 'FailedCreatePodSandBox');
    assert.match(r.podError?.message ?? '', /^Failed to create pod sandbox: failed to construct FQDN/);
    assert.ok(events.events.some((e) => e.type === 'Warning' && e.reason === 'FailedCreatePodSandBox'));
  });

  it('an ephemeral container added to a running pod: created once in the pod\'s sandbox, with stdin and tty, its events at spec.ephemeralContainers', async () => {
    const { cri, events, manager } = setup();
    const p = pod({ ephemeralContainers: [{ name: 'debugger', image: IMAGE, command: ['sh', '-c', 'echo polo'], stdin: true, tty: true }] });
    const r = await manager.syncPod(p, status([sandbox('sb1')], [ctr(app, 'running')]), noProbes);
    assert.deepEqual(trace(cri), ['CreateContainer debugger', 'StartContainer debugger-new']);
    assert.equal(r.startedContainers, 1);
    const create = cri.calls.find((x) => x.method === 'CreateContainer')?.request as { podSandboxId: string; config: ContainerConfig };
    assert.equal(create.podSandboxId, 'sb1');
    assert.equal(create.config.stdin, true);
    assert.equal(create.config.tty, true);
    assert.deepEqual(create.config.command, ['sh', '-c', 'echo polo']);
    assert.equal(create.config.linux?.securityContext?.namespaceOptions?.pid, 'CONTAINER', 'no target: its own process namespace');
    assert.ok(events.events.some((e) => e.reason === 'Started' && e.fieldPath === 'spec.ephemeralContainers{debugger}'), JSON.stringify(events.events));
    // It ran and exited: never started again.
    cri.calls.length = 0;
    await manager.syncPod(p, status([sandbox('sb1')], [ctr(app, 'running'), runtimeContainerStatus('debugger', 'exited', { id: 'debugger-new', exitCode: 0 })]), noProbes);
    assert.deepEqual(trace(cri), []);
  });

  it('an ephemeral container with a targetContainerName shares the target\'s process namespace (pid TARGET, its runtime ID)', async () => {
    const { cri, manager } = setup();
    const p = pod({ ephemeralContainers: [{ name: 'debugger', image: IMAGE, targetContainerName: 'app' }] });
    await manager.syncPod(p, status([sandbox('sb1')], [ctr(app, 'running')]), noProbes);
    const create = cri.calls.find((x) => x.method === 'CreateContainer')?.request as { config: ContainerConfig };
    assert.deepEqual(
      { pid: create.config.linux?.securityContext?.namespaceOptions?.pid, targetId: create.config.linux?.securityContext?.namespaceOptions?.targetId },
      { pid: 'TARGET', targetId: 'app-id' },
    );
  });

  it('an ephemeral container whose target does not exist: CreateContainerConfigError, nothing created', async () => {
    const { cri, manager } = setup();
    const p = pod({ ephemeralContainers: [{ name: 'debugger', image: IMAGE, targetContainerName: 'nope' }] });
    const r = await manager.syncPod(p, status([sandbox('sb1')], [ctr(app, 'running')]), noProbes);
    assert.equal(r.errors.get('debugger')?.reason, 'CreateContainerConfigError');
    assert.match(r.errors.get('debugger')?.message ?? '', /unable to find target container nope/);
    assert.deepEqual(trace(cri), []);
  });

  it('the sandbox cannot be created: no container is created, the pod error says why', async () => {
    const { cri, events, manager } = setup();
    cri.failNext('runtime', 'RunPodSandbox', 'Unknown', 'failed to setup network');
    const r = await manager.syncPod(pod({ initContainers: [init1] }), status([], []), noProbes);
    assert.deepEqual(trace(cri), ['RunPodSandbox']);
    assert.equal(r.podError?.reason, 'FailedCreatePodSandBox');
    assert.match(r.podError?.message ?? '', /failed to setup network/);
    assert.ok(events.events.some((e) => e.type === 'Warning' && e.reason === 'FailedCreatePodSandBox'));
  });

  it('killing the pod fails: no sandbox is created (the sync fails)', async () => {
    const { cri, manager } = setup();
    cri.failNext('runtime', 'StopContainer', 'Unknown', 'runtime is stuck');
    await assert.rejects(manager.syncPod(pod({}), status([sandbox('sb1', { netns: 'POD' })], [ctr(app, 'running')]), noProbes), /failed to kill pod: app: .*runtime is stuck/);
    assert.ok(!trace(cri).includes('RunPodSandbox'), trace(cri).join(', '));
  });

  it(
    'killing a container to kill fails: nothing is started in this sync (upstream returns)',
    async () => {
      const { cri, manager } = setup();
      cri.failNext('runtime', 'StopContainer', 'Unknown', 'runtime is stuck');
      const r = await manager.syncPod(pod({ containers: [app, web] }), status([sandbox('sb1')], [ctr(app, 'running'), ctr(web, 'running', { hash: 'stale' })]), noProbes);
      assert.equal(r.errors.get('web')?.reason, 'KillContainerError');
      assert.deepEqual(trace(cri), ['StopContainer web-id']);
    },
  );

  it('a classic init container that fails to start stops the sync: the next one is not tried', async () => {
    const { cri, manager } = setup();
    cri.failNext('runtime', 'CreateContainer', 'Unknown', 'no space left');
    const r = await manager.syncPod(pod({ initContainers: [init1, init2] }), status([], []), noProbes);
    assert.deepEqual(trace(cri), ['RunPodSandbox', 'CreateContainer init1']);
    assert.equal(r.errors.get('init1')?.reason, 'CreateContainerError');
    assert.equal(r.startedContainers, 0);
  });

  it('a main container that fails to start does not keep the next one from starting', async () => {
    const { cri, manager } = setup();
    cri.failNext('runtime', 'StartContainer', 'Unknown', 'exec format error');
    const r = await manager.syncPod(pod({ containers: [app, web] }), status([sandbox('sb1')], []), noProbes);
    assert.deepEqual(trace(cri), ['CreateContainer app', 'StartContainer app-new', 'CreateContainer web', 'StartContainer web-new']);
    assert.equal(r.errors.get('app')?.reason, 'RunContainerError');
    assert.equal(r.startedContainers, 1);
  });

  it('a sidecar that crashed before a sync saw it run: the main container starts beside it, and its back-off never holds the main container back', async () => {
    const { cri, manager, clock } = setup();
    const crashed = (restartCount: number) => ctr(sideA, 'exited', { exitCode: 1, restartCount, startedAt: clock.now() - 4_000, finishedAt: clock.now() - 100 });
    const p = pod({ initContainers: [sideA], containers: [app] });
    // Its first crash: restarted at once, and the main container started in the same sync.
    const first = await manager.syncPod(p, status([sandbox('sb1')], [crashed(0)]), noProbes);
    assert.deepEqual(trace(cri), ['CreateContainer sideA', 'StartContainer sideA-new', 'CreateContainer app', 'StartContainer app-new']);
    assert.equal(first.errors.size, 0);
    // Its second crash, 5s later (the runtime view does not show the main container yet): the sidecar waits for its back-off, the main container does not.
    await clock.step(5_000);
    cri.calls.length = 0;
    const second = await manager.syncPod(p, status([sandbox('sb1')], [crashed(1)]), noProbes);
    assert.equal(second.errors.get('sideA')?.reason, 'CrashLoopBackOff');
    assert.ok((second.errors.get('sideA')?.retryAfterMs ?? 0) > 0, 'a requeue for when its back-off ends');
    assert.deepEqual(trace(cri), ['CreateContainer app', 'StartContainer app-new']);
  });

  it('a container with a preStop hook: the hook runs before StopContainer', async () => {
    const { cri, hooks, manager } = setup();
    const withHook = c('web', { lifecycle: { preStop: { exec: { command: ['true'] } } } });
    const p = pod({ containers: [app, withHook] });
    let stopsBeforeHook = -1;
    cri.onRuntime('StopContainer', () => {
      stopsBeforeHook = hooks.runs.length;
      return {};
    });
    await manager.syncPod(p, status([sandbox('sb1')], [ctr(app, 'running'), ctr(withHook, 'running', { hash: 'stale' })]), noProbes);
    assert.deepEqual(hooks.runs, ['web web-id']);
    assert.equal(stopsBeforeHook, 1, 'StopContainer came after the hook ran');
  });
});

describe('RuntimeManager: killPod and a runtime that no longer has what the status named', () => {
  const cases: { name: string; code: 'NotFound' | 'Unavailable'; fails: boolean }[] = [
    { name: 'a sandbox gone meanwhile (containerd 1.6 answers NotFound, 2 answers OK): the pod is killed', code: 'NotFound', fails: false },
    { name: 'a runtime that does not answer: the kill fails, to be retried', code: 'Unavailable', fails: true },
  ];
  for (const tc of cases) {
    it(tc.name, async () => {
      const { cri, manager } = setup();
      cri.onRuntime('StopPodSandbox', () => {
        throw new CriError(tc.code, `sandbox sb1: ${tc.code}`);
      });
      const kill = manager.killPod(pod({}), status([sandbox('sb1')], [ctr(app, 'running')]), undefined);
      if (tc.fails) await assert.rejects(kill, /failed to kill pod: sandbox sb1: Unavailable/);
      else await kill;
      assert.deepEqual(trace(cri), ['StopContainer app-id', 'StopPodSandbox sb1']);
    });
  }
});

describe('RuntimeManager: the pods a sync changes in the runtime are marked for the PLEG to inspect as the sync ends', () => {
  const cases: { name: string; run: (m: RuntimeManager) => Promise<unknown>; changed: boolean }[] = [
    { name: 'a new pod: a sandbox run and a container started', run: (m) => m.syncPod(pod({}), status([], []), noProbes), changed: true },
    { name: 'everything runs as specified: nothing done', run: (m) => m.syncPod(pod({}), status([sandbox('sb1')], [ctr(app, 'running')]), noProbes), changed: false },
    { name: 'a container whose spec changed: stopped and started again', run: (m) => m.syncPod(pod({}), status([sandbox('sb1')], [ctr(app, 'running', { hash: 'stale' })]), noProbes), changed: true },
    { name: 'a container that exited, restarted (Always)', run: (m) => m.syncPod(pod({}), status([sandbox('sb1')], [ctr(app, 'exited', { exitCode: 0 })]), noProbes), changed: true },
    { name: 'killPod: containers and sandbox stopped', run: (m) => m.killPod(pod({}), status([sandbox('sb1')], [ctr(app, 'running')]), undefined), changed: true },
    { name: 'killPod of a pod with nothing left running', run: (m) => m.killPod(pod({}), status([sandbox('sb1', { ready: false })], [ctr(app, 'exited')]), undefined), changed: false },
  ];
  for (const tc of cases) {
    it(`${tc.name}: ${tc.changed ? 'marked' : 'not marked'}`, async () => {
      const { manager, inspections, inspector } = setup();
      await tc.run(manager);
      assert.equal(inspections.syncEnded('uid-1', 1_000_000), tc.changed);
      assert.deepEqual(inspector.asked, tc.changed ? [{ uid: 'uid-1', syncEnd: 1_000_000 }] : []);
    });
  }

  it('a sandbox that cannot be created still counts: RunPodSandbox may have left something', async () => {
    const { cri, manager, inspections } = setup();
    cri.failNext('runtime', 'RunPodSandbox', 'Unknown');
    await manager.syncPod(pod({}), status([], []), noProbes);
    assert.equal(inspections.syncEnded('uid-1', 1), true);
  });
});

describe('RuntimeManager.killPod: sidecars after the main containers, in reverse order (killContainersWithSyncResult, terminationOrdering)', () => {
  const sideB = c('sideB', { restartPolicy: 'Always' });
  const withSidecars = pod({ initContainers: [sideA, init1, sideB], containers: [app, web] });
  const allRunning = status([sandbox('sb1')], [ctr(sideA, 'running'), ctr(sideB, 'running'), ctr(app, 'running'), ctr(web, 'running')]);

  /** StopContainer of each container answered when the test says so; the calls as `<id> <timeout>`. */
  function heldStops(cri: FakeCri) {
    const release = new Map<string, () => void>();
    const stops: string[] = [];
    cri.onRuntime('StopContainer', (r) => {
      stops.push(`${r.containerId} ${r.timeout}`);
      return new Promise((resolve) => release.set(r.containerId ?? '', () => resolve({})));
    });
    const flush = async () => {
      for (let i = 0; i < 10; i++) await new Promise<void>((r) => setImmediate(r));
    };
    return { stops, release: async (id: string) => (release.get(id)?.(), await flush()), flush };
  }

  it('the main containers are stopped at once; sideB once both exited, with what is left of 30s; sideA once sideB exited', async () => {
    const { cri, clock, manager } = setup();
    const { stops, release, flush } = heldStops(cri);
    const kill = manager.killPod(withSidecars, allRunning, 30);
    await flush();
    assert.deepEqual([...stops].sort(), ['app-id 30', 'web-id 30'], 'only the main containers, with the whole grace period');
    await clock.step(3_000);
    await release('app-id');
    assert.deepEqual([...stops].sort(), ['app-id 30', 'web-id 30'], 'web still runs: no sidecar is stopped');
    await clock.step(2_500);
    await release('web-id');
    assert.deepEqual(stops.slice(2), ['sideB-id 25'], 'sideB waited 5.5s: 30 - 5 (whole seconds) left');
    await clock.step(1_000);
    await release('sideB-id');
    assert.deepEqual(stops.slice(3), ['sideA-id 24'], 'sideA waited 6.5s for web and sideB');
    await release('sideA-id');
    await kill;
    assert.deepEqual(trace(cri).slice(-1), ['StopPodSandbox sb1'], 'the sandbox after every container');
  });

  it('a main container that does not exit: the sidecars are stopped when the grace period is up, with the 2s minimum', async () => {
    const { cri, clock, manager } = setup();
    const { stops, release, flush } = heldStops(cri);
    const kill = manager.killPod(withSidecars, allRunning, 10);
    await flush();
    await release('web-id');
    await clock.step(9_999);
    assert.deepEqual([...stops].sort(), ['app-id 10', 'web-id 10'], 'the sidecars wait while app runs');
    await clock.step(1);
    assert.deepEqual(stops.slice(2).sort(), ['sideA-id 2', 'sideB-id 2'], 'both at 10s: each waited its grace period out');
    for (const id of ['app-id', 'sideA-id', 'sideB-id']) await release(id);
    await kill;
  });

  it('preStop hooks run at once, the sidecars\' too; a sidecar waits with what its hook left', async () => {
    const { cri, clock, hooks, manager } = setup();
    const { stops, release, flush } = heldStops(cri);
    const sideWithHook = c('sideA', { restartPolicy: 'Always', lifecycle: { preStop: { exec: { command: ['sleep', '4'] } } } });
    let hookDone = () => undefined as void;
    hooks.hold = new Promise<void>((r) => (hookDone = r));
    const p = pod({ initContainers: [sideWithHook], containers: [app] });
    const kill = manager.killPod(p, status([sandbox('sb1')], [ctr(sideWithHook, 'running'), ctr(app, 'running')]), 30);
    await flush();
    assert.deepEqual(hooks.runs, ['sideA sideA-id'], 'the sidecar\'s preStop hook runs while app stops');
    assert.deepEqual(stops, ['app-id 30']);
    await clock.step(4_000);
    hookDone();
    await flush();
    await clock.step(3_000);
    await release('app-id');
    assert.deepEqual(stops.slice(1), ['sideA-id 23'], '30 - 4 for the hook - 3 waiting for app');
    await release('sideA-id');
    await kill;
  });

  /** As heldStops, but StopContainer of `failing` fails with `err`. */
  function failingStop(cri: FakeCri, failing: string, err: Error) {
    const held = heldStops(cri);
    const release = new Map<string, () => void>();
    cri.onRuntime('StopContainer', (r) => {
      held.stops.push(`${r.containerId} ${r.timeout}`);
      if (r.containerId === failing) throw err;
      return new Promise((resolve) => release.set(r.containerId ?? '', () => resolve({})));
    });
    return { ...held, release: async (id: string) => (release.get(id)?.(), await held.flush()) };
  }

  it('a main container\'s StopContainer refused by the shard\'s fence (NotLeaderError): the sidecars stop waiting at once, are not stopped, and killPod fails with the refusal', async () => {
    const { cri, manager } = setup();
    const refusal = new NotLeaderError('call StopContainer for pod uid-1', 'the owner of pod-worker shard 0');
    const { stops, release, flush } = failingStop(cri, 'app-id', refusal);
    let outcome: unknown = 'pending';
    const kill = manager.killPod(withSidecars, allRunning, 30).then(
      () => (outcome = 'resolved'),
      (e: unknown) => (outcome = e),
    );
    await flush();
    await release('web-id');
    assert.equal(outcome, refusal, 'failed at once with the refusal itself, no fake time passed');
    assert.deepEqual([...stops].sort(), ['app-id 30', 'web-id 30'], 'no sidecar\'s StopContainer was tried');
    assert.ok(!trace(cri).some((t) => t.startsWith('StopPodSandbox')), 'nor the sandbox\'s: the kill is the new owner\'s now');
    await kill;
  });

  it('a main container\'s StopContainer that fails otherwise: it is not done, the sidecars wait out their grace period (as upstream)', async () => {
    const { cri, clock, manager } = setup();
    const { stops, release, flush } = failingStop(cri, 'app-id', new CriError('Unknown', 'containerd said no'));
    const failed = assert.rejects(manager.killPod(withSidecars, allRunning, 10), /app: Unknown: containerd said no/);
    await flush();
    await release('web-id');
    await clock.step(9_999);
    assert.deepEqual([...stops].sort(), ['app-id 10', 'web-id 10'], 'the sidecars still wait');
    await clock.step(1);
    assert.deepEqual(stops.slice(2).sort(), ['sideA-id 2', 'sideB-id 2']);
    for (const id of ['sideA-id', 'sideB-id']) await release(id);
    await failed;
  });

  it('a pod without sidecars stops everything at once (no ordering)', async () => {
    const { cri, manager } = setup();
    const { stops, release, flush } = heldStops(cri);
    const kill = manager.killPod(pod({ initContainers: [init1], containers: [app, web] }), status([sandbox('sb1')], [ctr(init1, 'running'), ctr(app, 'running'), ctr(web, 'running')]), 30);
    await flush();
    assert.deepEqual(stops.sort(), ['app-id 30', 'init1-id 30', 'web-id 30']);
    for (const id of ['app-id', 'init1-id', 'web-id']) await release(id);
    await kill;
  });
});
