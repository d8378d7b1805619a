import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { Container, Pod, Probe } from '@app/contracts';
import { applyPodDefaults, defaultImagePullPolicy } from './defaults.js';

const DIGEST = `sha256:${'a'.repeat(64)}`;

function podWith(container: Partial<Container>, spec: Partial<Pod['spec']> = {}): Pod {
  return { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'web' }, spec: { containers: [{ name: 'app', image: 'busybox:1.35', ...container }], ...spec } };
}

function firstContainer(pod: Pod): Container {
  const c = pod.spec.containers[0];
  assert.ok(c);
  return c;
}

describe('applyPodDefaults: imagePullPolicy by image form', () => {
  const cases: { name: string; image: string | undefined; want: Container['imagePullPolicy'] }[] = [
    { name: 'no tag: latest implied', image: 'busybox', want: 'Always' },
    { name: 'tag latest', image: 'busybox:latest', want: 'Always' },
    { name: 'a version tag', image: 'busybox:1.35', want: 'IfNotPresent' },
    { name: 'a registry with a port and no tag', image: 'localhost:5000/busybox', want: 'Always' },
    { name: 'a registry with a port and a tag', image: 'localhost:5000/busybox:1', want: 'IfNotPresent' },
    { name: 'a registry with a port and tag latest', image: 'localhost:5000/busybox:latest', want: 'Always' },
    { name: 'a digest', image: `busybox@${DIGEST}`, want: 'IfNotPresent' },
    { name: 'a registry with a port and a digest', image: `localhost:5000/busybox@${DIGEST}`, want: 'IfNotPresent' },
    { name: 'tag latest and a digest: the tag decides', image: `busybox:latest@${DIGEST}`, want: 'Always' },
    { name: 'a version tag and a digest', image: `busybox:1.35@${DIGEST}`, want: 'IfNotPresent' },
    { name: 'a full name without tag', image: 'docker.io/library/busybox', want: 'Always' },
    { name: 'a nested path with a tag', image: 'registry.example.com/team/app:v2', want: 'IfNotPresent' },
    { name: 'the project image', image: 'localhost/kubelet-split/busybox:1.35', want: 'IfNotPresent' },
    { name: 'an unparseable reference (uppercase)', image: 'BusyBox', want: 'IfNotPresent' },
    { name: 'no image', image: undefined, want: 'IfNotPresent' },
    { name: 'an empty image', image: '', want: 'IfNotPresent' },
  ];
  for (const tc of cases) {
    it(tc.name, () => {
      assert.equal(defaultImagePullPolicy(tc.image), tc.want);
      const c: Partial<Container> = tc.image === undefined ? {} : { image: tc.image };
      const pod = podWith({});
      delete firstContainer(pod).image;
      Object.assign(firstContainer(pod), c);
      assert.equal(firstContainer(applyPodDefaults(pod)).imagePullPolicy, tc.want);
    });
  }

  it('keeps a policy that is set', () => {
    assert.equal(firstContainer(applyPodDefaults(podWith({ image: 'busybox', imagePullPolicy: 'Never' }))).imagePullPolicy, 'Never');
  });

  it('defaults init containers too', () => {
    const out = applyPodDefaults(podWith({}, { initContainers: [{ name: 'init', image: 'busybox' }] }));
    assert.equal(out.spec.initContainers?.[0]?.imagePullPolicy, 'Always');
    assert.equal(out.spec.initContainers?.[0]?.terminationMessagePath, '/dev/termination-log');
  });
});

