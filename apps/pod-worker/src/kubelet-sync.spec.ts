/**
 * KubeletSync: the kubelet's SyncPod, SyncTerminatingPod and
 * SyncTerminatedPod (kubelet.go) steps, in upstream's order, seen through
 * what they tell the status manager and the probe manager, the pod's
 * directories, and the CRI calls that change the runtime.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { FakeClock } from '@app/clock/testing';
import type { Container, Pod, PodCacheEntry, PodSpec } from '@app/contracts';
import { RecordingEventRecorder } from '@app/contracts/testing';
import { FakeCri } from '@app/cri/testing';
import { KubeletAnnotations, KubeletLabels } from '@app/kube';
import { silentLogger } from '@app/observability';
import type { CacheResult } from '@app/pod-cache';
import { CrashLoopBackOff } from './kuberuntime/backoff.js';
import { hashContainer } from './kuberuntime/container-hash.js';
import { KubeletSync } from './kubelet-sync.js';
import { ImagePuller } from './images/image-puller.js';
import { RuntimeManager } from './kuberuntime/runtime-manager.js';
import { VolumeMountError } from './volumemanager/volumes.js';
import { PlegInspections } from './pleg-inspections.js';
import { FakeHookRunner, FakePodDirectories, FakePodInspector, FakePodStatusProvider, FakeProbeResults, RecordingOutbox } from './testing.js';

const T0 = Date.UTC(2026, 0, 1, 12);
const IMAGE = 'localhost/kubelet-split/busybox:1.35';
const app: Container = { name: 'app', image: IMAGE };

const pod = (spec: Partial<PodSpec> = {}, meta: Partial<Pod['metadata']> = {}, status?: Pod['status']): Pod => ({
  metadata: { name: 'p', namespace: 'default', uid: 'uid-1', creationTimestamp: new Date(T0 - 60_000).toISOString(), ...meta },
  spec: { hostNetwork: true, containers: [app], restartPolicy: 'Always', terminationGracePeriodSeconds: 30, ...spec },
  ...(status ? { status } : {}),
});

const ns = (ms: number) => String(BigInt(ms) * 1_000_000n);
const sandbox = (id: string) => ({
  id,
  metadata: { name: 'p', namespace: 'default', uid: 'uid-1', attempt: 0 },
  state: 'SANDBOX_READY',
  createdAt: ns(T0 - 50_000),
  network: { ip: '', additionalIps: [] },
  linux: { namespaces: { options: { network: 'NODE', pid: 'CONTAINER', ipc: 'POD', targetId: '' } } },
  labels: {},
  annotations: {},
});
const container = (spec: Container, state: 'CONTAINER_RUNNING' | 'CONTAINER_EXITED', exitCode = 0) => ({
  id: `${spec.name}-id`,
  metadata: { name: spec.name, attempt: 0 },
  state,
  createdAt: ns(T0 - 40_000),
  startedAt: ns(T0 - 39_000),
  finishedAt: state === 'CONTAINER_EXITED' ? ns(T0 - 30_000) : '0',
  exitCode,
  image: { image: IMAGE },
  imageRef: 'sha256:img',
  reason: state === 'CONTAINER_EXITED' ? (exitCode === 0 ? 'Completed' : 'Error') : '',
  message: '',
  labels: { [KubeletLabels.containerName]: spec.name, [KubeletLabels.podUid]: 'uid-1' },
  annotations: { [KubeletAnnotations.containerHash]: hashContainer(spec), [KubeletAnnotations.restartCount]: '0' },
});
const cache = (sandboxes: unknown[], containers: unknown[]): CacheResult => {
  const entry: PodCacheEntry = { uid: 'uid-1', name: 'p', namespace: 'default', timestamp: T0, sandboxStatuses: sandboxes, containerStatuses: containers, ips: [] };
  return { entry, timestamp: T0 };
};
const empty: CacheResult = { timestamp: T0 };

/** The CRI calls that change the runtime go into `log` as `cri <Method> <what>`. */
function recordingCri(log: string[]): FakeCri {
  const id = (r: { containerId?: string; podSandboxId?: string }) => r.containerId ?? r.podSandboxId ?? '';
  return new FakeCri()
    .onImage('ImageStatus', () => ({ image: { id: 'sha256:img' } }) as never)
    .onRuntime('ListPodSandbox', () => ({ items: [] }))
    .onRuntime('ListContainers', () => ({ containers: [] }))
    .onRuntime('PodSandboxStatus', () => ({ info: {} }) as never)
    .onRuntime('RunPodSandbox', () => (log.push('cri RunPodSandbox'), { podSandboxId: 'sb-new' }))
    .onRuntime('CreateContainer', (r) => (log.push(`cri CreateContainer ${r.config?.metadata?.name ?? ''}`), { containerId: `${r.config?.metadata?.name ?? ''}-new` }))
    .onRuntime('StartContainer', (r) => (log.push(`cri StartContainer ${id(r)}`), {}))
    .onRuntime('StopContainer', (r) => (log.push(`cri StopContainer ${id(r)} grace=${r.timeout}`), {}))
    .onRuntime('StopPodSandbox', (r) => (log.push(`cri StopPodSandbox ${id(r)}`), {}))
    .onRuntime('RemovePodSandbox', (r) => (log.push(`cri RemovePodSandbox ${id(r)}`), {}))
    .onRuntime('RemoveContainer', (r) => (log.push(`cri RemoveContainer ${id(r)}`), {}));
}

