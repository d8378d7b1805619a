import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { Pod, Volume } from '@app/contracts';
import { FakeApiObjects, FakeServiceAccountTokens, FakeVolumeHost } from '../testing.js';
import { VolumeManager, VolumeMountError, makeObjectPayload, type PayloadFile } from './volumes.js';

const NODE = { cpuMillis: 4000, memoryBytes: 8 * 2 ** 30 };
const VOL = '/pods/u1/volumes';
const b64 = (s: string) => Buffer.from(s).toString('base64');

const mkPod = (volumes: Volume[]): Pod => ({
  metadata: { name: 'web', namespace: 'ns', uid: 'u1', labels: { app: 'web' } },
  spec: { containers: [{ name: 'main', image: 'i', resources: { limits: { memory: '1Gi' } } }], volumes },
});

/** What was written into a volume: path -> `content (mode)`, text shown as text. */
function shown(files: Map<string, PayloadFile> | undefined): Record<string, string> {
  return Object.fromEntries([...(files ?? new Map<string, PayloadFile>())].map(([p, f]) => [p, `${Buffer.from(f.content).toString()} (${f.mode.toString(8)})`]));
}

async function mount(volumes: Volume[], objects: FakeApiObjects, host = new FakeVolumeHost(), tokens = new FakeServiceAccountTokens()) {
  const err = await new VolumeManager(host, '/pods', NODE, objects, tokens).mountPod(mkPod(volumes)).then(() => undefined, (e: unknown) => e);
  return { host, err, failures: err instanceof VolumeMountError ? err.failures.map((f) => f.message) : err === undefined ? [] : [(err as Error).message] };
}

function objects(): FakeApiObjects {
  const o = new FakeApiObjects();
  o.put('ConfigMap', 'ns', 'settings', { data: { 'app.conf': 'level=info', mode: 'fast' }, binaryData: { 'logo.bin': b64('\x00\x01') } });
  o.put('Secret', 'ns', 'creds', { data: { user: b64('admin'), password: b64('s3cret') }, secretType: 'Opaque' });
  return o;
}