describe('applyPodDefaults: pod spec', () => {
  const cases: { name: string; spec: Partial<Pod['spec']>; check: (s: Pod['spec']) => void }[] = [
    {
      name: 'an empty spec gets every default',
      spec: {},
      check: (s) => {
        assert.equal(s.restartPolicy, 'Always');
        assert.equal(s.terminationGracePeriodSeconds, 30);
        assert.equal(s.dnsPolicy, 'ClusterFirst');
        assert.equal(s.schedulerName, 'default-scheduler');
        assert.deepEqual(s.securityContext, {});
        assert.equal(s.enableServiceLinks, true);
      },
    },
    { name: 'restartPolicy Never is kept', spec: { restartPolicy: 'Never' }, check: (s) => assert.equal(s.restartPolicy, 'Never') },
    { name: 'a grace period of 0 is kept (a pointer in Go, not a zero value)', spec: { terminationGracePeriodSeconds: 0 }, check: (s) => assert.equal(s.terminationGracePeriodSeconds, 0) },
    { name: 'dnsPolicy Default is kept', spec: { dnsPolicy: 'Default' }, check: (s) => assert.equal(s.dnsPolicy, 'Default') },
    { name: 'enableServiceLinks false is kept', spec: { enableServiceLinks: false }, check: (s) => assert.equal(s.enableServiceLinks, false) },
    { name: 'a securityContext is kept', spec: { securityContext: { runAsUser: 1000 } }, check: (s) => assert.deepEqual(s.securityContext, { runAsUser: 1000 }) },
    { name: 'a schedulerName is kept', spec: { schedulerName: 'mine' }, check: (s) => assert.equal(s.schedulerName, 'mine') },
    {
      name: 'volumes without a source become emptyDir; others are kept',
      spec: { volumes: [{ name: 'scratch' }, { name: 'host', hostPath: { path: '/var/log' } }, { name: 'mem', emptyDir: { medium: 'Memory' } }] },
      check: (s) =>
        assert.deepEqual(s.volumes, [
          { name: 'scratch', emptyDir: {} },
          { name: 'host', hostPath: { path: '/var/log', type: '' } },
          { name: 'mem', emptyDir: { medium: 'Memory' } },
        ]),
    },
    {
      name: 'a volume of another source (configMap) is not given an emptyDir',
      spec: { volumes: [{ name: 'cfg', configMap: { name: 'x' } }] },
      check: (s) => assert.deepEqual(s.volumes, [{ name: 'cfg', configMap: { name: 'x', defaultMode: 0o644 } }]),
    },
    {
      name: 'with hostNetwork, a port without hostPort gets its containerPort',
      spec: { hostNetwork: true, containers: [{ name: 'app', image: 'busybox:1', ports: [{ containerPort: 8080 }, { containerPort: 9090, hostPort: 9090 }] }] },
      check: (s) => assert.deepEqual(s.containers[0]?.ports, [{ containerPort: 8080, hostPort: 8080, protocol: 'TCP' }, { containerPort: 9090, hostPort: 9090, protocol: 'TCP' }]),
    },
    {
      name: 'without hostNetwork, hostPort is left unset',
      spec: { containers: [{ name: 'app', image: 'busybox:1', ports: [{ containerPort: 8080, protocol: 'UDP' }] }] },
      check: (s) => assert.deepEqual(s.containers[0]?.ports, [{ containerPort: 8080, protocol: 'UDP' }]),
    },
  ];
  for (const tc of cases) {
    it(tc.name, () => tc.check(applyPodDefaults(podWith({}, tc.spec)).spec));
  }

  it('leaves metadata.namespace as it is', () => {
    assert.equal(applyPodDefaults(podWith({})).metadata.namespace, undefined);
    const pod = podWith({});
    pod.metadata.namespace = 'kube-system';
    assert.equal(applyPodDefaults(pod).metadata.namespace, 'kube-system');
  });
});

describe('applyPodDefaults: containers', () => {
  const cases: { name: string; container: Partial<Container>; check: (c: Container) => void }[] = [
    {
      name: 'termination message path and policy',
      container: {},
      check: (c) => {
        assert.equal(c.terminationMessagePath, '/dev/termination-log');
        assert.equal(c.terminationMessagePolicy, 'File');
      },
    },
    {
      name: 'a set termination message policy is kept',
      container: { terminationMessagePath: '/tmp/msg', terminationMessagePolicy: 'FallbackToLogsOnError' },
      check: (c) => {
        assert.equal(c.terminationMessagePath, '/tmp/msg');
        assert.equal(c.terminationMessagePolicy, 'FallbackToLogsOnError');
      },
    },
    { name: 'ports get protocol TCP', container: { ports: [{ containerPort: 80 }, { containerPort: 53, protocol: 'UDP' }] }, check: (c) => assert.deepEqual(c.ports?.map((p) => p.protocol), ['TCP', 'UDP']) },
    {
      name: 'requests default to limits, resource by resource',
      container: { resources: { limits: { cpu: '500m', memory: '64Mi' }, requests: { cpu: '100m' } } },
      check: (c) => assert.deepEqual(c.resources, { limits: { cpu: '500m', memory: '64Mi' }, requests: { cpu: '100m', memory: '64Mi' } }),
    },
    { name: 'requests alone are left alone', container: { resources: { requests: { cpu: '100m' } } }, check: (c) => assert.deepEqual(c.resources, { requests: { cpu: '100m' } }) },
    {
      name: "a fieldRef's apiVersion defaults to v1",
      container: { env: [{ name: 'POD_NAME', valueFrom: { fieldRef: { fieldPath: 'metadata.name' } } }, { name: 'A', value: 'b' }] },
      check: (c) => assert.deepEqual(c.env, [{ name: 'POD_NAME', valueFrom: { fieldRef: { apiVersion: 'v1', fieldPath: 'metadata.name' } } }, { name: 'A', value: 'b' }]),
    },
    {
      name: 'lifecycle httpGet gets path / and scheme HTTP',
      container: { lifecycle: { postStart: { httpGet: { port: 80 } }, preStop: { exec: { command: ['true'] } } } },
      check: (c) => assert.deepEqual(c.lifecycle, { postStart: { httpGet: { port: 80, path: '/', scheme: 'HTTP' } }, preStop: { exec: { command: ['true'] } } }),
    },
  ];
  for (const tc of cases) {
    it(tc.name, () => tc.check(firstContainer(applyPodDefaults(podWith(tc.container)))));
  }
});

