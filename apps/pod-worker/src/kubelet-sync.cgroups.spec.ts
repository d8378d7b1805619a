/**
 * KubeletSync's pod cgroup steps (kubelet.go SyncPod's pcm.EnsureExists and
 * podKilled, SyncTerminatedPod's pcm.Destroy), seen through the CRI calls,
 * the cgroups a fake CgroupManager holds, and the events.
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
import { DEFAULT_RESOURCE_CONFIG_OPTIONS, PodContainerManager, podCgroupParent } from './cm/pod-container-manager.js';
import { ImagePuller } from './images/image-puller.js';
import { RuntimeManager } from './kuberuntime/runtime-manager.js';
import { FakeCgroupManager, FakeHookRunner, FakePodDirectories, FakePodStatusProvider, FakeProbeResults, RecordingOutbox } from './testing.js';

const T0 = Date.UTC(2026, 0, 1, 12);
const IMAGE = 'localhost/kubelet-split/busybox:1.35';
const app: Container = { name: 'app', image: IMAGE, resources: { requests: { cpu: '100m' }, limits: { memory: '64Mi' } } };
const CGROUP = '/kubepods/burstable/poduid-1';

const pod = (spec: Partial<PodSpec> = {}): Pod => ({
  metadata: { name: 'p', namespace: 'default', uid: 'uid-1', creationTimestamp: new Date(T0 - 60_000).toISOString() },
  spec: { hostNetwork: true, containers: [app], restartPolicy: 'Always', terminationGracePeriodSeconds: 30, ...spec },
});

const ns = (ms: number) => String(BigInt(ms) * 1_000_000n);
const running: CacheResult = {
  timestamp: T0,
  entry: {
    uid: 'uid-1',
    name: 'p',
    namespace: 'default',
    timestamp: T0,
    ips: [],
    sandboxStatuses: [{ id: 'sb1', metadata: { name: 'p', namespace: 'default', uid: 'uid-1', attempt: 0 }, state: 'SANDBOX_READY', createdAt: ns(T0 - 50_000), network: { ip: '', additionalIps: [] }, linux: { namespaces: { options: { network: 'NODE', pid: 'CONTAINER', ipc: 'POD', targetId: '' } } }, labels: {}, annotations: {} }],
    containerStatuses: [
      {
        id: 'app-id',
        metadata: { name: 'app', attempt: 0 },
        state: 'CONTAINER_RUNNING',
        createdAt: ns(T0 - 40_000),
        startedAt: ns(T0 - 39_000),
        finishedAt: '0',
        exitCode: 0,
        image: { image: IMAGE },
        imageRef: 'sha256:img',
        reason: '',
        message: '',
        labels: { [KubeletLabels.containerName]: 'app', [KubeletLabels.podUid]: 'uid-1' },
        annotations: { [KubeletAnnotations.containerHash]: hashContainer(app), [KubeletAnnotations.restartCount]: '0' },
      },
    ],
  } satisfies PodCacheEntry,
};
const empty: CacheResult = { timestamp: T0 };

function setup() {
  const log: string[] = [];
  const clock = new FakeClock(T0);
  const sandboxParents: string[] = [];
  const cri = new FakeCri()
    .onImage('ImageStatus', () => ({ image: { id: 'sha256:img' } }) as never)
    .onRuntime('ListPodSandbox', () => ({ items: [] }))
    .onRuntime('ListContainers', () => ({ containers: [] }))
    .onRuntime('PodSandboxStatus', () => ({ info: {} }) as never)
    .onRuntime('RunPodSandbox', (r) => (log.push('cri RunPodSandbox'), sandboxParents.push(r.config?.linux?.cgroupParent ?? ''), { podSandboxId: 'sb-new' }))
    .onRuntime('CreateContainer', (r) => (log.push(`cri CreateContainer ${r.config?.metadata?.name ?? ''}`), { containerId: 'app-new' }))
    .onRuntime('StartContainer', (r) => (log.push(`cri StartContainer ${r.containerId}`), {}))
    .onRuntime('StopContainer', (r) => (log.push(`cri StopContainer ${r.containerId}`), {}))
    .onRuntime('StopPodSandbox', (r) => (log.push(`cri StopPodSandbox ${r.podSandboxId}`), {}))
    .onRuntime('RemovePodSandbox', (r) => (log.push(`cri RemovePodSandbox ${r.podSandboxId}`), {}));
  const events = new RecordingEventRecorder();
  const images = new ImagePuller({ cri, events, clock, pullBackOff: { initialMs: 10_000, maxMs: 300_000 } });
  const node = { nodeName: 'n1', hostIP: '10.0.0.1', logRoot: '/var/log/pods', podRoot: '/var/lib/kubelet/pods', hostDns: { servers: [], searches: [], options: [] }, podCgroupParent: (p: Pod) => podCgroupParent(p, '/') };
  const runtime = new RuntimeManager({ cri, images, backOff: new CrashLoopBackOff({ initialMs: 10_000, maxMs: 300_000 }), hooks: new FakeHookRunner(), events, node, clock, logger: silentLogger() });
  const out = new RecordingOutbox(log);
  const cgroups = new FakeCgroupManager(log);
  const pcm = new PodContainerManager(cgroups, { ...DEFAULT_RESOURCE_CONFIG_OPTIONS, cgroupRoot: '/' });
  const sync = new KubeletSync({ runtime, cri, dirs: new FakePodDirectories(log), out, probes: new FakeProbeResults(), statuses: new FakePodStatusProvider(out), clock, logger: silentLogger(), hostIP: '10.0.0.1', events, pcm });
  return { log, sync, cri, cgroups, events, sandboxParents };
}

describe('KubeletSync: the pod cgroup (cgroups-per-qos)', () => {
  it('a new pod: its cgroup, with its limits, is made before the sandbox, and is the sandbox\'s cgroup parent', async () => {
    const { log, sync, cgroups, sandboxParents } = setup();
    assert.deepEqual(await sync.syncPod('SyncPodCreate', pod(), empty), { terminal: false });
    assert.deepEqual(log, ['status SetPodStatus Pending', `cgroup create ${CGROUP}`, 'dirs ensure uid-1', 'prober AddPod', 'cri RunPodSandbox', 'cri CreateContainer app', 'cri StartContainer app-new']);
    assert.deepEqual(sandboxParents, [CGROUP]);
    assert.deepEqual(cgroups.cgroups.get(CGROUP), { cpuShares: 102, memory: 64 * 1024 * 1024 });
  });

  it('a running pod whose cgroup is there: nothing is killed or made', async () => {
    const { log, sync, cgroups } = setup();
    await cgroups.create(['kubepods', 'burstable', 'poduid-1'], {});
    log.length = 0;
    await sync.syncPod('SyncPodSync', pod(), running);
    assert.deepEqual(log, ['status SetPodStatus Running', 'dirs ensure uid-1', 'prober AddPod']);
  });

  it('a running pod whose cgroup vanished is killed on its sync, and its cgroup made again for its restart', async () => {
    const { log, sync, cgroups } = setup();
    assert.deepEqual(await sync.syncPod('SyncPodSync', pod(), running), { terminal: false });
    assert.deepEqual(log, ['status SetPodStatus Running', 'cri StopContainer app-id', 'cri StopPodSandbox sb1', `cgroup create ${CGROUP}`]);
    assert.ok(cgroups.cgroups.has(CGROUP));
  });

  it('a running pod of restartPolicy Never whose cgroup vanished is killed, and gets no new cgroup: it never runs again', async () => {
    const { log, sync, cgroups } = setup();
    await sync.syncPod('SyncPodSync', pod({ restartPolicy: 'Never' }), running);
    assert.deepEqual(log, ['status SetPodStatus Running', 'cri StopContainer app-id', 'cri StopPodSandbox sb1']);
    assert.equal(cgroups.cgroups.has(CGROUP), false);
  });

  it('a cgroup that cannot be made: FailedToCreatePodContainer, the sync fails, no sandbox', async () => {
    const { log, sync, cgroups, events } = setup();
    cgroups.fail = 'EACCES: permission denied';
    await assert.rejects(sync.syncPod('SyncPodCreate', pod(), empty), /failed to ensure that the pod: uid-1 cgroups exist and are correctly applied: EACCES/);
    assert.deepEqual(log, ['status SetPodStatus Pending']);
    assert.deepEqual(
      events.events.map((e) => [e.reason, e.message]),
      [['FailedToCreatePodContainer', 'unable to ensure pod container exists: EACCES: permission denied']],
    );
  });

  it('syncTerminatedPod destroys the pod\'s cgroup after its volumes, and leaves its stopped sandbox to the container GC', async () => {
    const { log, sync, cri } = setup();
    await sync.syncPod('SyncPodCreate', pod(), empty);
    cri.onRuntime('ListPodSandbox', () => ({ items: [{ id: 'sb-new' }] }) as never);
    log.length = 0;
    await sync.syncTerminatedPod(pod(), empty, true);
    assert.deepEqual(log, ['dirs remove uid-1', `cgroup destroy ${CGROUP}`]);
  });
});
