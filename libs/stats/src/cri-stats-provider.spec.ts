import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { FakeClock } from '@app/clock/testing';
import { CriError, type ContainerStats as CriContainerStats, type ListContainerStatsResponse, type ListPodSandboxStatsResponse } from '@app/cri';
import { FakeCri } from '@app/cri/testing';
import { CPU_CACHE_PERIOD_MS, CpuUsageCache, CriStatsProvider } from './cri-stats-provider.js';
import { renderResourceMetrics } from './resource-metrics.js';
import { FakeHostStats, FakeStatsPods } from './testing.js';

const S = 1e9;
const T0 = Date.UTC(2026, 0, 1);
const ns = (ms: number) => String(ms * 1e6);

describe('CpuUsageCache (cpuUsageCache)', () => {
  const cases: { name: string; samples: [number, number][]; want: (number | undefined)[] }[] = [
    { name: 'no rate from the first sample', samples: [[0, 5 * S]], want: [undefined] },
    { name: 'half a core over 10 s', samples: [[0, 5 * S], [10 * S, 10 * S]], want: [undefined, 500_000_000] },
    { name: 'two cores over 1 s, then idle', samples: [[0, 0], [1 * S, 2 * S], [2 * S, 2 * S]], want: [undefined, 2_000_000_000, 0] },
    { name: 'a counter that went back (a new instance) gives no rate, then counts from there', samples: [[0, 9 * S], [1 * S, 1 * S], [2 * S, 1.25 * S]], want: [undefined, undefined, 250_000_000] },
    { name: 'no rate over a zero interval', samples: [[1 * S, 1 * S], [1 * S, 2 * S]], want: [undefined, undefined] },
  ];
  for (const tc of cases)
    it(tc.name, () => {
      const cache = new CpuUsageCache(new FakeClock());
      assert.deepEqual(tc.samples.map(([t, u]) => cache.usageNanoCores('c1', t, u)), tc.want);
    });

  it('forgets a container not seen for the cache period', async () => {
    const clock = new FakeClock();
    const cache = new CpuUsageCache(clock);
    cache.usageNanoCores('gone', 0, 1);
    await clock.step(CPU_CACHE_PERIOD_MS - 1);
    cache.usageNanoCores('live', 0, 1);
    cache.prune();
    assert.equal(cache.size, 2);
    await clock.step(2);
    cache.prune();
    assert.equal(cache.size, 1);
    assert.equal(cache.usageNanoCores('live', S, 1 + S / 4), 250_000_000);
  });
});

/** A node with pod `web` (containers app and sidecar, an older dead app) and a sandbox of a pod not desired. */
function fixture() {
  const clock = new FakeClock(T0);
  const cri = new FakeCri();
  const desired = new FakeStatsPods();
  const host = new FakeHostStats();
  desired.add({ metadata: { name: 'web', namespace: 'prod', uid: 'u1' }, spec: { containers: [] } });
  const labels = (uid: string, name?: string) => ({ 'io.kubernetes.pod.uid': uid, ...(name ? { 'io.kubernetes.container.name': name } : {}) });
  cri.onRuntime('ListPodSandbox', () => ({
    items: [
      { id: 'sb-old', metadata: undefined, state: 'SANDBOX_NOTREADY', createdAt: ns(T0 - 60_000), labels: labels('u1'), annotations: {}, runtimeHandler: '' },
      { id: 'sb1', metadata: undefined, state: 'SANDBOX_READY', createdAt: ns(T0 - 30_000), labels: labels('u1'), annotations: {}, runtimeHandler: '' },
      { id: 'sb-other', metadata: undefined, state: 'SANDBOX_READY', createdAt: ns(T0), labels: labels('stranger'), annotations: {}, runtimeHandler: '' },
    ],
  }));
  const ctr = (id: string, sandbox: string, name: string, state: 'CONTAINER_RUNNING' | 'CONTAINER_EXITED', createdMs: number, uid = 'u1') => ({
    id, podSandboxId: sandbox, metadata: { name, attempt: 0 }, image: undefined, imageRef: '', state, createdAt: ns(createdMs), labels: labels(uid, name), annotations: {}, imageId: '',
  });
  cri.onRuntime('ListContainers', () => ({
    containers: [ctr('app-dead', 'sb1', 'app', 'CONTAINER_EXITED', T0 - 25_000), ctr('app', 'sb1', 'app', 'CONTAINER_RUNNING', T0 - 20_000), ctr('side', 'sb1', 'sidecar', 'CONTAINER_RUNNING', T0 - 19_000), ctr('x', 'sb-other', 'x', 'CONTAINER_RUNNING', T0, 'stranger')],
  }));
  /** CPU: each container's cumulative ns at the clock's now. */
  const cpu: Record<string, number> = { app: 1 * S, side: 0.5 * S, 'app-dead': 3 * S, x: 7 * S };
  const stat = (id: string): CriContainerStats => ({
    attributes: { id, metadata: undefined, labels: {}, annotations: {} },
    cpu: { timestamp: ns(clock.now()), usageCoreNanoSeconds: { value: String(cpu[id] ?? 0) }, usageNanoCores: undefined, psi: undefined },
    memory: { timestamp: ns(clock.now()), workingSetBytes: { value: id === 'app' ? '3000' : '1000' }, usageBytes: { value: '5000' }, availableBytes: undefined, rssBytes: { value: '800' }, pageFaults: undefined, majorPageFaults: undefined, psi: undefined },
    writableLayer: { timestamp: ns(clock.now()), fsId: { mountpoint: '/var/lib/containerd' }, usedBytes: { value: '4096' }, inodesUsed: { value: '3' } },
    swap: undefined,
    io: undefined,
  });
  cri.onRuntime('ListContainerStats', (): ListContainerStatsResponse => ({ stats: ['app-dead', 'app', 'side', 'x'].map(stat) }));
  cri.onImage('ImageFsInfo', () => ({ imageFilesystems: [{ timestamp: ns(T0), fsId: { mountpoint: '/var/lib/containerd' }, usedBytes: { value: '1000000' }, inodesUsed: { value: '50' } }], containerFilesystems: [] }));
  host.fs.set('/var/lib/containerd', { capacityBytes: 10_000_000, availableBytes: 6_000_000, usedBytes: 4_000_000, inodes: 1000, inodesFree: 900 });
  host.fs.set('/pods', { capacityBytes: 20_000_000, availableBytes: 15_000_000, usedBytes: 5_000_000, inodes: 2000, inodesFree: 1500 });
  host.dirs.set('/logs/prod_web_u1/app', { usedBytes: 8192, inodesUsed: 2 });
  host.nodeStats = { startTimeMs: T0 - 3_600_000, cpu: { timestampNs: T0 * 1e6, usageCoreNanoSeconds: 100 * S }, memory: { usageBytes: 9000, workingSetBytes: 7000, availableBytes: 1000 }, rlimit: { maxpid: 4096, curproc: 300 } };
  const provider = new CriStatsProvider(cri, desired, host, clock, { nodeName: 'n1', podRootDir: '/pods', podLogsDir: '/logs' });
  return { clock, cri, desired, host, cpu, provider };
}

