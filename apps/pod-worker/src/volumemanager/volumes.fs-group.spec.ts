import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { lstatSync, mkdtempSync, readlinkSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Pod, Volume } from '@app/contracts';
import { FsVolumeHost } from '../adapters/fs-volume-host.js';
import { FakeApiObjects, FakeVolumeHost } from '../testing.js';
import { VolumeManager } from './volumes.js';

const NODE = { cpuMillis: 2000, memoryBytes: 2 ** 30 };
const mkPod = (volumes: Volume[], fsGroup?: number): Pod => ({
  metadata: { name: 'web', namespace: 'ns', uid: 'u1' },
  spec: { containers: [{ name: 'main', image: 'i' }], volumes, ...(fsGroup !== undefined ? { securityContext: { runAsUser: 1000, fsGroup } } : {}) },
});

describe('VolumeManager under a pod fsGroup (SetVolumeOwnership)', () => {
  it('gives each volume to the group: the read-only kinds with their files\' modes and the group\'s read, an emptyDir read-write', async () => {
    const host = new FakeVolumeHost();
    const objects = new FakeApiObjects();
    objects.put('Secret', 'ns', 'creds', { data: { 'data-1': Buffer.from('value-1').toString('base64') }, secretType: 'Opaque' });
    const pod = mkPod([{ name: 's', secret: { secretName: 'creds', defaultMode: 0o440 } }, { name: 'scratch', emptyDir: {} }, { name: 'info', downwardAPI: { items: [{ path: 'name', fieldRef: { fieldPath: 'metadata.name' } }] } }], 1001);
    await new VolumeManager(host, '/pods', NODE, objects).mountPod(pod);
    const ownership = host.calls.filter((c) => c.startsWith('setOwnership'));
    assert.deepEqual(ownership, [
      'setOwnership /pods/u1/volumes/kubernetes.io~secret/s 1001 ro',
      'setOwnership /pods/u1/volumes/kubernetes.io~empty-dir/scratch 1001 rw',
      'setOwnership /pods/u1/volumes/kubernetes.io~downward-api/info 1001 ro',
    ]);
    // The payload is written with the modes the ownership leaves, so that the next sync finds it unchanged.
    assert.equal(host.written.get('/pods/u1/volumes/kubernetes.io~secret/s')?.get('data-1')?.mode, 0o440);
    assert.equal(host.written.get('/pods/u1/volumes/kubernetes.io~downward-api/info')?.get('name')?.mode, 0o644 | 0o440);
  });

  it('sets it when the content is written or the emptyDir made, not again at every sync (a user\'s own files keep their modes)', async () => {
    const host = new FakeVolumeHost();
    const pod = mkPod([{ name: 'scratch', emptyDir: {} }, { name: 'info', downwardAPI: { items: [{ path: 'name', fieldRef: { fieldPath: 'metadata.name' } }] } }], 1001);
    const manager = new VolumeManager(host, '/pods', NODE);
    await manager.mountPod(pod);
    host.kinds['/pods/u1/volumes/kubernetes.io~empty-dir/scratch'] = 'directory';
    host.calls.length = 0;
    await manager.mountPod(pod);
    assert.deepEqual(host.calls.filter((c) => c.startsWith('setOwnership')), []);
    await manager.mountPod({ ...pod, metadata: { ...pod.metadata, name: 'renamed' } });
    assert.deepEqual(host.calls.filter((c) => c.startsWith('setOwnership')), ['setOwnership /pods/u1/volumes/kubernetes.io~downward-api/info 1001 ro']);
  });

  it('leaves ownership alone without an fsGroup', async () => {
    const host = new FakeVolumeHost();
    await new VolumeManager(host, '/pods', NODE).mountPod(mkPod([{ name: 'scratch', emptyDir: {} }]));
    assert.ok(!host.calls.some((c) => c.startsWith('setOwnership')));
  });
});

describe('FsVolumeHost.setOwnership (changeFilePermission)', () => {
  it('sets the group on every file, link and directory, the group\'s share on files and setgid on directories, never following a link', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'ks-fsgroup-'));
    const outside = mkdtempSync(join(tmpdir(), 'ks-fsgroup-outside-'));
    try {
      const host = new FsVolumeHost();
      await host.writeAtomic(dir, new Map([['data-1', { content: 'value-1', mode: 0o400 }]]));
      await host.setOwnership(dir, 1234, true);
      const data = join(dir, '..data', 'data-1');
      assert.equal(statSync(data).gid, 1234);
      assert.equal(statSync(data).mode & 0o7777, 0o440);
      assert.equal(lstatSync(join(dir, 'data-1')).gid, 1234, 'the user-visible link itself is the group\'s');
      assert.equal(readlinkSync(join(dir, 'data-1')), join('..data', 'data-1'));
      const tsDir = join(dir, readlinkSync(join(dir, '..data')));
      assert.equal(statSync(tsDir).mode & 0o7777, 0o755 | 0o440 | 0o110 | 0o2000);
      assert.equal(statSync(outside).gid, 0, 'nothing outside the volume changed');

      const rw = mkdtempSync(join(tmpdir(), 'ks-fsgroup-rw-'));
      try {
        await host.setOwnership(rw, 1234, false);
        assert.equal(statSync(rw).mode & 0o7777, (0o700 | 0o660 | 0o110 | 0o2000));
        assert.equal(statSync(rw).gid, 1234);
      } finally {
        rmSync(rw, { recursive: true, force: true });
      }
    } finally {
      rmSync(dir, { recursive: true, force: true });
      rmSync(outside, { recursive: true, force: true });
    }
  });
});
