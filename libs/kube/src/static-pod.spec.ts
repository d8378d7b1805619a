import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { Pod } from '@app/contracts';
import {
  ConfigFirstSeenAnnotation,
  ConfigHashAnnotation,
  ConfigMirrorAnnotation,
  ConfigSourceAnnotation,
  isMirrorPod,
  isStaticPod,
  makeStaticPod,
  type StaticPodOrigin,
} from './static-pod.js';
import { validatePod } from './validation/spec.js';

function manifest(): Pod {
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name: 'web', labels: { app: 'web' } },
    spec: { containers: [{ name: 'app', image: 'busybox:1.35', command: ['sleep', '3600'] }] },
  };
}

const FILE: StaticPodOrigin = { source: 'file', location: '/etc/kubelet-split/manifests/web.yaml', nodeName: 'node-a' };
const HTTP: StaticPodOrigin = { source: 'http', location: 'http://config.example/pods', nodeName: 'node-a' };

describe('makeStaticPod: the UID and the config hash', () => {
  const base = makeStaticPod(manifest(), FILE).metadata.uid;

  it('is a 32-digit hex digest', () => assert.match(base ?? '', /^[0-9a-f]{32}$/));
  it('config.hash is the UID (applyDefaults)', () => assert.equal(makeStaticPod(manifest(), FILE).metadata.annotations?.[ConfigHashAnnotation], base));

  // pkg/kubelet/config/common.go applyDefaults: the UID digests the whole pod and its source, so any edit is a new pod.
  const changed = (edit: (p: Pod) => void) => () => {
    const p = manifest();
    edit(p);
    return p;
  };
  const cases: { name: string; pod: () => Pod; origin: StaticPodOrigin; same: boolean }[] = [
    { name: 'the same manifest at the same place on the same node: the same UID', pod: manifest, origin: FILE, same: true },
    {
      name: 'the same manifest with its keys in another order: the same UID',
      pod: () => ({ spec: { containers: [{ command: ['sleep', '3600'], image: 'busybox:1.35', name: 'app' }] }, metadata: { labels: { app: 'web' }, name: 'web' }, kind: 'Pod', apiVersion: 'v1' }),
      origin: FILE,
      same: true,
    },
    { name: 'a changed container: a new UID', pod: changed((p) => (p.spec.containers[0] = { name: 'app', image: 'busybox:1.36', command: ['sleep', '3600'] })), origin: FILE, same: false },
    { name: 'a changed label: a new UID', pod: changed((p) => (p.metadata.labels = { app: 'web2' })), origin: FILE, same: false },
    { name: 'a volume added: a new UID', pod: changed((p) => (p.spec.volumes = [{ name: 'data', emptyDir: {} }])), origin: FILE, same: false },
    { name: 'hostAliases edited: a new UID', pod: changed((p) => (p.spec.hostAliases = [{ ip: '10.0.0.9', hostnames: ['db'] }])), origin: FILE, same: false },
    { name: 'the pod securityContext edited: a new UID', pod: changed((p) => (p.spec.securityContext = { runAsUser: 1000 })), origin: FILE, same: false },
    { name: 'dnsConfig edited: a new UID', pod: changed((p) => (p.spec.dnsConfig = { nameservers: ['10.0.0.10'] })), origin: FILE, same: false },
    { name: 'a default written out explicitly: a new UID (it digests the manifest as read)', pod: changed((p) => (p.spec.restartPolicy = 'Always')), origin: FILE, same: false },
    { name: 'another name: another UID', pod: () => ({ ...manifest(), metadata: { name: 'web2', labels: { app: 'web' } } }), origin: FILE, same: false },
    { name: 'another namespace: another UID', pod: () => ({ ...manifest(), metadata: { name: 'web', namespace: 'other', labels: { app: 'web' } } }), origin: FILE, same: false },
    { name: 'another node: another UID', pod: manifest, origin: { ...FILE, nodeName: 'node-b' }, same: false },
    { name: 'another file path: another UID', pod: manifest, origin: { ...FILE, location: '/etc/kubelet-split/manifests/web2.yaml' }, same: false },
    { name: 'the same location from http instead of a file: another UID', pod: manifest, origin: { ...FILE, source: 'http' }, same: false },
  ];
  for (const tc of cases) {
    it(tc.name, () => {
      const out = makeStaticPod(tc.pod(), tc.origin);
      if (tc.same) assert.equal(out.metadata.uid, base);
      else assert.notEqual(out.metadata.uid, base);
      assert.equal(out.metadata.annotations?.[ConfigHashAnnotation], out.metadata.uid);
    });
  }

  it('an http source: the URL decides, not the node', () => {
    const a = makeStaticPod(manifest(), HTTP).metadata.uid;
    const b = makeStaticPod(manifest(), { ...HTTP, nodeName: 'node-b' }).metadata.uid;
    const c = makeStaticPod(manifest(), { ...HTTP, location: 'http://config.example/other' }).metadata.uid;
    assert.equal(a, b);
    assert.notEqual(a, c);
  });

  it('a UID written in the manifest is kept, and is the config hash (as upstream)', () => {
    const p = manifest();
    const out = makeStaticPod({ ...p, metadata: { ...p.metadata, uid: 'given-uid' } }, FILE);
    assert.equal(out.metadata.uid, 'given-uid');
    assert.equal(out.metadata.annotations?.[ConfigHashAnnotation], 'given-uid');
  });
});