function setup() {
  const log: string[] = [];
  const clock = new FakeClock(T0);
  const cri = recordingCri(log);
  const events = new RecordingEventRecorder();
  const images = new ImagePuller({ cri, events, clock, pullBackOff: { initialMs: 10_000, maxMs: 300_000 } });
  const node = { nodeName: 'n1', hostIP: '10.0.0.1', logRoot: '/var/log/pods', podRoot: '/var/lib/kubelet/pods', hostDns: { servers: [], searches: [], options: [] } };
  const inspector = new FakePodInspector();
  const inspections = new PlegInspections(inspector);
  const hooks = new FakeHookRunner();
  const runtime = new RuntimeManager({ cri, images, backOff: new CrashLoopBackOff({ initialMs: 10_000, maxMs: 300_000 }), hooks, events, node, clock, logger: silentLogger(), inspections });
  const out = new RecordingOutbox(log);
  const dirs = new FakePodDirectories(log);
  const started: number[] = [];
  const probes = new FakeProbeResults();
  // The status manager keeps what the pod worker sends.
  const statuses = new FakePodStatusProvider(out);
  const sync = new KubeletSync({ runtime, cri, dirs, out, probes, statuses, clock, logger: silentLogger(), hostIP: '10.0.0.1', observePodStart: (s) => void started.push(s), events });
  return { log, clock, cri, out, sync, started, probes, statuses, events, dirs, inspections, hooks };
}