describe('configMap, secret and projected volumes (pkg/volume/configmap, secret, projected)', () => {
  const cases: { name: string; volumes: Volume[]; want?: Record<string, Record<string, string>>; failures?: string[]; tmpfs?: string[] }[] = [
    {
      name: 'a configMap: every key (data and binaryData) at its own name with the default mode 0644, on disk',
      volumes: [{ name: 'cfg', configMap: { name: 'settings' } }],
      want: { [`${VOL}/kubernetes.io~configmap/cfg`]: { 'app.conf': 'level=info (644)', mode: 'fast (644)', 'logo.bin': '\x00\x01 (644)' } },
      tmpfs: [],
    },
    {
      name: 'a configMap with items: only those keys, at their paths, with their mode or defaultMode',
      volumes: [{ name: 'cfg', configMap: { name: 'settings', defaultMode: 0o400, items: [{ key: 'app.conf', path: 'etc/app.conf', mode: 0o600 }, { key: 'mode', path: 'mode.txt' }] } }],
      want: { [`${VOL}/kubernetes.io~configmap/cfg`]: { 'etc/app.conf': 'level=info (600)', 'mode.txt': 'fast (400)' } },
    },
    {
      name: 'a missing configMap is upstream\'s "not found", and nothing of the volume is made',
      volumes: [{ name: 'cfg', configMap: { name: 'nope' } }],
      failures: ['MountVolume.SetUp failed for volume "cfg" : configmap "nope" not found'],
    },
    {
      name: 'a missing optional configMap is an empty volume',
      volumes: [{ name: 'cfg', configMap: { name: 'nope', optional: true } }],
      want: { [`${VOL}/kubernetes.io~configmap/cfg`]: {} },
    },
    {
      name: 'an item whose key the configMap lacks fails the volume',
      volumes: [{ name: 'cfg', configMap: { name: 'settings', items: [{ key: 'absent', path: 'a' }] } }],
      failures: ['MountVolume.SetUp failed for volume "cfg" : configmap references non-existent config key: absent'],
    },
    {
      name: 'an item whose key an optional configMap lacks is left out',
      volumes: [{ name: 'cfg', configMap: { name: 'settings', optional: true, items: [{ key: 'absent', path: 'a' }, { key: 'mode', path: 'm' }] } }],
      want: { [`${VOL}/kubernetes.io~configmap/cfg`]: { m: 'fast (644)' } },
    },
    {
      name: 'an item path that leaves the volume is refused (AtomicWriter validatePath)',
      volumes: [{ name: 'cfg', configMap: { name: 'settings', items: [{ key: 'mode', path: '../../etc/passwd' }] } }],
      failures: ["MountVolume.SetUp failed for volume \"cfg\" : invalid path: must not contain '..': ../../etc/passwd"],
    },
    {
      name: 'a secret: its base64 data decoded, on a tmpfs of the pod\'s memory limit',
      volumes: [{ name: 'sec', secret: { secretName: 'creds', defaultMode: 0o440 } }],
      want: { [`${VOL}/kubernetes.io~secret/sec`]: { user: 'admin (440)', password: 's3cret (440)' } },
      tmpfs: [`mountTmpfs ${VOL}/kubernetes.io~secret/sec ${2 ** 30}`],
    },
    {
      name: 'a missing secret is upstream\'s "not found"; an item the secret lacks fails',
      volumes: [{ name: 'sec', secret: { secretName: 'nope' } }, { name: 'sec2', secret: { secretName: 'creds', items: [{ key: 'token', path: 't' }] } }],
      failures: ['MountVolume.SetUp failed for volume "sec" : secret "nope" not found', 'MountVolume.SetUp failed for volume "sec2" : references non-existent secret key: token'],
    },
    {
      name: 'a projected volume: configMap, secret and downwardAPI sources in one payload with its defaultMode, on a tmpfs',
      volumes: [
        {
          name: 'all',
          projected: {
            defaultMode: 0o444,
            sources: [
              { configMap: { name: 'settings', items: [{ key: 'mode', path: 'cfg/mode' }] } },
              { secret: { name: 'creds', items: [{ key: 'user', path: 'sec/user', mode: 0o400 }] } },
              { downwardAPI: { items: [{ path: 'labels', fieldRef: { fieldPath: 'metadata.labels' } }] } },
              { configMap: { name: 'absent', optional: true } },
            ],
          },
        },
      ],
      want: { [`${VOL}/kubernetes.io~projected/all`]: { 'cfg/mode': 'fast (444)', 'sec/user': 'admin (400)', labels: 'app="web" (444)' } },
      tmpfs: [`mountTmpfs ${VOL}/kubernetes.io~projected/all ${2 ** 30}`],
    },
    {
      name: 'a projected serviceAccountToken: the pod\'s service account token with its audience and expiration (the API\'s 3600 s by default)',
      volumes: [{ name: 'api', projected: { defaultMode: 420, sources: [{ serviceAccountToken: { path: 'token' } }, { serviceAccountToken: { path: 'vault-token', audience: 'vault', expirationSeconds: 600 } }] } }],
      want: { [`${VOL}/kubernetes.io~projected/api`]: { token: 'token-of-default-for-web(,3600) (644)', 'vault-token': 'token-of-default-for-web(vault,600) (644)' } },
    },
  ];
  for (const tc of cases) {
    it(tc.name, async () => {
      const { host, failures } = await mount(tc.volumes, objects());
      assert.deepEqual(failures, tc.failures ?? []);
      if (tc.want) for (const [dir, files] of Object.entries(tc.want)) assert.deepEqual(shown(host.written.get(dir)), files, dir);
      if (tc.failures) assert.deepEqual(host.calls, [], 'a volume that fails makes nothing');
      if (tc.tmpfs) assert.deepEqual(host.calls.filter((c) => c.startsWith('mountTmpfs')), tc.tmpfs);
    });
  }

  it('a token that cannot be had fails the projected volume with why, beside a missing secret', async () => {
    const tokens = new FakeServiceAccountTokens();
    tokens.failWith('Unavailable', 'failed to fetch token: serviceaccounts "default" not found');
    const { failures, host } = await mount([{ name: 'api', projected: { sources: [{ serviceAccountToken: { path: 'token' } }, { secret: { name: 'nope' } }] } }], objects(), new FakeVolumeHost(), tokens);
    assert.deepEqual(failures, ['MountVolume.SetUp failed for volume "api" : [failed to fetch token: serviceaccounts "default" not found, secret "nope" not found]']);
    assert.deepEqual(host.calls, []);
  });

  it('without a source of tokens, a serviceAccountToken projection is a FailedMount naming it', async () => {
    const err = await new VolumeManager(new FakeVolumeHost(), '/pods', NODE, objects()).mountPod(mkPod([{ name: 'api', projected: { sources: [{ serviceAccountToken: { path: 'token' } }] } }])).then(() => undefined, (e: unknown) => e);
    assert.ok(err instanceof VolumeMountError);
    assert.deepEqual(err.failures.map((f) => f.message), ['MountVolume.SetUp failed for volume "api" : serviceAccountToken projection (path token) is not supported by this pod worker: it has no source of tokens']);
  });

  it('asks config-source for each object in the pod\'s namespace', async () => {
    const o = objects();
    await mount([{ name: 'cfg', configMap: { name: 'settings' } }, { name: 'sec', secret: { secretName: 'creds' } }], o);
    assert.deepEqual(o.asked, ['ConfigMap ns/settings', 'Secret ns/creds']);
  });

  it('a changed configMap is written at the next mount (the pod\'s next sync); the secret\'s tmpfs is mounted once', async () => {
    const o = objects();
    const host = new FakeVolumeHost();
    const volumes: Volume[] = [{ name: 'cfg', configMap: { name: 'settings' } }, { name: 'sec', secret: { secretName: 'creds' } }];
    await mount(volumes, o, host);
    o.put('ConfigMap', 'ns', 'settings', { data: { mode: 'slow' } });
    await mount(volumes, o, host);
    assert.deepEqual(shown(host.written.get(`${VOL}/kubernetes.io~configmap/cfg`)), { mode: 'slow (644)' });
    assert.equal(host.calls.filter((c) => c.startsWith('mountTmpfs')).length, 1);
  });

  it('a configMap deleted after the volume was set up: its refresh fails (returned, for a FailedMount), the volume keeps its content and holds nothing back', async () => {
    const o = objects();
    const host = new FakeVolumeHost();
    const volumes: Volume[] = [{ name: 'cfg', configMap: { name: 'settings', items: [{ key: 'mode', path: 'm' }] } }];
    const manager = new VolumeManager(host, '/pods', NODE, o, new FakeServiceAccountTokens());
    assert.deepEqual(await manager.mountPod(mkPod(volumes)), []);
    o.remove('ConfigMap', 'ns', 'settings');
    assert.deepEqual(await manager.mountPod(mkPod(volumes)), [{ volume: 'cfg', message: 'MountVolume.SetUp failed for volume "cfg" : configmap "settings" not found' }]);
    assert.deepEqual(shown(host.written.get(`${VOL}/kubernetes.io~configmap/cfg`)), { m: 'fast (644)' });
  });

  it('config-source not answering holds back only volumes never set up', async () => {
    const o = objects();
    const host = new FakeVolumeHost();
    const manager = new VolumeManager(host, '/pods', NODE, o, new FakeServiceAccountTokens());
    await manager.mountPod(mkPod([{ name: 'cfg', configMap: { name: 'settings' } }]));
    o.failWith('Unavailable', 'config-source did not answer for ConfigMap ns/settings: 503');
    const err = await manager.mountPod(mkPod([{ name: 'cfg', configMap: { name: 'settings' } }, { name: 'sec', secret: { secretName: 'creds' } }])).then(() => undefined, (e: unknown) => e);
    assert.ok(err instanceof VolumeMountError);
    assert.deepEqual(err.failures.map((f) => f.volume), ['sec']);
  });

  it('a node that has not joined a cluster says so, for an optional object too', async () => {
    const o = objects();
    o.failWith('NotJoined', 'this node has not joined a cluster (config-source has no KUBECONFIG): configmap "settings" cannot be read from an apiserver');
    const { failures } = await mount([{ name: 'cfg', configMap: { name: 'settings', optional: true } }], o);
    assert.deepEqual(failures, ['MountVolume.SetUp failed for volume "cfg" : this node has not joined a cluster (config-source has no KUBECONFIG): configmap "settings" cannot be read from an apiserver']);
  });

  it('makeObjectPayload keeps binary content as bytes', () => {
    const files = makeObjectPayload('Secret', undefined, { data: { k: Buffer.from([0, 255, 1]).toString('base64') }, binaryData: {} }, 0o644, false);
    assert.deepEqual([...Buffer.from(files.get('k')?.content ?? '')], [0, 255, 1]);
  });
});
