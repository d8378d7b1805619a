/**
 * The pod cgroups' pure part (helpers_linux_test.go TestResourceConfigForPod,
 * pod_container_manager_linux_test.go's names) and PodContainerManager on a
 * fake CgroupManager.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { Container, Pod } from '@app/contracts';
import { DEFAULT_RESOURCE_CONFIG_OPTIONS, PodContainerManager, cgroupFiles, cpuSharesToWeight, podCgroupParent, qosCpuShares, resourceConfigForPod, type ResourceConfig, type ResourceConfigOptions } from './pod-container-manager.js';
import { FakeCgroupManager } from '../testing.js';

const c = (name: string, requests?: Record<string, string>, limits?: Record<string, string>, extra: Partial<Container> = {}): Container => ({
  name,
  image: 'busybox',
  resources: { ...(requests ? { requests } : {}), ...(limits ? { limits } : {}) },
  ...extra,
});
const pod = (containers: Container[], initContainers?: Container[], uid = 'u1'): Pod => ({
  metadata: { name: 'p', namespace: 'default', uid },
  spec: { containers, ...(initContainers ? { initContainers } : {}) },
});
const MI = 1024 * 1024;

describe('resourceConfigForPod (ResourceConfigForPod)', () => {
  const cases: { name: string; pod: Pod; options?: Partial<ResourceConfigOptions>; want: ResourceConfig }[] = [
    {
      name: 'Guaranteed: shares from the requests, the CFS quota and the memory limit from the limits',
      pod: pod([c('a', undefined, { cpu: '500m', memory: '128Mi' })]),
      want: { cpuShares: 512, cpuQuota: 50_000, cpuPeriod: 100_000, memory: 128 * MI },
    },
    {
      name: 'Guaranteed with two containers: the limits add up',
      pod: pod([c('a', undefined, { cpu: '1', memory: '64Mi' }), c('b', undefined, { cpu: '250m', memory: '32Mi' })]),
      want: { cpuShares: 1280, cpuQuota: 125_000, cpuPeriod: 100_000, memory: 96 * MI },
    },
    {
      name: 'Burstable with every limit declared: quota and memory limit',
      pod: pod([c('a', { cpu: '100m', memory: '64Mi' }, { cpu: '200m', memory: '128Mi' })]),
      want: { cpuShares: 102, cpuQuota: 20_000, cpuPeriod: 100_000, memory: 128 * MI },
    },
    {
      name: 'Burstable, one container without a CPU limit: no quota; every memory limit declared: the sum',
      pod: pod([c('a', { cpu: '100m' }, { cpu: '200m', memory: '64Mi' }), c('b', { cpu: '100m' }, { memory: '64Mi' })]),
      want: { cpuShares: 204, memory: 128 * MI },
    },
    {
      name: 'Burstable with requests only: shares only',
      pod: pod([c('a', { cpu: '250m', memory: '64Mi' })]),
      want: { cpuShares: 256 },
    },
    {
      name: 'Burstable with a memory request only: the minimum shares',
      pod: pod([c('a', { memory: '64Mi' })]),
      want: { cpuShares: 2 },
    },
    {
      name: 'BestEffort: the minimum shares, nothing else',
      pod: pod([c('a'), c('b')]),
      want: { cpuShares: 2 },
    },
    {
      name: 'an init container above the main containers: its limit is the pod\'s',
      pod: pod([c('a', undefined, { cpu: '100m', memory: '64Mi' })], [c('init', undefined, { cpu: '1', memory: '256Mi' })]),
      want: { cpuShares: 1024, cpuQuota: 100_000, cpuPeriod: 100_000, memory: 256 * MI },
    },
    {
      name: 'a sidecar adds to the main containers',
      pod: pod([c('a', undefined, { cpu: '100m', memory: '64Mi' })], [c('side', undefined, { cpu: '100m', memory: '32Mi' }, { restartPolicy: 'Always' })]),
      want: { cpuShares: 204, cpuQuota: 20_000, cpuPeriod: 100_000, memory: 96 * MI },
    },
    {
      name: 'a tiny CPU limit: at least 1ms of quota and 2 shares',
      pod: pod([c('a', undefined, { cpu: '1m', memory: '16Mi' })]),
      want: { cpuShares: 2, cpuQuota: 1000, cpuPeriod: 100_000, memory: 16 * MI },
    },
    {
      name: 'CPU limits not enforced (--cpu-cfs-quota=false): quota -1',
      pod: pod([c('a', undefined, { cpu: '500m', memory: '128Mi' })]),
      options: { enforceCPULimits: false },
      want: { cpuShares: 512, cpuQuota: -1, cpuPeriod: 100_000, memory: 128 * MI },
    },
    {
      name: 'the node\'s pids limit on every pod',
      pod: pod([c('a')]),
      options: { podPidsLimit: 1024 },
      want: { cpuShares: 2, pidsLimit: 1024 },
    },
  ];
  for (const tc of cases) {
    it(tc.name, () => {
      assert.deepEqual(resourceConfigForPod(tc.pod, { ...DEFAULT_RESOURCE_CONFIG_OPTIONS, ...tc.options }), tc.want);
    });
  }
});

describe('cgroupFiles: the limits as the kernel\'s files', () => {
  const cases: { name: string; rc: ResourceConfig; version: 1 | 2; want: Record<string, string> }[] = [
    {
      name: 'v1: shares, period before quota, memory, pids',
      rc: { cpuShares: 512, cpuQuota: 50_000, cpuPeriod: 100_000, memory: 128 * MI, pidsLimit: 100 },
      version: 1,
      want: { 'cpu.shares': '512', 'cpu.cfs_period_us': '100000', 'cpu.cfs_quota_us': '50000', 'memory.limit_in_bytes': String(128 * MI), 'pids.max': '100' },
    },
    { name: 'v1: shares only', rc: { cpuShares: 2 }, version: 1, want: { 'cpu.shares': '2' } },
    {
      name: 'v2: weight, cpu.max, memory.max',
      rc: { cpuShares: 512, cpuQuota: 50_000, cpuPeriod: 100_000, memory: 128 * MI },
      version: 2,
      want: { 'cpu.weight': '20', 'cpu.max': '50000 100000', 'memory.max': String(128 * MI) },
    },
    { name: 'v2: no quota is max', rc: { cpuShares: 1024, cpuQuota: -1, cpuPeriod: 100_000 }, version: 2, want: { 'cpu.weight': '39', 'cpu.max': 'max 100000' } },
    { name: 'v2: BestEffort\'s weight is 1', rc: { cpuShares: 2 }, version: 2, want: { 'cpu.weight': '1' } },
  ];
  for (const tc of cases) it(tc.name, () => assert.deepEqual(cgroupFiles(tc.rc, tc.version), tc.want));

  it('cpu.weight spans 1 to 10000 over the shares\' range', () => {
    assert.equal(cpuSharesToWeight(2), 1);
    assert.equal(cpuSharesToWeight(262_144), 10_000);
  });
});

describe('the pod cgroup\'s name (GetPodContainerName, cgroupfs driver)', () => {
  const cases: { name: string; pod: Pod; root: string; want: string }[] = [
    { name: 'Guaranteed: directly under kubepods', pod: pod([c('a', undefined, { cpu: '1', memory: '1Gi' })]), root: '/', want: '/kubepods/podu1' },
    { name: 'Burstable', pod: pod([c('a', { cpu: '1' })]), root: '/', want: '/kubepods/burstable/podu1' },
    { name: 'BestEffort', pod: pod([c('a')]), root: '/', want: '/kubepods/besteffort/podu1' },
    { name: 'under a --cgroup-root', pod: pod([c('a')]), root: '/node-a/', want: '/node-a/kubepods/besteffort/podu1' },
  ];
  for (const tc of cases) it(tc.name, () => assert.equal(podCgroupParent(tc.pod, tc.root), tc.want));
});

describe('PodContainerManager', () => {
  const options = { ...DEFAULT_RESOURCE_CONFIG_OPTIONS, cgroupRoot: '/' };

  it('EnsureExists makes the QoS tree (BestEffort\'s with the minimum shares) and the pod\'s cgroup with its limits; again, nothing changes', async () => {
    const cgroups = new FakeCgroupManager();
    const pcm = new PodContainerManager(cgroups, options);
    const p = pod([c('a', { cpu: '100m', memory: '64Mi' }, { cpu: '200m', memory: '128Mi' })]);
    assert.equal(await pcm.exists(p), false);
    await pcm.ensureExists(p);
    await pcm.ensureExists(p);
    assert.deepEqual(
      [...cgroups.cgroups.entries()],
      [
        ['/kubepods', {}],
        ['/kubepods/burstable', {}],
        ['/kubepods/besteffort', { cpuShares: 2 }],
        ['/kubepods/burstable/podu1', { cpuShares: 102, cpuQuota: 20_000, cpuPeriod: 100_000, memory: 128 * MI }],
      ],
    );
    assert.equal(await pcm.exists(p), true);
    assert.deepEqual(cgroups.calls, ['cgroup create /kubepods/burstable/podu1']);
  });

  it('Destroy finds the pod\'s cgroup under any QoS parent (a pod known only from the runtime has no spec to tell), and leaves the tree', async () => {
    const cgroups = new FakeCgroupManager();
    const pcm = new PodContainerManager(cgroups, options);
    await pcm.ensureExists(pod([c('a', undefined, { cpu: '1', memory: '1Gi' })]));
    await pcm.destroy(pod([]));
    assert.deepEqual(cgroups.calls, ['cgroup create /kubepods/podu1', 'cgroup destroy /kubepods/podu1']);
    assert.deepEqual([...cgroups.cgroups.keys()], ['/kubepods', '/kubepods/burstable', '/kubepods/besteffort']);
  });

  it("Destroy kills what is left in the pod's cgroup first (a runc init a cut RunPodSandbox left), retrying a failed kill, then removes it", async () => {
    const cgroups = new FakeCgroupManager();
    const killed: number[] = [];
    let fails = 1;
    const pcm = new PodContainerManager(cgroups, options, undefined, (pid) => {
      if (pid === 42 && fails-- > 0) return Promise.reject(new Error('EPERM'));
      killed.push(pid);
      return Promise.resolve();
    });
    await pcm.ensureExists(pod([c('a')]));
    cgroups.procs.set('/kubepods/besteffort/podu1/sandbox1', [41, 42]);
    await pcm.destroy(pod([]));
    assert.deepEqual(killed, [41, 42]);
    assert.ok(cgroups.calls.includes('cgroup destroy /kubepods/besteffort/podu1'));
  });

  it('Destroy leaves the cgroup when a process cannot be killed, and says which', async () => {
    const cgroups = new FakeCgroupManager();
    const pcm = new PodContainerManager(cgroups, options, undefined, () => Promise.reject(new Error('EPERM')));
    await pcm.ensureExists(pod([c('a')]));
    cgroups.procs.set('/kubepods/besteffort/podu1', [7]);
    await assert.rejects(pcm.destroy(pod([])), /failed to kill all the processes attached to the cgroup: 7: EPERM/);
    assert.ok(!cgroups.calls.includes('cgroup destroy /kubepods/besteffort/podu1'));
  });
});

describe('qosCpuShares (qosContainerManager.setCPUCgroupConfig)', () => {
  const cases: { name: string; pods: Pod[]; want: { burstable: number; bestEffort: number } }[] = [
    { name: 'no pods: the minimum shares for both', pods: [], want: { burstable: 2, bestEffort: 2 } },
    {
      name: "Burstable: the sum of its pods' CPU requests; Guaranteed and BestEffort pods do not count",
      pods: [
        pod([c('a', { cpu: '100m' }, { cpu: '500m' })], undefined, 'b1'),
        pod([c('a', { cpu: '250m', memory: '10Mi' })], undefined, 'b2'),
        pod([c('a', undefined, { cpu: '1', memory: '64Mi' })], undefined, 'g1'),
        pod([c('a')], undefined, 'be1'),
      ],
      want: { burstable: 358, bestEffort: 2 },
    },
    { name: 'a Burstable pod with only a memory request: the minimum', pods: [pod([c('a', { memory: '10Mi' })])], want: { burstable: 2, bestEffort: 2 } },
  ];
  for (const tc of cases) it(tc.name, () => assert.deepEqual(qosCpuShares(tc.pods), tc.want));
});

describe('PodContainerManager: UpdateQOSCgroups', () => {
  it("sets the burstable parent's shares from the active pods when a pod's cgroup is made, and again once one is destroyed", async () => {
    const cgroups = new FakeCgroupManager();
    const a = pod([c('a', { cpu: '500m' })], undefined, 'a');
    const b = pod([c('b', { cpu: '250m' })], undefined, 'b');
    let active = [a];
    const pcm = new PodContainerManager(cgroups, { ...DEFAULT_RESOURCE_CONFIG_OPTIONS, cgroupRoot: '/' }, { activePods: () => Promise.resolve(active) });
    await pcm.ensureExists(a);
    assert.equal(cgroups.cgroups.get('/kubepods/burstable')?.cpuShares, 512);
    assert.equal(cgroups.cgroups.get('/kubepods/besteffort')?.cpuShares, 2);
    active = [a, b];
    await pcm.ensureExists(b);
    assert.equal(cgroups.cgroups.get('/kubepods/burstable')?.cpuShares, 768);
    active = [b];
    await pcm.destroy(a);
    assert.equal(cgroups.cgroups.get('/kubepods/burstable')?.cpuShares, 256);
  });

  it('updates asked while one runs share one more run after it: a burst of 20 pod cgroups reads the active pods twice, and the shares count every pod', async () => {
    const cgroups = new FakeCgroupManager();
    const pods = Array.from({ length: 20 }, (_, i) => pod([c('a', { cpu: '100m' })], undefined, `p${i}`));
    let reads = 0;
    const pcm = new PodContainerManager(cgroups, { ...DEFAULT_RESOURCE_CONFIG_OPTIONS, cgroupRoot: '/' }, { activePods: () => (reads++, new Promise<Pod[]>((r) => setImmediate(() => r(pods)))) });
    await Promise.all(pods.map((p) => pcm.ensureExists(p)));
    assert.equal(reads, 2, 'the first update, and one for every caller that came while it ran');
    assert.equal(cgroups.cgroups.get('/kubepods/burstable')?.cpuShares, 2048, '20 × 100m');
    for (const p of pods) assert.ok(await pcm.exists(p));
    await pcm.updateQOSCgroups();
    assert.equal(reads, 3, 'a later call reads again');
  });

  it('the QoS tree is made once for many pods, and again after a pod cgroup could not be made', async () => {
    const made: string[] = [];
    let failPods = 0;
    const cgroups = new (class extends FakeCgroupManager {
      override create(name: string[], resources: ResourceConfig): Promise<void> {
        const key = `/${name.join('/')}`;
        if (key.includes('/pod') && failPods > 0) return (failPods--, Promise.reject(new Error(`mkdir ${key}: ENOENT`)));
        made.push(key);
        return super.create(name, resources);
      }
    })();
    const pcm = new PodContainerManager(cgroups, { ...DEFAULT_RESOURCE_CONFIG_OPTIONS, cgroupRoot: '/' });
    for (let i = 0; i < 5; i++) await pcm.ensureExists(pod([c('a', { cpu: '100m' })], undefined, `p${i}`));
    assert.deepEqual(made.filter((k) => !k.includes('/pod')), ['/kubepods', '/kubepods/burstable', '/kubepods/besteffort'], 'the tree once for five pods');
    failPods = 1;
    await pcm.ensureExists(pod([c('a', { cpu: '100m' })], undefined, 'p5'));
    assert.deepEqual(made.filter((k) => !k.includes('/pod')).length, 6, 'made again before the retry');
    assert.ok(await pcm.exists(pod([c('a', { cpu: '100m' })], undefined, 'p5')));
  });

  it('a failed update is reported, and the pod cgroup is made all the same', async () => {
    const cgroups = new FakeCgroupManager();
    const errors: string[] = [];
    const pcm = new PodContainerManager(cgroups, { ...DEFAULT_RESOURCE_CONFIG_OPTIONS, cgroupRoot: '/' }, { activePods: () => Promise.reject(new Error('KV away')), onUpdateError: (e) => errors.push(e.message) });
    const a = pod([c('a', { cpu: '500m' })], undefined, 'a');
    await pcm.ensureExists(a);
    assert.deepEqual(errors, ['KV away']);
    assert.ok(await pcm.exists(a));
  });
});