describe('makeStaticPod: the pod', () => {
  const cases: { name: string; pod: () => Pod; origin: StaticPodOrigin; check: (p: Pod) => void }[] = [
    { name: 'the name gets the node name as suffix', pod: manifest, origin: FILE, check: (p) => assert.equal(p.metadata.name, 'web-node-a') },
    { name: 'the suffix is the node name lowercased', pod: manifest, origin: { ...FILE, nodeName: 'Node-A.Example' }, check: (p) => assert.equal(p.metadata.name, 'web-node-a.example') },
    {
      name: 'a missing name stays missing, for validation to report',
      pod: () => ({ ...manifest(), metadata: {} }),
      origin: FILE,
      check: (p) => {
        assert.equal(p.metadata.name, undefined);
        assert.deepEqual(validatePod(p).map((e) => e.field), ['metadata.name']);
      },
    },
    { name: 'an empty namespace becomes "default"', pod: manifest, origin: FILE, check: (p) => assert.equal(p.metadata.namespace, 'default') },
    { name: 'a namespace is kept', pod: () => ({ ...manifest(), metadata: { name: 'web', namespace: 'kube-system' } }), origin: FILE, check: (p) => assert.equal(p.metadata.namespace, 'kube-system') },
    { name: 'spec.nodeName is the node', pod: manifest, origin: FILE, check: (p) => assert.equal(p.spec.nodeName, 'node-a') },
    {
      name: 'config.hash is a digest of the manifest, config.source the source; no config.seen',
      pod: manifest,
      origin: FILE,
      check: (p) => {
        assert.match(p.metadata.annotations?.[ConfigHashAnnotation] ?? '', /^[0-9a-f]{32}$/);
        assert.equal(p.metadata.annotations?.[ConfigSourceAnnotation], 'file');
        assert.equal(p.metadata.annotations?.[ConfigFirstSeenAnnotation], undefined);
      },
    },
    { name: 'an http pod says source http', pod: manifest, origin: HTTP, check: (p) => assert.equal(p.metadata.annotations?.[ConfigSourceAnnotation], 'http') },
    {
      name: "the manifest's own annotations are kept, the config ones overwritten",
      pod: () => ({ ...manifest(), metadata: { name: 'web', annotations: { team: 'a', [ConfigSourceAnnotation]: 'api' } } }),
      origin: FILE,
      check: (p) => {
        assert.equal(p.metadata.annotations?.['team'], 'a');
        assert.equal(p.metadata.annotations?.[ConfigSourceAnnotation], 'file');
      },
    },
    { name: 'a file pod tolerates every NoExecute taint', pod: manifest, origin: FILE, check: (p) => assert.deepEqual(p.spec.tolerations, [{ operator: 'Exists', effect: 'NoExecute' }]) },
    {
      name: 'the toleration is not added twice',
      pod: () => ({ ...manifest(), spec: { ...manifest().spec, tolerations: [{ key: 'a', operator: 'Exists' }, { operator: 'Exists', effect: 'NoExecute', tolerationSeconds: 5 }] } }),
      origin: FILE,
      check: (p) => assert.deepEqual(p.spec.tolerations, [{ key: 'a', operator: 'Exists' }, { operator: 'Exists', effect: 'NoExecute' }]),
    },
    { name: 'an http pod gets no toleration', pod: manifest, origin: HTTP, check: (p) => assert.equal(p.spec.tolerations, undefined) },
    { name: 'the phase is Pending', pod: manifest, origin: FILE, check: (p) => assert.equal(p.status?.phase, 'Pending') },
    {
      name: "the API server's defaults are applied",
      pod: manifest,
      origin: FILE,
      check: (p) => {
        assert.equal(p.spec.restartPolicy, 'Always');
        assert.equal(p.spec.terminationGracePeriodSeconds, 30);
        assert.equal(p.spec.containers[0]?.imagePullPolicy, 'IfNotPresent');
        assert.equal(p.spec.containers[0]?.terminationMessagePath, '/dev/termination-log');
      },
    },
    { name: 'the result is a valid pod', pod: manifest, origin: FILE, check: (p) => assert.deepEqual(validatePod(p), []) },
    { name: 'an http result is a valid pod', pod: manifest, origin: HTTP, check: (p) => assert.deepEqual(validatePod(p), []) },
  ];
  for (const tc of cases) it(tc.name, () => tc.check(makeStaticPod(tc.pod(), tc.origin)));

  it('never changes its input', () => {
    const p = manifest();
    const before = structuredClone(p);
    makeStaticPod(p, FILE);
    assert.deepEqual(p, before);
  });
});