describe('applyPodDefaults: probes', () => {
  const PROBE_DEFAULTS = { timeoutSeconds: 1, periodSeconds: 10, successThreshold: 1, failureThreshold: 3 };
  const cases: { name: string; probe: Probe; want: Probe }[] = [
    { name: 'an exec probe gets the four numbers', probe: { exec: { command: ['true'] } }, want: { exec: { command: ['true'] }, ...PROBE_DEFAULTS } },
    {
      name: 'an httpGet probe also gets path and scheme',
      probe: { httpGet: { port: 'web' } },
      want: { httpGet: { port: 'web', path: '/', scheme: 'HTTP' }, ...PROBE_DEFAULTS },
    },
    {
      name: 'set values are kept',
      probe: { httpGet: { port: 80, path: '/healthz', scheme: 'HTTPS' }, timeoutSeconds: 5, periodSeconds: 2, successThreshold: 2, failureThreshold: 7, initialDelaySeconds: 3 },
      want: { httpGet: { port: 80, path: '/healthz', scheme: 'HTTPS' }, timeoutSeconds: 5, periodSeconds: 2, successThreshold: 2, failureThreshold: 7, initialDelaySeconds: 3 },
    },
    {
      name: "0 is Go's unset and gets the default",
      probe: { tcpSocket: { port: 80 }, timeoutSeconds: 0, periodSeconds: 0, successThreshold: 0, failureThreshold: 0 },
      want: { tcpSocket: { port: 80 }, ...PROBE_DEFAULTS },
    },
    { name: 'negative values are kept for validation to refuse', probe: { tcpSocket: { port: 80 }, periodSeconds: -1 }, want: { tcpSocket: { port: 80 }, ...PROBE_DEFAULTS, periodSeconds: -1 } },
    { name: 'a grpc probe gets an empty service', probe: { grpc: { port: 9000 } }, want: { grpc: { port: 9000, service: '' }, ...PROBE_DEFAULTS } },
  ];
  for (const tc of cases) {
    it(tc.name, () => {
      const out = firstContainer(applyPodDefaults(podWith({ livenessProbe: tc.probe, readinessProbe: tc.probe, startupProbe: tc.probe })));
      assert.deepEqual(out.livenessProbe, tc.want);
      assert.deepEqual(out.readinessProbe, tc.want);
      assert.deepEqual(out.startupProbe, tc.want);
    });
  }
});

describe('applyPodDefaults: the input', () => {
  it('is never changed, and the result shares nothing with it', () => {
    const pod = podWith(
      { image: 'busybox', ports: [{ containerPort: 80 }], livenessProbe: { httpGet: { port: 80 } } },
      { volumes: [{ name: 'v' }], initContainers: [{ name: 'init', image: 'busybox' }] },
    );
    const before = structuredClone(pod);
    const out = applyPodDefaults(pod);
    assert.deepEqual(pod, before);
    assert.notEqual(out, pod);
    assert.notEqual(out.spec, pod.spec);
    assert.notEqual(out.spec.containers[0], pod.spec.containers[0]);
    firstContainer(out).name = 'changed';
    assert.equal(firstContainer(pod).name, 'app');
  });

  it('copes with a pod read from a file that lacks spec or holds non-objects', () => {
    const out = applyPodDefaults({ metadata: { name: 'x' } } as unknown as Pod);
    assert.deepEqual(out.spec.containers, []);
    assert.equal(out.spec.restartPolicy, 'Always');
    const odd = applyPodDefaults({ metadata: {}, spec: { containers: ['not a container'], volumes: 'nope' } } as unknown as Pod);
    assert.deepEqual(odd.spec.containers, ['not a container']);
  });
});