describe('KubeletSync.syncPod (kubelet.go SyncPod)', () => {
  it('a new pod: status first, then the pod directories, the probe manager, and the runtime sync', async () => {
    const { log, sync } = setup();
    const r = await sync.syncPod('SyncPodCreate', pod(), empty);
    assert.deepEqual(r, { terminal: false });
    assert.deepEqual(log, ['status SetPodStatus Pending', 'dirs ensure uid-1', 'prober AddPod', 'cri RunPodSandbox', 'cri CreateContainer app', 'cri StartContainer app-new']);
  });

  it('a running pod: Running is reported, its start measured once from the time the kubelet first saw it', async () => {
    const { out, sync, started } = setup();
    const p = pod({}, { annotations: { 'kubernetes.io/config.seen': new Date(T0 - 5000).toISOString() } });
    const c = cache([sandbox('sb1')], [container(app, 'CONTAINER_RUNNING')]);
    await sync.syncPod('SyncPodSync', p, c);
    await sync.syncPod('SyncPodSync', p, c);
    assert.equal(out.last?.phase, 'Running');
    assert.deepEqual(started, [5], 'kubelet_pod_start_duration_seconds, observed once');
  });

  const terminal: { name: string; pod: Pod; cache: CacheResult; phase: string; reason?: string }[] = [
    { name: 'restartPolicy Never, its container exited 0: Succeeded', pod: pod({ restartPolicy: 'Never' }), cache: cache([sandbox('sb1')], [container(app, 'CONTAINER_EXITED', 0)]), phase: 'Succeeded' },
    { name: 'restartPolicy Never, its container exited 1: Failed', pod: pod({ restartPolicy: 'Never' }), cache: cache([sandbox('sb1')], [container(app, 'CONTAINER_EXITED', 1)]), phase: 'Failed' },
    {
      name: 'past activeDeadlineSeconds: Failed with DeadlineExceeded',
      pod: pod({ activeDeadlineSeconds: 10 }, {}, { phase: 'Running', startTime: new Date(T0 - 11_000).toISOString() }),
      cache: cache([sandbox('sb1')], [container(app, 'CONTAINER_RUNNING')]),
      phase: 'Failed',
      reason: 'DeadlineExceeded',
    },
  ];
  for (const tc of terminal) {
    it(`a terminal pod is reported and handed back to terminate, the runtime untouched: ${tc.name}`, async () => {
      const { log, sync } = setup();
      const r = await sync.syncPod('SyncPodSync', tc.pod, tc.cache);
      assert.deepEqual(r, { terminal: true });
      assert.deepEqual(log, [`status SetPodStatus ${tc.phase}${tc.reason ? `/${tc.reason}` : ''}`]);
    });
  }

  it('once failed for its deadline, a pod stays DeadlineExceeded in every status generated for it', async () => {
    const { out, sync } = setup();
    const p = pod({ activeDeadlineSeconds: 10 }, {}, { phase: 'Running', startTime: new Date(T0 - 11_000).toISOString() });
    await sync.syncPod('SyncPodSync', p, cache([sandbox('sb1')], [container(app, 'CONTAINER_RUNNING')]));
    await sync.syncTerminatingPod(p, cache([sandbox('sb1')], [container(app, 'CONTAINER_EXITED', 137)]), 30, undefined, false);
    assert.equal(out.last?.reason, 'DeadlineExceeded');
    assert.equal(out.last?.phase, 'Failed');
  });

  it('a pod-network pod while the runtime network is not ready: the sync fails before anything is made', async () => {
    const { log, cri, sync, events } = setup();
    cri.onRuntime('Status', () => ({ status: { conditions: [{ type: 'RuntimeReady', status: true, reason: '', message: '' }, { type: 'NetworkReady', status: false, reason: 'NetworkPluginNotReady', message: 'cni config uninitialized' }] }, info: {} }) as never);
    await assert.rejects(sync.syncPod('SyncPodCreate', pod({ hostNetwork: false }), empty), /^Error: network is not ready: container runtime network not ready: NetworkReady=false reason:NetworkPluginNotReady message:cni config uninitialized$/);
    assert.deepEqual(log, ['status SetPodStatus Pending']);
    assert.deepEqual(events.events, [{ uid: 'uid-1', type: 'Warning', reason: 'NetworkNotReady', message: 'network is not ready: container runtime network not ready: NetworkReady=false reason:NetworkPluginNotReady message:cni config uninitialized' }]);
  });

  it('a volume that cannot be mounted: FailedMount per volume, no sandbox and no container, the sync fails (retried)', async () => {
    const { log, sync, events, dirs } = setup();
    dirs.ensureError = new VolumeMountError([{ volume: 'h', message: 'MountVolume.SetUp failed for volume "h" : hostPath type check failed: /x is not a directory' }]);
    await assert.rejects(sync.syncPod('SyncPodCreate', pod(), empty), /unmounted volumes=\[h\]/);
    assert.deepEqual(events.events.filter((e) => e.reason === 'FailedMount'), [{ uid: 'uid-1', type: 'Warning', reason: 'FailedMount', message: 'MountVolume.SetUp failed for volume "h" : hostPath type check failed: /x is not a directory' }]);
    assert.deepEqual(log.filter((l) => l.startsWith('cri ') || l.startsWith('prober ')), []);
    assert.equal(log.at(-1), 'dirs ensure uid-1');
  });

  it('a configMap volume whose refresh failed keeps its content: FailedMount, and the pod is synced on', async () => {
    const { log, sync, events, dirs } = setup();
    dirs.remountFailures = [{ volume: 'cfg', message: 'MountVolume.SetUp failed for volume "cfg" : configmap "settings" not found' }];
    await sync.syncPod('SyncPodCreate', pod(), empty);
    assert.deepEqual(events.events.filter((e) => e.reason === 'FailedMount').map((e) => e.message), ['MountVolume.SetUp failed for volume "cfg" : configmap "settings" not found']);
    assert.ok(log.includes('cri RunPodSandbox'), 'the sync went on');
  });

  it('a hostNetwork pod does not wait for the runtime network', async () => {
    const { log, cri, sync, events } = setup();
    cri.onRuntime('Status', () => ({ status: { conditions: [{ type: 'NetworkReady', status: false, reason: 'NetworkPluginNotReady', message: '' }] }, info: {} }) as never);
    await sync.syncPod('SyncPodCreate', pod({ hostNetwork: true }), empty);
    assert.ok(log.includes('cri RunPodSandbox'));
    assert.deepEqual(events.reasons().filter((r) => r === 'NetworkNotReady'), []);
  });

  it('a failed step is kept per container (the reasonCache) and shows as its waiting reason in the next status', async () => {
    const { out, cri, sync } = setup();
    cri.failNext('runtime', 'CreateContainer', 'Unknown', 'no space left on device');
    await assert.rejects(sync.syncPod('SyncPodCreate', pod(), empty), /CreateContainerError: no space left on device/);
    await sync.syncPod('SyncPodSync', pod(), cache([sandbox('sb-new')], []));
    const waiting = out.statuses.at(-1)?.status.containerStatuses?.find((c) => c.name === 'app')?.state?.waiting;
    assert.equal(waiting?.reason, 'CreateContainerError');
    assert.match(waiting?.message ?? '', /no space left on device/);
  });

  it('a container in back-off does not fail the sync: it asks to be synced again when the back-off ends', async () => {
    const { clock, sync } = setup();
    await sync.syncPod('SyncPodSync', pod(), cache([sandbox('sb1')], [container(app, 'CONTAINER_EXITED', 1)])); // restarted at once, the back-off starts
    await clock.step(1000);
    // The restarted container died again half a second after it started.
    const diedAgain = { ...container(app, 'CONTAINER_EXITED', 1), id: 'app-new', finishedAt: ns(T0 + 500) };
    const r = await sync.syncPod('SyncPodSync', pod(), cache([sandbox('sb1')], [diedAgain]));
    assert.equal(r.terminal, false);
    assert.equal(r.requeueAfterMs, 9500, 'the 10s back-off counts from when it died (T0 + 500ms); now is T0 + 1s');
  });
});