describe('CriStatsProvider: the Summary API from the CRI and the host', () => {
  it('serves the desired pods only, each with its running containers, their rootfs and logs, in v1alpha1 field names', async () => {
    const { provider } = fixture();
    const s = await provider.summary();
    assert.deepEqual(s.pods.map((p) => p.podRef), [{ name: 'web', namespace: 'prod', uid: 'u1' }]);
    const [pod] = s.pods;
    assert.equal(pod?.startTime, new Date(T0 - 30_000).toISOString(), 'the ready sandbox\'s creation');
    assert.deepEqual(pod?.containers.map((c) => [c.name, c.startTime, c.cpu?.usageCoreNanoSeconds]), [
      ['app', new Date(T0 - 20_000).toISOString(), 1 * S],
      ['sidecar', new Date(T0 - 19_000).toISOString(), 0.5 * S],
    ]);
    const app = pod?.containers[0];
    assert.deepEqual(app?.memory, { time: new Date(T0).toISOString(), workingSetBytes: 3000, usageBytes: 5000, rssBytes: 800 });
    assert.deepEqual(app?.rootfs, { time: new Date(T0).toISOString(), availableBytes: 6_000_000, capacityBytes: 10_000_000, inodes: 1000, inodesFree: 900, usedBytes: 4096, inodesUsed: 3 });
    assert.deepEqual(app?.logs, { time: new Date(T0).toISOString(), availableBytes: 15_000_000, capacityBytes: 20_000_000, inodes: 2000, inodesFree: 1500, usedBytes: 8192, inodesUsed: 2 });
    assert.equal(pod?.['ephemeral-storage']?.usedBytes, 4096 + 4096 + 8192);
  });

  it('fills the node: CPU, memory, the node filesystem, the image filesystem and the pid limit', async () => {
    const { provider } = fixture();
    const { node } = await provider.summary();
    assert.equal(node.nodeName, 'n1');
    assert.equal(node.startTime, new Date(T0 - 3_600_000).toISOString());
    assert.equal(node.cpu?.usageCoreNanoSeconds, 100 * S);
    assert.equal(node.memory?.workingSetBytes, 7000);
    assert.deepEqual(node.fs, { time: new Date(T0).toISOString(), availableBytes: 15_000_000, capacityBytes: 20_000_000, inodes: 2000, inodesFree: 1500, usedBytes: 5_000_000, inodesUsed: 500 });
    assert.deepEqual(node.runtime?.imageFs, { time: new Date(T0).toISOString(), availableBytes: 6_000_000, capacityBytes: 10_000_000, inodes: 1000, inodesFree: 900, usedBytes: 1_000_000, inodesUsed: 50 });
    assert.deepEqual(node.rlimit, { time: new Date(T0).toISOString(), maxpid: 4096, curproc: 300 });
  });

  it('computes usageNanoCores from the previous read, for the containers, the pod (their sum without PodSandboxStats) and the node', async () => {
    const { provider, clock, cpu, host } = fixture();
    const first = await provider.summary();
    assert.equal(first.pods[0]?.containers[0]?.cpu?.usageNanoCores, undefined, 'no rate from one sample');
    assert.equal(first.pods[0]?.cpu?.usageNanoCores, undefined);
    await clock.step(10_000);
    cpu['app'] = (cpu['app'] ?? 0) + 10 * S; // one full core for 10 s
    cpu['side'] = (cpu['side'] ?? 0) + 1 * S;
    host.nodeStats.cpu = { timestampNs: clock.now() * 1e6, usageCoreNanoSeconds: 115 * S };
    const second = await provider.summary();
    assert.deepEqual(second.pods[0]?.containers.map((c) => c.cpu?.usageNanoCores), [1_000_000_000, 100_000_000]);
    assert.equal(second.pods[0]?.cpu?.usageNanoCores, 1_100_000_000);
    assert.equal(second.pods[0]?.cpu?.usageCoreNanoSeconds, 12.5 * S);
    assert.equal(second.pods[0]?.memory?.workingSetBytes, 4000);
    assert.equal(second.node.cpu?.usageNanoCores, 1_500_000_000);
  });

  it('takes the pod\'s own CPU and memory from PodSandboxStats when the runtime has them', async () => {
    const { provider, cri, clock } = fixture();
    let total = 2 * S;
    cri.onRuntime('ListPodSandboxStats', (): ListPodSandboxStatsResponse => ({
      stats: [{
        attributes: { id: 'sb1', metadata: undefined, labels: {}, annotations: {} },
        linux: {
          cpu: { timestamp: ns(clock.now()), usageCoreNanoSeconds: { value: String(total) }, usageNanoCores: undefined, psi: undefined },
          memory: { timestamp: ns(clock.now()), workingSetBytes: { value: '9999' }, availableBytes: undefined, usageBytes: undefined, rssBytes: undefined, pageFaults: undefined, majorPageFaults: undefined, psi: undefined },
          network: { timestamp: ns(clock.now()), defaultInterface: { name: 'eth0', rxBytes: { value: '10' }, rxErrors: undefined, txBytes: { value: '20' }, txErrors: undefined }, interfaces: [] },
          process: undefined, containers: [], io: undefined,
        },
        windows: undefined,
      }],
    }));
    await provider.summary();
    await clock.step(2000);
    total += S;
    const pod = (await provider.summary()).pods[0];
    assert.deepEqual([pod?.cpu?.usageCoreNanoSeconds, pod?.cpu?.usageNanoCores, pod?.memory?.workingSetBytes], [3 * S, 500_000_000, 9999]);
    assert.deepEqual([pod?.network?.name, pod?.network?.rxBytes, pod?.network?.txBytes], ['eth0', 10, 20]);
  });

  it('falls back to the containers\' sum when ListPodSandboxStats fails, and fails when the containers\' stats do', async () => {
    const { provider, cri } = fixture();
    cri.failNext('runtime', 'ListPodSandboxStats', 'Unimplemented');
    assert.equal((await provider.summary()).pods[0]?.memory?.workingSetBytes, 4000);
    // containerd 1.6, for a sandbox without a cgroup parent.
    cri.failNext('runtime', 'ListPodSandboxStats', 'Unknown', 'failed to get cgroup metrics for sandbox x because cgroupPath is empty');
    assert.equal((await provider.summary()).pods[0]?.memory?.workingSetBytes, 4000);
    cri.failNext('runtime', 'ListContainerStats', 'Unavailable');
    await assert.rejects(provider.summary(), (err: unknown) => err instanceof CriError && err.code === 'Unavailable');
  });
});

