import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { distribution, markdownTable, p1Chart, percentile, type AgentFigures, type BenchResult } from './report.js';

const figures = (p1: number[]): AgentFigures => ({
  description: 'test',
  p1: distribution(p1),
  p2: { pods: 100, totalMs: 9800, perPod: distribution([5000, 9800]) },
  p3: { pods: 100, seconds: 30, cpuPercent: 3.9, rssMb: 98, processes: [{ name: 'kubelet', pid: 1, cpuPercent: 3.9, rssMb: 98 }] },
  p5: { readiness: 'spawn to /readyz', services: { 'sync-loop': [700, 800, 900], pleg: [680] } },
  p6: { one: 1070, many: { pods: 100, totalMs: 5400, perPod: distribution([5400]) } },
});

const result = (agents: BenchResult['agents']): BenchResult => ({
  commit: 'abc',
  startedAt: '',
  finishedAt: '',
  smoke: false,
  machine: { cpus: 2, node: 'v24', kernel: '6', containerd: '1.6', loadavg: { start: [1, 2, 3], end: [4, 5, 6] } },
  settings: { p1Pods: 30, p2Pods: 100, p3Seconds: 30, p6Pods: 100, pollMs: { p1: 20, p2: 100, p6: 20 } },
  floor: { endpoint: 'unix:///x', sequential: distribution([95, 100, 122]), burst: { pods: 100, concurrency: 4, totalMs: 5600 } },
  p4: {
    calls: 1000,
    rows: [
      { call: 'ListContainers', grpcP50: 1, grpcP99: 2, natsP50: 1.53, natsP99: 3, addedP50: 0.53, addedP99: 1, bareNatsP50: 0.31, bareNatsP99: 0.9 },
      { call: 'ContainerStatus', grpcP50: 1, grpcP99: 2, natsP50: 1.4, natsP99: 2.5, addedP50: 0.4, addedP99: 0.5 },
    ],
  },
  agents,
});

