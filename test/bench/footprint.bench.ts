/**
 * Footprint of the stack with pods running (issue 16, P3): the resident
 * memory of every process of the stack (nats-server apart) and their CPU
 * over a window, with N hostNetwork busybox pods Running: as the launcher
 * runs the stack (`group`: a process per service but the status group's
 * four, STATUS_GROUP, in one), with every service alone (`split`) and in
 * the one-process mode (`all`, TARGET=all), one after the other on the real
 * containerd. Uses the containerd the e2e tests
 * share: run it under the e2e lock.
 *
 *   npm run build && flock -o /tmp/e2e.lock node dist/test/bench/footprint.bench.js [--pods 10] [--window 20] [--modes group,split,all]
 */
import { readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { SERVICE_NAMES } from '@app/service';
import { NodeStack } from '../support/node-stack.js';

const { values } = parseArgs({ options: { pods: { type: 'string', default: '10' }, window: { type: 'string', default: '20' }, modes: { type: 'string', default: 'group,split,all' } } });
const pods = Number(values.pods);
const windowS = Number(values.window);
const IMAGE = 'localhost/kubelet-split/busybox:1.35';
const TICKS = 100; // USER_HZ

function proc(pid: number): { rssMb: number; cpuTicks: number } {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]?.split(' ') ?? [];
  return { rssMb: Number(/VmRSS:\s+(\d+)/.exec(status)?.[1] ?? 0) / 1024, cpuTicks: Number(stat[11] ?? 0) + Number(stat[12] ?? 0) };
}

interface Row { mode: string; processes: number; rssMb: number; perProcess: string; cpuPct: number; natsRssMb: number }

type Mode = 'group' | 'split' | 'all';

async function measure(mode: Mode): Promise<Row> {
  const stack = new NodeStack({ node: `fp-${mode}`, target: mode, services: [...SERVICE_NAMES] });
  await stack.start();
  try {
    for (let i = 0; i < pods; i++) {
      stack.writeManifest(`p${i}`, `apiVersion: v1\nkind: Pod\nmetadata:\n  name: p${i}\nspec:\n  hostNetwork: true\n  terminationGracePeriodSeconds: 1\n  containers:\n    - name: main\n      image: ${IMAGE}\n      command: ["sleep", "3600"]\n`);
    }
    await stack.waitFor(`${pods} pods Running`, async () => ((await stack.podList()).items.filter((p) => p.status?.phase === 'Running').length === pods ? true : undefined), 180_000);
    await new Promise((r) => setTimeout(r, 5000)); // settle: first syncs, probes, GC of boot garbage
    const pids = [...new Set([...stack.procs.values()].map((p) => p.process.pid ?? 0))];
    const names = new Map(pids.map((pid) => [pid, [...stack.procs.values()].filter((p) => p.process.pid === pid).map((p) => p.service).join('+')]));
    const before = new Map(pids.map((pid) => [pid, proc(pid).cpuTicks]));
    await new Promise((r) => setTimeout(r, windowS * 1000));
    const after = new Map(pids.map((pid) => [pid, proc(pid)]));
    const cpuTicks = pids.reduce((n, pid) => n + (after.get(pid)?.cpuTicks ?? 0) - (before.get(pid) ?? 0), 0);
    const rss = pids.map((pid) => ({ name: pids.length === 1 ? 'all' : (names.get(pid) ?? ''), mb: after.get(pid)?.rssMb ?? 0 }));
    return {
      mode,
      processes: pids.length,
      rssMb: rss.reduce((n, r) => n + r.mb, 0),
      perProcess: rss.map((r) => `${r.name} ${r.mb.toFixed(0)}`).join(', '),
      cpuPct: (cpuTicks / TICKS / windowS) * 100,
      natsRssMb: proc(stack.nats.process.pid ?? 0).rssMb,
    };
  } finally {
    await stack.stop();
  }
}

const rows: Row[] = [];
for (const mode of values.modes.split(',')) {
  if (mode !== 'group' && mode !== 'split' && mode !== 'all') throw new Error(`--modes: ${mode} is not group, split or all`);
  rows.push(await measure(mode));
}
process.stdout.write(`\n${pods} pods Running, ${windowS}s window (node ${process.version})\n\n| mode | processes | RSS of the services (MB) | CPU (% of one core) | nats-server RSS (MB) | per process (MB) |\n|---|---|---|---|---|---|\n`);
for (const r of rows) process.stdout.write(`| ${r.mode} | ${r.processes} | ${r.rssMb.toFixed(0)} | ${r.cpuPct.toFixed(1)} | ${r.natsRssMb.toFixed(0)} | ${r.perProcess} |\n`);
process.stdout.write(`\n${JSON.stringify(rows)}\n`);