describe('/metrics/resource', () => {
  it('renders the kubelet\'s series with its labels, from the summary', async () => {
    const { provider } = fixture();
    const text = renderResourceMetrics(await provider.summary());
    const ts = T0;
    for (const line of [
      '# TYPE container_cpu_usage_seconds_total counter',
      `container_cpu_usage_seconds_total{container="app",pod="web",namespace="prod"} 1 ${ts}`,
      `container_memory_working_set_bytes{container="sidecar",pod="web",namespace="prod"} 1000 ${ts}`,
      `container_start_time_seconds{container="app",pod="web",namespace="prod"} ${(T0 - 20_000) / 1000} ${T0 - 20_000}`,
      `node_cpu_usage_seconds_total 100 ${ts}`,
      `node_memory_working_set_bytes 7000 ${ts}`,
      `pod_cpu_usage_seconds_total{pod="web",namespace="prod"} 1.5 ${ts}`,
      `pod_memory_working_set_bytes{pod="web",namespace="prod"} 4000 ${ts}`,
      'resource_scrape_error 0',
    ])
      assert.ok(text.split('\n').includes(line), `missing ${line} in\n${text}`);
  });

  it('is resource_scrape_error 1 alone when the summary could not be read', () => {
    assert.equal(renderResourceMetrics(undefined), '# HELP resource_scrape_error 1 if there was an error while getting container metrics, 0 otherwise\n# TYPE resource_scrape_error gauge\nresource_scrape_error 1\n');
  });
});