describe('KubeletSync status inputs: the status manager\'s previous status and the prober\'s results, read at each sync', () => {
  const probed: Container = { ...app, readinessProbe: { exec: { command: ['true'] } }, livenessProbe: { exec: { command: ['true'] } } };
  const running = cache([sandbox('sb1')], [container(probed, 'CONTAINER_RUNNING')]);
  const ready = (s: Pod['status']) => s?.conditions?.find((c) => c.type === 'Ready')?.status;

  it('a pod worker with nothing in memory (restarted, or the shard moved) reports a Ready pod Ready: readiness comes from the probe-results bucket', async () => {
    const { out, probes, sync } = setup();
    probes.set('readiness', 'app-id', 'Success');
    await sync.syncPod('SyncPodSync', pod({ containers: [probed] }), running);
    assert.equal(out.last?.containerStatuses?.[0]?.ready, true);
    assert.equal(ready(out.last), 'True');
  });

  it('a probe result that changed without a message reaching the pod worker is in its next status', async () => {
    const { out, probes, sync } = setup();
    probes.set('readiness', 'app-id', 'Success');
    await sync.syncPod('SyncPodSync', pod({ containers: [probed] }), running);
    probes.set('readiness', 'app-id', 'Failure');
    await sync.syncPod('SyncPodSync', pod({ containers: [probed] }), running);
    assert.equal(ready(out.last), 'False');
  });

  it('a liveness failure in the bucket restarts the container', async () => {
    const { log, probes, sync } = setup();
    probes.set('liveness', 'app-id', 'Failure');
    await sync.syncPod('SyncPodSync', pod({ containers: [probed] }), running);
    assert.ok(log.includes('cri StopContainer app-id grace=30'), log.join('\n'));
    assert.ok(log.includes('cri StartContainer app-new'), log.join('\n'));
  });

  it('the previous status is the status manager\'s: its startTime stays, and activeDeadlineSeconds counts from it', async () => {
    const { out, statuses, sync } = setup();
    statuses.kept.set('uid-1', { status: { phase: 'Running', startTime: new Date(T0 - 11_000).toISOString() }, podIsFinished: false });
    const r = await sync.syncPod('SyncPodSync', pod({ activeDeadlineSeconds: 10 }), cache([sandbox('sb1')], [container(app, 'CONTAINER_RUNNING')]));
    assert.deepEqual(r, { terminal: true });
    assert.equal(out.last?.reason, 'DeadlineExceeded');
    assert.equal(out.last?.startTime, new Date(T0 - 11_000).toISOString());
  });

  it('a phase made terminal in the API by someone else wins over the status manager\'s Running: the pod is terminal', async () => {
    const { out, statuses, sync, log } = setup();
    statuses.kept.set('uid-1', { status: { phase: 'Running' }, podIsFinished: false });
    const r = await sync.syncPod('SyncPodSync', pod({}, {}, { phase: 'Failed', reason: 'Overruled' }), cache([sandbox('sb1')], [container(app, 'CONTAINER_RUNNING')]));
    assert.deepEqual(r, { terminal: true });
    assert.equal(out.last?.phase, 'Failed');
    assert.ok(!log.some((l) => l.startsWith('cri ')), 'nothing is started or changed in the runtime');
  });

  it('a static pod\'s own status is not the API\'s: a terminal phase there is not read', async () => {
    const { out, statuses, sync } = setup();
    statuses.kept.set('uid-1', { status: { phase: 'Running' }, podIsFinished: false });
    const r = await sync.syncPod('SyncPodSync', pod({}, { annotations: { 'kubernetes.io/config.source': 'file', 'kubernetes.io/config.hash': 'h' } }, { phase: 'Failed' }), cache([sandbox('sb1')], [container(app, 'CONTAINER_RUNNING')]));
    assert.equal(r.terminal, false);
    assert.equal(out.last?.phase, 'Running');
  });

  it('readiness gates: their conditions are the apiserver\'s (the pod as its source gave it), not the previous status\'', async () => {
    const { out, sync } = setup();
    const gates = { readinessGates: [{ conditionType: 'k8s.io/test-condition1' }] };
    const rt = cache([sandbox('sb1')], [container(app, 'CONTAINER_RUNNING')]);
    // The first status (the status manager keeps it, the follow of the fake) has no gate condition: not Ready.
    await sync.syncPod('SyncPodSync', pod(gates, {}, { phase: 'Pending' }), rt);
    assert.equal(out.last?.conditions?.find((c) => c.type === 'Ready')?.reason, 'ReadinessGatesNotReady');
    // Someone patches the gate's condition True in the apiserver: the RECONCILE brings the pod with it.
    const patched = { phase: 'Running' as const, conditions: [{ type: 'k8s.io/test-condition1', status: 'True' as const }] };
    await sync.syncPod('SyncPodSync', pod(gates, {}, patched), rt);
    assert.equal(ready(out.last), 'True');
    // And False again.
    await sync.syncPod('SyncPodSync', pod(gates, {}, { ...patched, conditions: [{ type: 'k8s.io/test-condition1', status: 'False' }] }), rt);
    assert.equal(ready(out.last), 'False');
  });

  it('a pod the status manager already has Running is not measured again (kubelet_pod_start_duration_seconds)', async () => {
    const { statuses, sync, started } = setup();
    const p = pod({}, { annotations: { 'kubernetes.io/config.seen': new Date(T0 - 600_000).toISOString() } });
    statuses.kept.set('uid-1', { status: { phase: 'Running', containerStatuses: [{ name: 'app', ready: true, restartCount: 0, image: IMAGE, imageID: '', state: { running: {} } }] }, podIsFinished: false });
    await sync.syncPod('SyncPodSync', p, cache([sandbox('sb1')], [container(app, 'CONTAINER_RUNNING')]));
    assert.deepEqual(started, []);
  });

  it('results that cannot be read fail the sync before anything is reported or done', async () => {
    const { log, probes, sync } = setup();
    probes.failNext();
    await assert.rejects(sync.syncPod('SyncPodSync', pod({ containers: [probed] }), running), /probe-results read failed/);
    assert.deepEqual(log, []);
  });

  it('a terminating pod whose results cannot be read is still reported and killed', async () => {
    const { log, probes, sync } = setup();
    probes.failNext();
    await sync.syncTerminatingPod(pod({ containers: [probed] }), running, 30, undefined, false);
    assert.deepEqual(log, ['prober StopLivenessAndStartup', 'status SetPodStatus Running', 'cri StopContainer app-id grace=30', 'cri StopPodSandbox sb1', 'prober RemovePod']);
  });
});