describe('bench report', () => {
  const cases: { name: string; samples: number[]; p: number; want: number }[] = [
    { name: 'p50 of an even count is the lower middle (nearest rank)', samples: [4, 1, 3, 2], p: 50, want: 2 },
    { name: 'p99 of 30 samples is the largest', samples: Array.from({ length: 30 }, (_, i) => i + 1), p: 99, want: 30 },
    { name: 'p90 of 10 samples is the ninth', samples: [10, 9, 8, 7, 6, 5, 4, 3, 2, 1], p: 90, want: 9 },
    { name: 'one sample is every percentile', samples: [7], p: 1, want: 7 },
    { name: 'no sample is NaN', samples: [], p: 50, want: Number.NaN },
  ];
  for (const tc of cases) it(tc.name, () => assert.deepEqual(percentile(tc.samples, tc.p), tc.want));

  it('the table has a row per figure and a column per agent, and says why an agent did not run', () => {
    const t = markdownTable(result({ kubelet: { ok: true, ...figures([938, 950, 958]) }, 'kubelet-split': { ok: false, reason: 'unshare: operation not permitted' } }));
    assert.match(t, /^\| figure \| raw CRI floor \| upstream kubelet \| kubelet-split \|$/m);
    assert.match(t, /^\| P1 .* \| 100 ms \/ 122 ms \/ 122 ms \(sandbox\+create\+start\) \| 950 ms \/ 958 ms \/ 958 ms \| did not run \|$/m);
    assert.match(t, /^\| P2 .* \| 5.60 s \(concurrency 4\) \| 9.80 s \(5.00 s \/ 9.80 s\) \| did not run \|$/m);
    assert.match(t, /^\| P3 .* \| 3.9 % \/ 98 MB \|/m);
    assert.match(t, /^\| P5 .* \| 680 ms–800 ms \|/m);
    assert.match(t, /^\| P6 .* \| 1.07 s \/ 5.40 s \|/m);
    assert.match(t, /^- kubelet-split did not run: unshare: operation not permitted$/m);
    assert.match(t, /load average 1.00 2.00 3.00 at the start, 4.00 5.00 6.00 at the end$/m);
  });

  it('the P4 row gives what the hop adds per call and, when measured, its floor (a bare NATS request/reply)', () => {
    const t = markdownTable(result({ 'kubelet-split': { ok: true, ...figures([951, 1006]) } }));
    assert.match(t, /^\| P4 .* \| — \| ListContainers 0\.530 ms \(1\.000 ms\), floor 0\.310 ms \(0\.900 ms\); ContainerStatus 0\.400 ms \(0\.500 ms\) \|$/m);
  });

  it("the P7 row gives each agent's kill-to-status times, and a dash for results from before P7 existed", () => {
    const r = result({ 'kubelet-split @containerd2': { ok: true, ...figures([200]), p7: distribution([92, 135, 101]) }, 'kubelet-split @containerd1.6': { ok: true, ...figures([210]) } });
    r.settings.p7Kills = 3;
    assert.match(markdownTable(r), /^\| P7 .*\(3 kills\) \| — \| 101 ms \/ 135 ms \/ 135 ms \| — \|$/m);
  });

  it('the density rows give P2, P3 and P6 with the density figures\' pods, and a dash for an agent without them', () => {
    const f = figures([200]);
    f.density = {
      pods: 250,
      p2: { totalMs: 61_200, perPod: distribution([30_000, 61_000]), cpu: { machineBusyPercent: 97, processes: [{ name: 'kubelet', cpuSeconds: 4.1 }] } },
      p3: { seconds: 30, cpuPercent: 5.2, rssMb: 131, pssMb: 120, processes: [{ name: 'kubelet', pid: 1, cpuPercent: 5.2, rssMb: 131, pssMb: 120 }] },
      p6: { totalMs: 12_400, perPod: distribution([12_400]) },
    };
    const r = result({ kubelet: { ok: true, ...f }, 'kubelet-split': { ok: true, ...figures([210]) } });
    r.settings.densityPods = 250;
    const t = markdownTable(r);
    assert.match(t, /^\| P2 density: 250 manifests at once .* \| — \| 61\.2 s \(30\.0 s \/ 61\.0 s\); 4\.1 s of CPU \| — \|$/m);
    assert.match(t, /^\| P3 density: 250 pods running, 30 s: .* \| — \| 5\.2 % \/ 131 MB \(120\) \| — \|$/m);
    assert.match(t, /^\| P6 density: 250 manifests removed at once .* \| — \| 12\.4 s \| — \|$/m);
    assert.match(t, /^ {2}- density P3 per process \(CPU \/ RSS \/ PSS\), 250 pods: kubelet 5\.2 % \/ 131 MB \/ 120 MB$/m);
    delete r.settings.densityPods;
    assert.doesNotMatch(markdownTable(r), /^\| P\d density/m, 'no density rows in a run without them');
  });

  it('the chart has a line per agent that ran, and the floor dashed', () => {
    const svg = p1Chart(result({ kubelet: { ok: true, ...figures([938, 958]) }, 'kubelet-split': { ok: true, ...figures([951, 1006]) }, other: { ok: false, reason: 'x' } }));
    assert.equal([...svg.matchAll(/<path /g)].length, 3);
    assert.match(svg, /<title>upstream kubelet<\/title>/);
    assert.match(svg, /<title>kubelet-split<\/title>/);
    assert.match(svg, /stroke-dasharray="6 4"><title>raw CRI floor<\/title>/);
    assert.ok(!svg.includes('NaN'), 'no NaN coordinate');
  });
});

describe('bench report: where the CPU went', () => {
  it('P2 and P6 say how busy the machine was and each agent process\'s CPU seconds, when measured', () => {
    const f = figures([200, 210]);
    f.p2.cpu = { machineBusyPercent: 96.2, processes: [{ name: 'nats-server', cpuSeconds: 1.8 }, { name: 'cri-gateway', cpuSeconds: 1.5 }] };
    f.p6.many.cpu = { machineBusyPercent: 80, processes: [{ name: 'pod-worker', cpuSeconds: 0.9 }] };
    const t = markdownTable(result({ 'kubelet-split': { ok: true, ...f }, kubelet: { ok: true, ...figures([1000]) } }));
    assert.match(t, /^ {2}- P2 CPU during the burst: the machine 96 % busy \(of all cores\); the agent's processes 3\.3 s of CPU \(nats-server 1\.8 s, cri-gateway 1\.5 s\), the rest containerd, its shims and runc$/m);
    assert.match(t, /^ {2}- P6 CPU while the 100 pods were removed: the machine 80 % busy \(of all cores\); the agent's processes 0\.9 s of CPU \(pod-worker 0\.9 s\)/m);
    assert.equal((t.match(/CPU during the burst/g) ?? []).length, 1, 'not for an agent where it was not measured');
  });
});
