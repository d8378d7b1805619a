import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { FakeClock } from '@app/clock/testing';
import { FakeCri } from '@app/cri/testing';
import type { Pod, Volume } from '@app/contracts';
import { CriStatsProvider } from './cri-stats-provider.js';
import { FakeHostStats, FakeStatsPods } from './testing.js';
import { VolumeStatsCache, isLocalEphemeralVolume } from './volume-stats.js';

const T0 = Date.UTC(2026, 0, 1);
const V = '/pods/u1/volumes';
const pod: Pod = {
  metadata: { name: 'web', namespace: 'prod', uid: 'u1' },
  spec: {
    containers: [],
    volumes: [
      { name: 'cache', emptyDir: {} },
      { name: 'mem', emptyDir: { medium: 'Memory', sizeLimit: '8Mi' } },
      { name: 'conf', configMap: { name: 'web-conf' } },
      { name: 'token', secret: { secretName: 'web-token' } },
      { name: 'host', hostPath: { path: '/etc' } },
    ],
  },
};

function fixture() {
  const clock = new FakeClock(T0);
  const host = new FakeHostStats();
  host.dirs.set(`${V}/kubernetes.io~empty-dir/cache`, { usedBytes: 40_960, inodesUsed: 4 });
  host.dirs.set(`${V}/kubernetes.io~empty-dir/mem`, { usedBytes: 4096, inodesUsed: 2 });
  host.dirs.set(`${V}/kubernetes.io~configmap/conf`, { usedBytes: 8192, inodesUsed: 5 });
  host.dirs.set(`${V}/kubernetes.io~secret/token`, { usedBytes: 4096, inodesUsed: 3 });
  host.dirs.set('/etc', { usedBytes: 1, inodesUsed: 1 });
  const disk = { capacityBytes: 20_000_000, availableBytes: 15_000_000, usedBytes: 5_000_000, inodes: 2000, inodesFree: 1500 };
  for (const v of ['kubernetes.io~empty-dir/cache', 'kubernetes.io~configmap/conf']) host.fs.set(`${V}/${v}`, disk);
  const tmpfs = { capacityBytes: 8 * 1024 * 1024, availableBytes: 8 * 1024 * 1024 - 4096, usedBytes: 4096, inodes: 100, inodesFree: 98 };
  for (const v of ['kubernetes.io~empty-dir/mem', 'kubernetes.io~secret/token']) host.fs.set(`${V}/${v}`, tmpfs);
  const cache = new VolumeStatsCache(host, clock, { podRootDir: '/pods', periodMs: 60_000 });
  return { clock, host, cache };
}

describe('isLocalEphemeralVolume', () => {
  const cases: { name: string; volume: Volume; want: boolean }[] = [
    { name: 'a disk emptyDir', volume: { name: 'a', emptyDir: {} }, want: true },
    { name: 'a memory emptyDir', volume: { name: 'a', emptyDir: { medium: 'Memory' } }, want: false },
    { name: 'a configMap', volume: { name: 'a', configMap: { name: 'c' } }, want: true },
    { name: 'a secret', volume: { name: 'a', secret: { secretName: 's' } }, want: false },
    { name: 'a hostPath', volume: { name: 'a', hostPath: { path: '/x' } }, want: false },
  ];
  for (const tc of cases) it(tc.name, () => assert.equal(isLocalEphemeralVolume(tc.volume), tc.want));
});

describe('VolumeStatsCache (fsResourceAnalyzer)', () => {
  it('reports each volume with a directory: du-like usage, statfs bounds; no hostPath', async () => {
    const { cache } = fixture();
    const s = await cache.podVolumeStats(pod);
    const time = new Date(T0).toISOString();
    assert.deepEqual(s.ephemeral, [
      { name: 'cache', time, availableBytes: 15_000_000, capacityBytes: 20_000_000, usedBytes: 40_960, inodes: 2000, inodesFree: 1500, inodesUsed: 4 },
      { name: 'conf', time, availableBytes: 15_000_000, capacityBytes: 20_000_000, usedBytes: 8192, inodes: 2000, inodesFree: 1500, inodesUsed: 5 },
    ]);
    assert.deepEqual(s.persistent.map((v) => [v.name, v.capacityBytes, v.usedBytes]), [['mem', 8 * 1024 * 1024, 4096], ['token', 8 * 1024 * 1024, 4096]]);
  });

  it('walks a pod\'s volumes once per period: cached within it, refreshed behind the stale figures after it', async () => {
    const { cache, clock, host } = fixture();
    await cache.podVolumeStats(pod);
    host.dirs.set(`${V}/kubernetes.io~empty-dir/cache`, { usedBytes: 81_920, inodesUsed: 5 });
    await clock.step(59_000);
    assert.equal((await cache.podVolumeStats(pod)).ephemeral[0]?.usedBytes, 40_960, 'within the period: the cached walk');
    assert.equal(cache.walks, 1);
    await clock.step(1000);
    assert.equal((await cache.podVolumeStats(pod)).ephemeral[0]?.usedBytes, 40_960, 'the stale figures while the refresh runs');
    await cache.settled();
    assert.equal((await cache.podVolumeStats(pod)).ephemeral[0]?.usedBytes, 81_920);
    assert.equal(cache.walks, 2);
  });

  it('forgets a pod that is gone', async () => {
    const { cache } = fixture();
    await cache.podVolumeStats(pod);
    cache.prune(new Set());
    await cache.podVolumeStats(pod);
    assert.equal(cache.walks, 2);
  });
});

describe('CriStatsProvider with volumes', () => {
  it('serves the pod\'s volumes and counts the local ephemeral ones in its ephemeral-storage', async () => {
    const { clock, host, cache } = fixture();
    const cri = new FakeCri();
    const desired = new FakeStatsPods();
    desired.add(pod);
    cri.onRuntime('ListPodSandbox', () => ({ items: [{ id: 'sb1', metadata: undefined, state: 'SANDBOX_READY', createdAt: String(T0 * 1e6), labels: { 'io.kubernetes.pod.uid': 'u1' }, annotations: {}, runtimeHandler: '' }] }));
    cri.onRuntime('ListContainers', () => ({ containers: [] }));
    cri.onRuntime('ListContainerStats', () => ({ stats: [] }));
    cri.onImage('ImageFsInfo', () => ({ imageFilesystems: [], containerFilesystems: [] }));
    const provider = new CriStatsProvider(cri, desired, host, clock, { nodeName: 'n1', podRootDir: '/pods', podLogsDir: '/logs', volumes: cache });
    const [p] = (await provider.summary()).pods;
    assert.deepEqual(p?.volume?.map((v) => v.name), ['cache', 'conf', 'mem', 'token']);
    assert.deepEqual([p?.['ephemeral-storage']?.usedBytes, p?.['ephemeral-storage']?.inodesUsed], [40_960 + 8192, 4 + 5]);
  });
});