describe('KubeletSync.syncTerminatingPod (kubelet.go SyncTerminatingPod)', () => {
  it('stops liveness and startup probes, reports the status, kills the pod, checks nothing runs, then removes the pod from probing', async () => {
    const { log, sync } = setup();
    await sync.syncTerminatingPod(pod(), cache([sandbox('sb1')], [container(app, 'CONTAINER_RUNNING')]), 30, undefined, false);
    assert.deepEqual(log, ['prober StopLivenessAndStartup', 'status SetPodStatus Running', 'cri StopContainer app-id grace=30', 'cri StopPodSandbox sb1', 'prober RemovePod']);
  });

  it('a shorter grace period asked for (gracePeriodOverride) is the one the containers get', async () => {
    const { log, sync } = setup();
    await sync.syncTerminatingPod(pod(), cache([sandbox('sb1')], [container(app, 'CONTAINER_RUNNING')]), 2, { gracePeriodOverride: 2 }, false);
    assert.ok(log.includes('cri StopContainer app-id grace=2'), log.join('\n'));
  });

  it('a running pod only (no config): no status is reported', async () => {
    const { log, sync } = setup();
    await sync.syncTerminatingPod(pod(), cache([sandbox('sb1')], [container(app, 'CONTAINER_RUNNING')]), 30, undefined, true);
    assert.ok(!log.some((l) => l.startsWith('status ')), log.join('\n'));
  });

  it('a container still running after the kill fails the step, and the pod stays probed', async () => {
    const { log, cri, sync } = setup();
    cri.onRuntime('ListContainers', () => ({ containers: [{ id: 'app-id-still-running' }] }) as never);
    await assert.rejects(sync.syncTerminatingPod(pod(), cache([sandbox('sb1')], [container(app, 'CONTAINER_RUNNING')]), 30, undefined, false), /pod uid-1 still has running containers: app-id-still/);
    assert.ok(!log.includes('prober RemovePod'));
  });
});

