import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { DockerKeyring, dockerConfigOf, repositoryOf, urlsMatch } from './keyring.js';

const b64 = (s: string) => Buffer.from(s).toString('base64');
const jsonSecret = (auths: Record<string, unknown>) => ({ data: { '.dockerconfigjson': b64(JSON.stringify({ auths })) }, binaryData: {}, secretType: 'kubernetes.io/dockerconfigjson' });
const user = (u: string) => ({ username: u, password: `${u}-pw` });

describe('repositoryOf (parsers.ParseImageName)', () => {
  const cases = [
    { image: 'busybox', want: 'docker.io/library/busybox' },
    { image: 'busybox:1.35', want: 'docker.io/library/busybox' },
    { image: 'library/busybox@sha256:abc', want: 'docker.io/library/busybox' },
    { image: 'me/app:v1', want: 'docker.io/me/app' },
    { image: 'index.docker.io/me/app', want: 'docker.io/me/app' },
    { image: 'registry.example.com:5000/team/app:v2', want: 'registry.example.com:5000/team/app' },
    { image: 'localhost/kubelet-split/busybox:1.35', want: 'localhost/kubelet-split/busybox' },
    { image: 'gcr.io/proj/img@sha256:0123', want: 'gcr.io/proj/img' },
  ];
  for (const tc of cases) it(tc.image, () => assert.equal(repositoryOf(tc.image), tc.want));
});

describe('urlsMatch (URLsMatchStr)', () => {
  const cases = [
    { name: 'a host matches its repositories', glob: 'registry.example.com', target: 'registry.example.com/team/app', want: true },
    { name: 'a path prefix matches below it', glob: 'registry.example.com/team', target: 'registry.example.com/team/app', want: true },
    { name: 'another path does not', glob: 'registry.example.com/other', target: 'registry.example.com/team/app', want: false },
    { name: 'a wildcard part matches one part', glob: '*.example.com', target: 'registry.example.com/app', want: true },
    { name: 'a wildcard part does not match two', glob: '*.example.com', target: 'a.registry.example.com/app', want: false },
    { name: 'the port must be the same', glob: 'registry.example.com:5000', target: 'registry.example.com/app', want: false },
    { name: 'with the same port it matches', glob: 'registry.example.com:5000', target: 'registry.example.com:5000/app', want: true },
    { name: 'a glob in the middle', glob: 'reg-?.example.com', target: 'reg-1.example.com/app', want: true },
    { name: 'another host does not', glob: 'quay.io', target: 'gcr.io/app', want: false },
  ];
  for (const tc of cases) it(tc.name, () => assert.equal(urlsMatch(tc.glob, tc.target), tc.want));
});

describe('DockerKeyring (BasicDockerKeyring.Lookup) over pull secrets', () => {
  it('reads kubernetes.io/dockerconfigjson, with `auth` winning over username and password', () => {
    const cfg = dockerConfigOf(jsonSecret({ 'https://registry.example.com/v1/': { username: 'x', password: 'y', auth: b64('alice:pa:ss') } }));
    assert.deepEqual([...cfg], [['https://registry.example.com/v1/', { username: 'alice', password: 'pa:ss' }]]);
  });

  it('reads kubernetes.io/dockercfg (the entries without "auths")', () => {
    const cfg = dockerConfigOf({ data: { '.dockercfg': b64(JSON.stringify({ 'quay.io': { username: 'bob', password: 'pw' } })) }, binaryData: {}, secretType: 'kubernetes.io/dockercfg' });
    assert.deepEqual([...cfg], [['quay.io', { username: 'bob', password: 'pw' }]]);
  });

  it('an Opaque secret holds no registry', () => {
    assert.equal(dockerConfigOf({ data: { '.dockerconfigjson': b64('{}') }, binaryData: {}, secretType: 'Opaque' }).size, 0);
  });

  const keyring = new DockerKeyring([
    dockerConfigOf(jsonSecret({ 'https://registry.example.com/v2/': user('host'), 'registry.example.com/team': user('team'), '*.corp.io': user('wild'), 'https://index.docker.io/v1/': user('hub') })),
  ]);
  const cases = [
    { name: 'the most specific path first, then the host', repo: 'registry.example.com/team/app', want: ['team', 'host'] },
    { name: 'only the host for another path', repo: 'registry.example.com/other/app', want: ['host'] },
    { name: 'a wildcard host', repo: 'r1.corp.io/app', want: ['wild'] },
    { name: 'Docker Hub images get the index.docker.io entry', repo: 'docker.io/library/busybox', want: ['hub'] },
    { name: 'no match: anonymous', repo: 'gcr.io/proj/img', want: [] },
  ];
  for (const tc of cases) it(tc.name, () => assert.deepEqual(keyring.lookup(tc.repo).map((c) => c.username), tc.want));
});
