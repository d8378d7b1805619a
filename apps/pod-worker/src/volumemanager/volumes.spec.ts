import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { Pod, Volume } from '@app/contracts';
import { FakeVolumeHost } from '../testing.js';
import { VolumeManager, VolumeMountError, checkHostPathType, downwardAPIPayload, emptyDirMemorySize, volumeHostPath, type FileKind } from './volumes.js';


const NODE = { cpuMillis: 4000, memoryBytes: 8 * 2 ** 30 };
const mkPod = (volumes: Volume[], extra: Partial<Pod['spec']> = {}): Pod => ({
  metadata: { name: 'web', namespace: 'ns', uid: 'u1', labels: { b: 'two', a: 'o"ne' }, annotations: { x: 'y' } },
  spec: { containers: [{ name: 'main', image: 'i', resources: { limits: { memory: '1Gi', cpu: '500m' }, requests: { cpu: '250m' } } }], volumes, ...extra },
});
const EMPTY = '/pods/u1/volumes/kubernetes.io~empty-dir';

describe('checkHostPathType (hostpath checkTypeInternal)', () => {
  const cases: { name: string; type: string | undefined; kind: FileKind; want: ReturnType<typeof checkHostPathType> }[] = [
    { name: 'no type: no check, even when missing', type: undefined, kind: 'missing', want: { ok: true } },
    { name: 'DirectoryOrCreate creates a missing directory', type: 'DirectoryOrCreate', kind: 'missing', want: { ok: true, create: 'directory' } },
    { name: 'DirectoryOrCreate refuses a file', type: 'DirectoryOrCreate', kind: 'file', want: { ok: false, message: 'hostPath type check failed: /p is not a directory' } },
    { name: 'Directory accepts a directory', type: 'Directory', kind: 'directory', want: { ok: true } },
    { name: 'Directory refuses a missing path', type: 'Directory', kind: 'missing', want: { ok: false, message: 'hostPath type check failed: /p is not a directory' } },
    { name: 'FileOrCreate creates a missing file', type: 'FileOrCreate', kind: 'missing', want: { ok: true, create: 'file' } },
    { name: 'File refuses a directory', type: 'File', kind: 'directory', want: { ok: false, message: 'hostPath type check failed: /p is not a file' } },
    { name: 'Socket refuses a file', type: 'Socket', kind: 'file', want: { ok: false, message: 'hostPath type check failed: /p is not a socket file' } },
    { name: 'Socket accepts a socket', type: 'Socket', kind: 'socket', want: { ok: true } },
    { name: 'CharDevice refuses a block device', type: 'CharDevice', kind: 'block', want: { ok: false, message: 'hostPath type check failed: /p is not a character device' } },
    { name: 'BlockDevice refuses a char device', type: 'BlockDevice', kind: 'char', want: { ok: false, message: 'hostPath type check failed: /p is not a block device' } },
    { name: 'an unknown type is invalid', type: 'Pipe', kind: 'file', want: { ok: false, message: 'Pipe is an invalid volume type' } },
  ];
  for (const tc of cases) it(tc.name, () => assert.deepEqual(checkHostPathType(tc.type, '/p', tc.kind), tc.want));
});

describe('emptyDirMemorySize (calculateEmptyDirMemorySize)', () => {
  const cases = [
    { name: 'sizeLimit under the pod limit wins', v: { name: 'm', emptyDir: { medium: 'Memory', sizeLimit: '16Mi' } }, pod: mkPod([]), want: 16 * 2 ** 20 },
    { name: 'no sizeLimit: the pod memory limit', v: { name: 'm', emptyDir: { medium: 'Memory' } }, pod: mkPod([]), want: 2 ** 30 },
    { name: 'a sizeLimit above the pod limit is ignored', v: { name: 'm', emptyDir: { medium: 'Memory', sizeLimit: '2Gi' } }, pod: mkPod([]), want: 2 ** 30 },
    { name: 'no limits at all: node allocatable', v: { name: 'm', emptyDir: { medium: 'Memory' } }, pod: { ...mkPod([]), spec: { containers: [{ name: 'c' }] } }, want: NODE.memoryBytes },
  ];
  for (const tc of cases) it(tc.name, () => assert.equal(emptyDirMemorySize(tc.pod, tc.v, NODE.memoryBytes), tc.want));
});

describe('downwardAPIPayload (downwardapi CollectData)', () => {
  it('fieldRefs and resourceFieldRefs, labels formatted as FormatMap, default and item modes', () => {
    const v: Volume = {
      name: 'info',
      downwardAPI: {
        items: [
          { path: 'name', fieldRef: { fieldPath: 'metadata.name' } },
          { path: 'ns', fieldRef: { fieldPath: 'metadata.namespace' } },
          { path: 'uid', fieldRef: { fieldPath: 'metadata.uid' } },
          { path: 'labels', fieldRef: { fieldPath: 'metadata.labels' }, mode: 0o600 },
          { path: 'sub/annotations', fieldRef: { fieldPath: 'metadata.annotations' } },
          { path: 'mem', resourceFieldRef: { containerName: 'main', resource: 'limits.memory', divisor: '1Mi' } },
          { path: 'cpu', resourceFieldRef: { containerName: 'main', resource: 'requests.cpu', divisor: '1m' } },
          { path: 'cpulimit', resourceFieldRef: { containerName: 'main', resource: 'limits.cpu' } },
        ],
      },
    };
    const got = Object.fromEntries([...downwardAPIPayload(mkPod([v]), v, NODE)].map(([k, f]) => [k, `${f.mode.toString(8)} ${Buffer.from(f.content).toString()}`]));
    assert.deepEqual(got, { name: '644 web', ns: '644 ns', uid: '644 u1', labels: '600 a="o\\"ne"\nb="two"', 'sub/annotations': '644 x="y"', mem: '644 1024', cpu: '644 250', cpulimit: '644 1' });
  });
  it('a limit not set falls back to the node allocatable', () => {
    const v: Volume = { name: 'info', downwardAPI: { items: [{ path: 'mem', resourceFieldRef: { containerName: 'c', resource: 'limits.memory' } }] } };
    const pod = { ...mkPod([v]), spec: { containers: [{ name: 'c' }], volumes: [v] } };
    assert.equal(downwardAPIPayload(pod, v, NODE).get('mem')?.content, String(NODE.memoryBytes));
  });
});

