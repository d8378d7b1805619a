/**
 * What RuntimeManager gives a container beside its spec: the image's user
 * checked against runAsNonRoot (a CreateContainerConfigError, upstream's
 * message), the kubelet-managed /etc/hosts and the termination message file,
 * each made on the host (FakeContainerFiles) and bind-mounted.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { FakeClock } from '@app/clock/testing';
import type { Container, Pod, PodSpec } from '@app/contracts';
import { RecordingEventRecorder } from '@app/contracts/testing';
import type { ContainerConfig, CriInput } from '@app/cri';
import { FakeCri } from '@app/cri/testing';
import { runtimePodStatus as status } from '@app/kube/testing';
import { silentLogger } from '@app/observability';
import { CrashLoopBackOff } from './backoff.js';
import { ImagePuller } from '../images/image-puller.js';
import { RuntimeManager } from './runtime-manager.js';
import { FakeContainerFiles, FakeHookRunner } from '../testing.js';

const app: Container = { name: 'app', image: 'busybox', terminationMessagePath: '/dev/termination-log', terminationMessagePolicy: 'File' };
const pod = (spec: Partial<PodSpec> = {}): Pod => ({ metadata: { name: 'web', namespace: 'default', uid: 'uid-1' }, spec: { containers: [app], restartPolicy: 'Never', ...spec } });
const noProbes = { liveness: () => undefined, startup: () => undefined };

function setup(o: { imageUser?: { uid?: { value: string }; username?: string }; podIP?: string; files?: boolean } = {}) {
  const clock = new FakeClock(1_000_000);
  const events = new RecordingEventRecorder();
  const cri = new FakeCri()
    .onImage('ImageStatus', () => ({ image: { id: 'sha256:img', ...(o.imageUser ?? {}) } }) as never)
    .onRuntime('ListPodSandbox', () => ({ items: [] }))
    .onRuntime('ListContainers', () => ({ containers: [] }))
    .onRuntime('RunPodSandbox', () => ({ podSandboxId: 'sb-new' }))
    .onRuntime('PodSandboxStatus', () => ({ status: { network: { ip: o.podIP ?? '10.88.0.7', additionalIps: [] } } }) as never)
    .onRuntime('CreateContainer', (r) => ({ containerId: `${r.config?.metadata?.name ?? ''}-new` }));
  const files = new FakeContainerFiles();
  const node = { nodeName: 'n1', hostIP: '10.0.0.1', logRoot: '/var/log/pods', podRoot: '/var/lib/kubelet/pods', hostDns: { servers: [], searches: [], options: [] } };
  const manager = new RuntimeManager({
    cri,
    images: new ImagePuller({ cri, events, clock, pullBackOff: { initialMs: 10_000, maxMs: 300_000 } }),
    backOff: new CrashLoopBackOff({ initialMs: 10_000, maxMs: 300_000 }),
    hooks: new FakeHookRunner(),
    events,
    node,
    clock,
    logger: silentLogger(),
    files: o.files === false ? undefined : files,
  });
  const created = () => cri.callsOf('CreateContainer').map((r) => (r as { config: CriInput<ContainerConfig> }).config);
  return { cri, events, files, manager, created };
}

describe('RuntimeManager: the image user and runAsNonRoot', () => {
  it('the image\'s numeric user is the container\'s runAsUser', async () => {
    const { manager, created } = setup({ imageUser: { uid: { value: '1234' } } });
    await manager.syncPod(pod(), status([], []), noProbes);
    assert.deepEqual(created()[0]?.linux?.securityContext?.runAsUser, { value: '1234' });
  });

  it('runAsNonRoot with an image that runs as root: CreateContainerConfigError, a Failed event, nothing created', async () => {
    const { manager, created, events } = setup();
    const p = pod({ containers: [{ ...app, securityContext: { runAsNonRoot: true } }] });
    const r = await manager.syncPod(p, status([], []), noProbes);
    assert.deepEqual(r.errors.get('app'), { reason: 'CreateContainerConfigError', message: 'container has runAsNonRoot and image will run as root (pod: "web_default(uid-1)", container: app)' });
    assert.equal(created().length, 0);
    assert.ok(events.events.some((e) => e.type === 'Warning' && e.reason === 'Failed'));
  });

  it('runAsNonRoot with the image\'s non-root user: created', async () => {
    const { manager, created } = setup({ imageUser: { uid: { value: '1234' } } });
    const r = await manager.syncPod(pod({ containers: [{ ...app, securityContext: { runAsNonRoot: true } }] }), status([], []), noProbes);
    assert.equal(r.errors.size, 0);
    assert.equal(created().length, 1);
  });
});

describe('RuntimeManager: the kubelet-managed /etc/hosts and the termination message file', () => {
  it('written in the pod directory with the pod IP and host aliases, mounted at /etc/hosts; the termination file at terminationMessagePath', async () => {
    const { manager, created, files } = setup();
    await manager.syncPod(pod({ hostAliases: [{ ip: '123.45.67.89', hostnames: ['foo', 'bar'] }] }), status([], []), noProbes);
    const hosts = files.hostsFiles.get('/var/lib/kubelet/pods/uid-1/etc-hosts') ?? '';
    assert.match(hosts, /^# Kubernetes-managed hosts file\.\n127\.0\.0\.1\tlocalhost\n/);
    assert.match(hosts, /\n10\.88\.0\.7\tweb\n/);
    assert.match(hosts, /\n# Entries added by HostAliases\.\n123\.45\.67\.89\tfoo\tbar\n$/);
    assert.deepEqual(created()[0]?.mounts, [
      { containerPath: '/etc/hosts', hostPath: '/var/lib/kubelet/pods/uid-1/etc-hosts', readonly: false },
      { containerPath: '/dev/termination-log', hostPath: '/var/lib/kubelet/pods/uid-1/containers/app/msg-1', readonly: false },
    ]);
  });

  it('a hostNetwork pod gets the node\'s hosts file under its own header', async () => {
    const { manager, files } = setup({ podIP: '' });
    await manager.syncPod(pod({ hostNetwork: true, hostAliases: [{ ip: '123.45.67.89', hostnames: ['foo'] }] }), status([], []), noProbes);
    assert.equal(files.hostsFiles.get('/var/lib/kubelet/pods/uid-1/etc-hosts'), `# Kubernetes-managed hosts file (host network).\n${files.nodeHosts}\n# Entries added by HostAliases.\n123.45.67.89\tfoo\n`);
  });

  it('a container that mounts its own /etc/hosts keeps it (and no hosts file is written for it)', async () => {
    const { manager, created, files } = setup();
    const own: Container = { ...app, volumeMounts: [{ name: 'h', mountPath: '/etc/hosts' }] };
    await manager.syncPod(pod({ containers: [own], volumes: [{ name: 'h', hostPath: { path: '/etc/hosts' } }] }), status([], []), noProbes);
    const mounts = created()[0]?.mounts ?? [];
    assert.deepEqual(mounts.filter((m) => m.containerPath === '/etc/hosts').map((m) => m.hostPath), ['/etc/hosts']);
    assert.equal(files.hostsFiles.size, 0);
  });

  it('no pod IP and not on the host network: no hosts file', async () => {
    const { manager, files, created } = setup({ podIP: '' });
    await manager.syncPod(pod(), status([], []), noProbes);
    assert.equal(files.hostsFiles.size, 0);
    assert.ok(!(created()[0]?.mounts ?? []).some((m) => m.containerPath === '/etc/hosts'));
  });
});
