import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { fleetTable, meanCost, partCost, type FleetBenchResult, type FleetRun } from './fleet-report.js';

const proc = (name: string, cpuPercent: number, rssMb: number, pssMb?: number) => ({ name, pid: 1, cpuPercent, rssMb, ...(pssMb === undefined ? {} : { pssMb }) });

describe('fleet bench report', () => {
  const cases = [
    { name: 'sums every process of a part', procs: [proc('a', 1, 10, 5), proc('b', 2, 20, 8)], want: { processes: 2, cpuPercent: 3, rssMb: 30, pssMb: 13 } },
    { name: 'a process gone before the end counts 0 for what it did not give', procs: [proc('a', Number.NaN, 10), proc('b', 2, Number.NaN, 4)], want: { processes: 2, cpuPercent: 2, rssMb: 10, pssMb: 4 } },
    { name: 'no processes cost nothing', procs: [], want: { processes: 0, cpuPercent: 0, rssMb: 0, pssMb: 0 } },
  ];
  for (const tc of cases) it(tc.name, () => assert.deepEqual(partCost(tc.procs), tc.want));

  it('the per-node figure is the mean of the nodes', () => {
    const m = meanCost([
      { processes: 10, cpuPercent: 4, rssMb: 600, pssMb: 300 },
      { processes: 10, cpuPercent: 6, rssMb: 800, pssMb: 500 },
    ]);
    assert.deepEqual(m, { processes: 10, cpuPercent: 5, rssMb: 700, pssMb: 400 });
  });

  it('the table has a row per node count, a failed rollout and a failed fleet said', () => {
    const part = { processes: 3, cpuPercent: 1.25, rssMb: 100.4, pssMb: 60.6 };
    const run = (nodes: number, rollout: FleetRun['rollout']): FleetRun => ({
      nodes, settleSeconds: 20, idleSeconds: 30, startMs: 1000,
      idle: { perNode: part, nodes: [part], hub: part, controlPlane: part, processes: [] },
      apiserver: { requestsPerSecond: 4.04, writesPerSecond: 0.25, byKind: {} },
      hubSubjects: [],
      hubSubscriptions: [12, 12, 13],
      rollout,
    });
    const result: FleetBenchResult = {
      commit: 'abc', startedAt: '', finishedAt: '',
      machine: { cpus: 2, node: 'v24', kernel: '', loadavg: { start: [], end: [] } },
      runs: [run(1, { pods: 10, readyMs: 12_340, pollMs: 250, spread: { 'ks-fleet-1': 10 }, cpuSeconds: { perNode: 3, hub: 0.1, controlPlane: 2 } }), run(2, { error: 'timed out' })],
      failures: [{ nodes: 3, reason: 'containerd did not start\nmore' }],
    };
    const rows = fleetTable(result).split('\n').filter((l) => l.startsWith('| '));
    assert.equal(rows.length, 4);
    assert.match(rows[1] ?? '', /^\| 1 \| 1\.3 % · 100 \/ 61 MB \|.*\| 12 \/ 12 \/ 13 \|.*\| 4\.0 \(0\.3\) \| 10 pods in 12\.3 s \| 3\.0 \/ 0\.1 \/ 2\.0 \|$/);
    assert.match(rows[2] ?? '', /\| failed: timed out \| - \|$/);
    assert.match(rows[3] ?? '', /^\| 3 \| failed: containerd did not start \|/);
  });
});
