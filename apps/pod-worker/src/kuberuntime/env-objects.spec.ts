import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { FakeClock } from '@app/clock/testing';
import type { Container, Pod } from '@app/contracts';
import { RecordingEventRecorder } from '@app/contracts/testing';
import type { CreateContainerRequest } from '@app/cri';
import { FakeCri } from '@app/cri/testing';
import { runtimePodStatus } from '@app/kube/testing';
import { silentLogger } from '@app/observability';
import { CrashLoopBackOff } from './backoff.js';
import type { ApiObjectPayload } from '../ports.js';
import { containerEnv, envObjectNames, type EnvObjects } from './runtime-config.js';
import { ImagePuller } from '../images/image-puller.js';
import { RuntimeManager } from './runtime-manager.js';
import { FakeApiObjects, FakeHookRunner } from '../testing.js';

const b64 = (s: string) => Buffer.from(s).toString('base64');
const NODE = { nodeName: 'n1', hostIP: '10.0.0.1', logRoot: '/var/log/pods', podRoot: '/var/lib/kubelet/pods', hostDns: { servers: [], searches: [], options: [] } };
const pod = (c: Container): Pod => ({ metadata: { name: 'p', namespace: 'ns', uid: 'u1' }, spec: { hostNetwork: true, containers: [c] } });
const SETTINGS: ApiObjectPayload = { data: { MODE: 'fast', LEVEL: 'info' }, binaryData: {} };
const CREDS: ApiObjectPayload = { data: { USER: b64('admin'), PASSWORD: b64('s3cret') }, binaryData: {}, secretType: 'Opaque' };
const OBJECTS: EnvObjects = { configMaps: new Map([['settings', SETTINGS], ['gone', undefined]]), secrets: new Map([['creds', CREDS], ['gone', undefined]]) };

describe('containerEnv with configMaps and secrets (makeEnvironmentVariables)', () => {
  const cases: { name: string; c: Partial<Container>; want?: string[]; error?: string }[] = [
    { name: 'envFrom a configMap and a secret (decoded), with a prefix', c: { envFrom: [{ configMapRef: { name: 'settings' } }, { secretRef: { name: 'creds' }, prefix: 'DB_' }] }, want: ['MODE=fast', 'LEVEL=info', 'DB_USER=admin', 'DB_PASSWORD=s3cret'] },
    { name: 'env overrides envFrom, and $(VAR) sees envFrom', c: { envFrom: [{ configMapRef: { name: 'settings' } }], env: [{ name: 'MODE', value: 'slow' }, { name: 'BOTH', value: '$(MODE)-$(LEVEL)' }] }, want: ['MODE=slow', 'LEVEL=info', 'BOTH=slow-info'] },
    {
      name: 'configMapKeyRef and secretKeyRef',
      c: { env: [{ name: 'A', valueFrom: { configMapKeyRef: { name: 'settings', key: 'LEVEL' } } }, { name: 'B', valueFrom: { secretKeyRef: { name: 'creds', key: 'PASSWORD' } } }] },
      want: ['A=info', 'B=s3cret'],
    },
    { name: 'a missing configMap is upstream\'s not found', c: { envFrom: [{ configMapRef: { name: 'gone' } }] }, error: 'configmap "gone" not found' },
    { name: 'a missing secret is upstream\'s not found', c: { env: [{ name: 'X', valueFrom: { secretKeyRef: { name: 'gone', key: 'k' } } }] }, error: 'secret "gone" not found' },
    { name: 'a missing key is upstream\'s error', c: { env: [{ name: 'X', valueFrom: { configMapKeyRef: { name: 'settings', key: 'NOPE' } } }] }, error: "couldn't find key NOPE in ConfigMap ns/settings" },
    { name: 'a missing secret key is upstream\'s error', c: { env: [{ name: 'X', valueFrom: { secretKeyRef: { name: 'creds', key: 'NOPE' } } }] }, error: "couldn't find key NOPE in Secret ns/creds" },
    {
      name: 'optional references to what is missing are left out',
      c: {
        envFrom: [{ configMapRef: { name: 'gone', optional: true } }, { secretRef: { name: 'gone', optional: true } }],
        env: [{ name: 'X', valueFrom: { configMapKeyRef: { name: 'settings', key: 'NOPE', optional: true } } }, { name: 'Y', valueFrom: { secretKeyRef: { name: 'gone', key: 'k', optional: true } } }, { name: 'Z', value: 'z' }],
      },
      want: ['Z=z'],
    },
  ];
  for (const tc of cases) {
    it(tc.name, () => {
      const c: Container = { name: 'main', image: 'i', ...tc.c };
      const env = () => containerEnv(pod(c), c, [], NODE, OBJECTS).map((e) => `${e.key ?? ''}=${e.value ?? ''}`);
      if (tc.error !== undefined) assert.throws(env, { message: tc.error });
      else assert.deepEqual(env(), tc.want);
    });
  }

  it('envObjectNames names each object once, and none for a plain value', () => {
    const c: Container = {
      name: 'main',
      envFrom: [{ configMapRef: { name: 'a' } }, { secretRef: { name: 's' } }],
      env: [{ name: 'X', valueFrom: { configMapKeyRef: { name: 'a', key: 'k' } } }, { name: 'Y', valueFrom: { configMapKeyRef: { name: 'b', key: 'k' } } }, { name: 'Z', value: 'v' }],
    };
    assert.deepEqual(envObjectNames(c), { configMaps: ['a', 'b'], secrets: ['s'] });
  });
});