describe('KubeletSync.syncTerminatedPod (kubelet.go SyncTerminatedPod)', () => {
  it('reports the final status, tears the volumes down, and sends TerminatePod last (upstream\'s order); the sandboxes and containers stay', async () => {
    const { log, cri, out, sync } = setup();
    cri.onRuntime('ListPodSandbox', () => ({ items: [sandbox('sb1'), sandbox('sb0')] }) as never);
    await sync.syncTerminatedPod(pod(), cache([sandbox('sb1')], [container(app, 'CONTAINER_EXITED', 137)]), false);
    assert.deepEqual(log, ['status SetPodStatus Failed', 'dirs remove uid-1', 'status TerminatePod Failed']);
    assert.equal(out.last?.containerStatuses?.[0]?.state?.terminated?.exitCode, 137);
  });

  it('a cleanup step that fails sends no TerminatePod: the API pod is not deleted before the cleanup is done', async () => {
    const { log, sync, dirs } = setup();
    dirs.remove = () => Promise.reject(new Error('device or resource busy'));
    await assert.rejects(sync.syncTerminatedPod(pod(), cache([sandbox('sb1')], [container(app, 'CONTAINER_EXITED', 0)]), false), /busy/);
    assert.deepEqual(log, ['status SetPodStatus Succeeded']);
  });

  it('a static pod is not given a terminal phase (upstream #116484)', async () => {
    const { out, cri, sync } = setup();
    cri.onRuntime('ListPodSandbox', () => ({ items: [] }));
    const p = pod({}, { annotations: { 'kubernetes.io/config.source': 'file', 'kubernetes.io/config.hash': 'h' } });
    await sync.syncTerminatedPod(p, cache([sandbox('sb1')], [container(app, 'CONTAINER_EXITED', 137)]), false);
    assert.notEqual(out.last?.phase, 'Failed');
    assert.notEqual(out.last?.phase, 'Succeeded');
  });

  it('an evicted pod (killPodOptions\' PodStatusFunc) is Failed / Evicted with its message and DisruptionTarget while it terminates and once terminated', async () => {
    const { out, cri, sync, clock } = setup();
    const message = 'The node was low on resource: memory. Threshold quantity: 100Mi, available: 50Mi. ';
    const kill = { gracePeriodOverride: 1, podStatus: { phase: 'Failed' as const, reason: 'Evicted', message, disruptionTarget: { reason: 'TerminationByKubelet', message } } };
    const p = pod({ restartPolicy: 'Never' });
    await sync.syncTerminatingPod(p, cache([sandbox('sb1')], [container(app, 'CONTAINER_RUNNING')]), 1, kill, false);
    const terminating = out.last;
    assert.deepEqual([terminating?.phase, terminating?.reason, terminating?.message], ['Failed', 'Evicted', message]);
    const target = terminating?.conditions?.find((c) => c.type === 'DisruptionTarget');
    assert.deepEqual([target?.status, target?.reason, target?.message], ['True', 'TerminationByKubelet', message]);
    await clock.step(5_000);
    cri.onRuntime('ListPodSandbox', () => ({ items: [] }));
    // Its container ended cleanly (exit 0, restartPolicy Never: Succeeded on its own): it still ends Failed / Evicted.
    await sync.syncTerminatedPod(p, cache([sandbox('sb1')], [container(app, 'CONTAINER_EXITED', 0)]), false, kill);
    assert.deepEqual([out.last?.phase, out.last?.reason, out.last?.message], ['Failed', 'Evicted', message]);
    assert.deepEqual(out.last?.conditions?.filter((c) => c.type === 'DisruptionTarget'), [target], 'the condition is kept, with its transition time');
  });

  it('a running pod only: no status, nothing removed from the runtime', async () => {
    const { log, cri, sync } = setup();
    cri.onRuntime('ListPodSandbox', () => ({ items: [sandbox('sb1')] }) as never);
    await sync.syncTerminatedPod(pod(), empty, true);
    assert.deepEqual(log, ['dirs remove uid-1']);
  });

  it('forgets the pod: a pod with the same UID starts from a clean status (no old reasons, no old start)', async () => {
    const { out, cri, sync, started } = setup();
    const p = pod({}, { annotations: { 'kubernetes.io/config.seen': new Date(T0 - 5000).toISOString() } });
    cri.failNext('runtime', 'CreateContainer', 'Unknown', 'no space left on device');
    await assert.rejects(sync.syncPod('SyncPodCreate', p, empty));
    await sync.syncTerminatedPod(p, empty, false);
    await sync.syncPod('SyncPodCreate', p, empty);
    const waiting = out.last?.containerStatuses?.find((c) => c.name === 'app')?.state?.waiting;
    assert.equal(waiting?.reason, 'ContainerCreating', 'not the old CreateContainerError');
    await sync.syncPod('SyncPodSync', p, cache([sandbox('sb-new')], [container(app, 'CONTAINER_RUNNING')]));
    assert.equal(started.length, 1);
  });
});