describe('isStaticPod and isMirrorPod', () => {
  const withAnnotations = (annotations?: Record<string, string>): Pod => ({ metadata: { name: 'p', ...(annotations ? { annotations } : {}) }, spec: { containers: [] } });
  const cases: { name: string; pod: Pod; static: boolean; mirror: boolean }[] = [
    { name: 'from a file', pod: withAnnotations({ [ConfigSourceAnnotation]: 'file' }), static: true, mirror: false },
    { name: 'from http', pod: withAnnotations({ [ConfigSourceAnnotation]: 'http' }), static: true, mirror: false },
    { name: 'from the API server', pod: withAnnotations({ [ConfigSourceAnnotation]: 'api' }), static: false, mirror: false },
    { name: 'without annotations', pod: withAnnotations(), static: false, mirror: false },
    { name: 'a mirror pod', pod: withAnnotations({ [ConfigSourceAnnotation]: 'api', [ConfigMirrorAnnotation]: 'abc' }), static: false, mirror: true },
    { name: 'a mirror pod with an empty mirror annotation', pod: withAnnotations({ [ConfigMirrorAnnotation]: '' }), static: false, mirror: true },
    { name: 'the output of makeStaticPod', pod: makeStaticPod(manifest(), FILE), static: true, mirror: false },
  ];
  for (const tc of cases) {
    it(tc.name, () => {
      assert.equal(isStaticPod(tc.pod), tc.static);
      assert.equal(isMirrorPod(tc.pod), tc.mirror);
    });
  }

  it('the annotation keys are the kubelet’s', () => {
    assert.deepEqual(
      [ConfigSourceAnnotation, ConfigHashAnnotation, ConfigFirstSeenAnnotation, ConfigMirrorAnnotation],
      ['kubernetes.io/config.source', 'kubernetes.io/config.hash', 'kubernetes.io/config.seen', 'kubernetes.io/config.mirror'],
    );
  });
});