describe('startContainer with env from configMaps and secrets', () => {
  function setup(objects: FakeApiObjects) {
    const clock = new FakeClock(1_000_000);
    const events = new RecordingEventRecorder();
    const cri = new FakeCri()
      .onImage('ImageStatus', () => ({ image: { id: 'sha256:img' } }) as never)
      .onRuntime('ListPodSandbox', () => ({ items: [] }))
      .onRuntime('ListContainers', () => ({ containers: [] }))
      .onRuntime('RunPodSandbox', () => ({ podSandboxId: 'sb-new' }))
      .onRuntime('PodSandboxStatus', () => ({ info: {} }) as never)
      .onRuntime('CreateContainer', () => ({ containerId: 'c-new' }));
    const backOff = { initialMs: 10_000, maxMs: 300_000 };
    const manager = new RuntimeManager({ cri, images: new ImagePuller({ cri, events, clock, pullBackOff: backOff }), backOff: new CrashLoopBackOff(backOff), hooks: new FakeHookRunner(), events, node: NODE, clock, logger: silentLogger(), objects });
    return { cri, events, manager };
  }
  const c: Container = { name: 'main', image: 'i', envFrom: [{ configMapRef: { name: 'settings' } }], env: [{ name: 'PW', valueFrom: { secretKeyRef: { name: 'creds', key: 'PASSWORD' } } }] };
  const noProbes = { liveness: () => undefined, startup: () => undefined };

  it('the values read from config-source are the container\'s env', async () => {
    const objects = new FakeApiObjects();
    objects.put('ConfigMap', 'ns', 'settings', SETTINGS);
    objects.put('Secret', 'ns', 'creds', CREDS);
    const { cri, manager } = setup(objects);
    const result = await manager.syncPod(pod(c), runtimePodStatus([], []), noProbes);
    assert.deepEqual(result.errors, new Map());
    const envs = (cri.callsOf('CreateContainer')[0] as CreateContainerRequest).config?.envs.map((e) => `${e.key}=${e.value}`);
    assert.deepEqual(envs, ['MODE=fast', 'LEVEL=info', 'PW=s3cret']);
  });

  it('a missing configMap is CreateContainerConfigError with a Failed event, and no container is created', async () => {
    const objects = new FakeApiObjects();
    objects.put('Secret', 'ns', 'creds', CREDS);
    const { cri, events, manager } = setup(objects);
    const result = await manager.syncPod(pod(c), runtimePodStatus([], []), noProbes);
    assert.deepEqual(result.errors.get('main'), { reason: 'CreateContainerConfigError', message: 'configmap "settings" not found' });
    assert.equal(cri.callsOf('CreateContainer').length, 0);
    assert.deepEqual(events.events.filter((e) => e.reason === 'Failed').map((e) => `${e.type} ${e.message}`), ['Warning Error: configmap "settings" not found']);
  });

  it('objects that cannot be read say why (a node that has not joined a cluster)', async () => {
    const objects = new FakeApiObjects();
    objects.failWith('NotJoined', 'this node has not joined a cluster (config-source has no KUBECONFIG): configmap "settings" cannot be read from an apiserver');
    const { manager } = setup(objects);
    const result = await manager.syncPod(pod(c), runtimePodStatus([], []), noProbes);
    assert.equal(result.errors.get('main')?.reason, 'CreateContainerConfigError');
    assert.match(result.errors.get('main')?.message ?? '', /has not joined a cluster/);
  });
});