describe('KubeletSync: the pod worker\'s cancel does not reach the runtime\'s work in flight (SyncPod WithoutCancel, SyncTerminatingPod\'s background context)', () => {
  const flush = async () => {
    for (let i = 0; i < 10; i++) await new Promise<void>((r) => setImmediate(r));
  };
  const held = () => {
    let release = () => undefined as void;
    const hold = new Promise<void>((r) => (release = r));
    return { hold, release };
  };

  it('a shorter grace period cancels the termination while the preStop hook runs: the hook runs once and the kill goes on with its grace period', async () => {
    const { log, sync, hooks } = setup();
    const withHook: Container = { ...app, lifecycle: { preStop: { exec: { command: ['sleep', '6'] } } } };
    const { hold, release } = held();
    hooks.hold = hold;
    const abort = new AbortController();
    const kill = sync.syncTerminatingPod(pod({ containers: [withHook] }), cache([sandbox('sb1')], [container(withHook, 'CONTAINER_RUNNING')]), 30, undefined, false, abort.signal);
    await flush();
    abort.abort(new Error('pod sync cancelled: the grace period shortened to 5s'));
    await flush();
    release();
    await kill;
    assert.deepEqual(hooks.runs, ['app app-id'], 'the preStop hook ran once');
    assert.ok(log.includes('cri StopContainer app-id grace=30'), log.join(', '));
  });

  it('a kill cancels the sync while a postStart hook runs: the hook finishes and the sync goes on (the kill comes next)', async () => {
    const { log, sync, hooks, events } = setup();
    const withHook: Container = { ...app, lifecycle: { postStart: { exec: { command: ['sleep', '4'] } } } };
    const web: Container = { name: 'web', image: IMAGE };
    const { hold, release } = held();
    hooks.hold = hold;
    const abort = new AbortController();
    const syncing = sync.syncPod('SyncPodSync', pod({ containers: [withHook, web] }), cache([sandbox('sb1')], []), abort.signal);
    await flush();
    abort.abort(new Error('pod sync cancelled: the pod is to terminate'));
    await flush();
    release();
    assert.deepEqual(await syncing, { terminal: false });
    assert.deepEqual(log.filter((l) => l.startsWith('cri ')), ['cri CreateContainer app', 'cri StartContainer app-new', 'cri CreateContainer web', 'cri StartContainer web-new']);
    assert.ok(!events.reasons().includes('FailedPostStartHook'), events.reasons().join(', '));
  });

  it('a sync cancelled before it reached the runtime (upstream: WaitForAttachAndMount) starts nothing', async () => {
    const { log, sync } = setup();
    const abort = new AbortController();
    abort.abort(new Error('pod sync cancelled: the pod is to terminate'));
    await assert.rejects(sync.syncPod('SyncPodCreate', pod(), empty, abort.signal), /pod sync cancelled/);
    assert.ok(!log.some((l) => l.startsWith('cri ')), log.join(', '));
  });
});