describe('VolumeManager', () => {
  it('mountPod sets up an emptyDir, a tmpfs of its size, a downwardAPI dir and a hostPath DirectoryOrCreate', async () => {
    const host = new FakeVolumeHost();
    const pod = mkPod([
      { name: 'work', emptyDir: {} },
      { name: 'mem', emptyDir: { medium: 'Memory', sizeLimit: '16Mi' } },
      { name: 'info', downwardAPI: { items: [{ path: 'name', fieldRef: { fieldPath: 'metadata.name' } }] } },
      { name: 'h', hostPath: { path: '/srv/h', type: 'DirectoryOrCreate' } },
    ]);
    await new VolumeManager(host, '/pods', NODE).mountPod(pod);
    assert.deepEqual(host.calls, [
      `mkdir ${EMPTY}/work 777`,
      `mkdir ${EMPTY}/mem 777`,
      `mountTmpfs ${EMPTY}/mem ${16 * 2 ** 20}`,
      'mkdir /pods/u1/volumes/kubernetes.io~downward-api/info 777',
      'writeAtomic /pods/u1/volumes/kubernetes.io~downward-api/info',
      'mkdir /srv/h 755',
    ]);
    host.calls.length = 0;
    await new VolumeManager(host, '/pods', NODE).mountPod(pod);
    assert.ok(!host.calls.some((c) => c.startsWith('mountTmpfs')), 'a tmpfs already mounted is not mounted again');
  });

  it('mountPod names every volume it cannot set up, with upstream\'s message, and sets up the others', async () => {
    const host = new FakeVolumeHost({ '/etc/hosts': 'file' });
    const pod = mkPod([
      { name: 'h', hostPath: { path: '/etc/hosts', type: 'Directory' } },
      { name: 'claim', persistentVolumeClaim: { claimName: 'data' } },
      { name: 'work', emptyDir: {} },
    ]);
    const err = await new VolumeManager(host, '/pods', NODE).mountPod(pod).then(() => undefined, (e: unknown) => e);
    assert.ok(err instanceof VolumeMountError);
    assert.deepEqual(err.failures, [
      { volume: 'h', message: 'MountVolume.SetUp failed for volume "h" : hostPath type check failed: /etc/hosts is not a directory' },
      { volume: 'claim', message: 'MountVolume.SetUp failed for volume "claim" : volume type persistentVolumeClaim is not supported on this node' },
    ]);
    assert.deepEqual(host.calls, [`mkdir ${EMPTY}/work 777`]);
  });

  it('unmountPod unmounts what is under the pod dir (deepest first, never elsewhere), then removes only the pod dir', async () => {
    const host = new FakeVolumeHost();
    for (const m of [`${EMPTY}/mem`, `${EMPTY}/mem/inner`, '/srv/h', '/pods/u10/x']) host.mounts.add(m);
    await new VolumeManager(host, '/pods', NODE).unmountPod(mkPod([]));
    assert.deepEqual(host.calls, [`unmount ${EMPTY}/mem/inner`, `unmount ${EMPTY}/mem`, 'removeAll /pods/u1']);
  });

  it('unmountPod does not remove the pod dir while a mount stays', async () => {
    const host = new FakeVolumeHost();
    host.mounts.add(`${EMPTY}/mem`);
    host.failUnmount = true;
    await assert.rejects(new VolumeManager(host, '/pods', NODE).unmountPod(mkPod([])), /still mounted/);
    assert.ok(!host.calls.some((c) => c.startsWith('removeAll')));
  });

  it('volumeHostPath (makeMounts): hostPath as is, emptyDir, downwardAPI, configMap, secret and projected under the pod dir, none for a claim', () => {
    const pod = mkPod([]);
    assert.equal(volumeHostPath(pod, { name: 'h', hostPath: { path: '/srv' } }, '/pods'), '/srv');
    assert.equal(volumeHostPath(pod, { name: 'x' }, '/pods'), `${EMPTY}/x`);
    assert.equal(volumeHostPath(pod, { name: 'd', downwardAPI: {} }, '/pods'), '/pods/u1/volumes/kubernetes.io~downward-api/d');
    assert.equal(volumeHostPath(pod, { name: 'c', configMap: { name: 'c' } }, '/pods'), '/pods/u1/volumes/kubernetes.io~configmap/c');
    assert.equal(volumeHostPath(pod, { name: 's', secret: { secretName: 's' } }, '/pods'), '/pods/u1/volumes/kubernetes.io~secret/s');
    assert.equal(volumeHostPath(pod, { name: 'p', projected: { sources: [] } }, '/pods'), '/pods/u1/volumes/kubernetes.io~projected/p');
    assert.equal(volumeHostPath(pod, { name: 'v', persistentVolumeClaim: { claimName: 'v' } }, '/pods'), undefined);
  });
});