describe('startContainer with the service environment variables (getServiceEnvVarMap)', () => {
  function setup(objects: FakeApiObjects) {
    const clock = new FakeClock(1_000_000);
    const events = new RecordingEventRecorder();
    const cri = new FakeCri()
      .onImage('ImageStatus', () => ({ image: { id: 'sha256:img' } }) as never)
      .onRuntime('ListPodSandbox', () => ({ items: [] }))
      .onRuntime('ListContainers', () => ({ containers: [] }))
      .onRuntime('RunPodSandbox', () => ({ podSandboxId: 'sb-new' }))
      .onRuntime('PodSandboxStatus', () => ({ info: {} }) as never)
      .onRuntime('CreateContainer', () => ({ containerId: 'c-new' }));
    const backOff = { initialMs: 10_000, maxMs: 300_000 };
    const manager = new RuntimeManager({ cri, images: new ImagePuller({ cri, events, clock, pullBackOff: backOff }), backOff: new CrashLoopBackOff(backOff), hooks: new FakeHookRunner(), events, node: NODE, clock, logger: silentLogger(), objects });
    const envOf = () => new Map(((cri.callsOf('CreateContainer')[0] as CreateContainerRequest | undefined)?.config?.envs ?? []).map((e) => [e.key, e.value]));
    return { cri, manager, envOf };
  }
  const noProbes = { liveness: () => undefined, startup: () => undefined };
  const withServices = () => {
    const objects = new FakeApiObjects();
    objects.serviceList.push(
      { metadata: { namespace: 'default', name: 'kubernetes' }, spec: { clusterIP: '10.96.0.1', ports: [{ name: 'https', port: 443 }] } },
      { metadata: { namespace: 'ns', name: 'fooservice' }, spec: { clusterIP: '10.96.0.11', ports: [{ port: 8765, targetPort: 8080 }] } },
      { metadata: { namespace: 'elsewhere', name: 'other' }, spec: { clusterIP: '10.96.0.12', ports: [{ port: 80 }] } },
    );
    return objects;
  };
  const c: Container = { name: 'main', image: 'i', env: [{ name: 'URL', value: 'http://$(FOOSERVICE_SERVICE_HOST):$(FOOSERVICE_SERVICE_PORT)' }, { name: 'KUBERNETES_SERVICE_PORT', value: 'mine' }] };

  it('the namespace\'s services and the master service give their variables; the container\'s own win and $(VAR) sees them', async () => {
    const { manager, envOf } = setup(withServices());
    const r = await manager.syncPod(pod(c), runtimePodStatus([], []), noProbes);
    assert.deepEqual(r.errors, new Map());
    const env = envOf();
    assert.equal(env.get('FOOSERVICE_SERVICE_HOST'), '10.96.0.11');
    assert.equal(env.get('FOOSERVICE_PORT_8765_TCP'), 'tcp://10.96.0.11:8765');
    assert.equal(env.get('KUBERNETES_SERVICE_HOST'), '10.96.0.1');
    assert.equal(env.get('KUBERNETES_SERVICE_PORT'), 'mine');
    assert.equal(env.get('URL'), 'http://10.96.0.11:8765');
    assert.equal(env.has('OTHER_SERVICE_HOST'), false, 'another namespace\'s service is not named');
  });

  it('enableServiceLinks false: only the master service', async () => {
    const { manager, envOf } = setup(withServices());
    const p = pod(c);
    p.spec.enableServiceLinks = false;
    await manager.syncPod(p, runtimePodStatus([], []), noProbes);
    assert.equal(envOf().get('KUBERNETES_SERVICE_HOST'), '10.96.0.1');
    assert.equal(envOf().has('FOOSERVICE_SERVICE_HOST'), false);
  });

  it('a node that has not joined a cluster: no service variables, the container starts', async () => {
    const objects = new FakeApiObjects();
    objects.servicesFailure = { code: 'NotJoined', message: 'this node has not joined a cluster' };
    const { manager, envOf } = setup(objects);
    const r = await manager.syncPod(pod(c), runtimePodStatus([], []), noProbes);
    assert.deepEqual(r.errors, new Map());
    assert.equal(envOf().has('KUBERNETES_SERVICE_HOST'), false);
  });

  it('services not listed once yet: an API pod\'s container waits (CreateContainerConfigError), a static pod\'s starts without them', async () => {
    const objects = new FakeApiObjects();
    objects.servicesFailure = { code: 'Unavailable', message: 'failed to sync service cache: connection refused' };
    const api = setup(objects);
    const r = await api.manager.syncPod(pod(c), runtimePodStatus([], []), noProbes);
    assert.equal(r.errors.get('main')?.reason, 'CreateContainerConfigError');
    assert.match(r.errors.get('main')?.message ?? '', /services have not yet been read at least once, cannot construct envvars/);
    const staticPod = pod(c);
    staticPod.metadata.annotations = { 'kubernetes.io/config.source': 'file' };
    const st = setup(objects);
    assert.deepEqual((await st.manager.syncPod(staticPod, runtimePodStatus([], []), noProbes)).errors, new Map());
  });
});
