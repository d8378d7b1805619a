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
import { readFileSync, readlinkSync } from 'node:fs';
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

/**
 * What holds a process's memory, MB, from /proc/<pid>/smaps (PSS: each shared page counted once across
 * processes): the node binary's mappings, other files (libc, ...), malloc's main arena (`[heap]`), thread
 * stacks, and the rest of the anonymous memory (V8's heap, malloc's other arenas, V8's zones).
 */
export function holders(pid: number): { pss: number; binary: number; files: number; brk: number; stacks: number; anon: number } {
  const out = { pss: 0, binary: 0, files: 0, brk: 0, stacks: 0, anon: 0 };
  let exe = '';
  try {
    exe = readlinkSync(`/proc/${pid}/exe`);
  } catch {
    return out;
  }
  let name = '';
  let guardBefore = false;
  let prevGuard = false;
  for (const line of readFileSync(`/proc/${pid}/smaps`, 'utf8').split('\n')) {
    const head = /^[0-9a-f]+-[0-9a-f]+ (\S{4}) \S+ \S+ \d+\s*(.*)$/.exec(line);
    if (head) {
      guardBefore = prevGuard;
      prevGuard = head[1] === '---p' && (head[2] ?? '') === '';
      name = head[2] ?? '';
      continue;
    }
    const pss = /^Pss:\s+(\d+) kB/.exec(line);
    if (!pss) continue;
    const mb = Number(pss[1]) / 1024;
    out.pss += mb;
    if (name === exe) out.binary += mb;
    else if (name.startsWith('/')) out.files += mb;
    else if (name === '[heap]') out.brk += mb;
    else if (name === '[stack]' || (name === '' && guardBefore && mb < 1)) out.stacks += mb; // a thread's stack: an anonymous mapping above its guard page
    else out.anon += mb;
  }
  return out;
}

interface Row { mode: string; processes: number; rssMb: number; pssMb: number; perProcess: string; cpuPct: number; natsRssMb: number; natsPssMb: number }

type Mode = 'group' | 'split' | 'all';

async function measure(mode: Mode): Promise<Row> {
  const stack = new NodeStack({ node: `fp-${mode}`, target: mode, services: [...SERVICE_NAMES] });
  try {
    await stack.start(); // inside: a stack that fails to start is stopped too, not left running
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
    const rss = pids.map((pid) => ({ name: pids.length === 1 ? 'all' : (names.get(pid) ?? ''), mb: after.get(pid)?.rssMb ?? 0, h: holders(pid) }));
    const natsPid = stack.nats.process.pid ?? 0;
    const f = (n: number) => n.toFixed(1);
    return {
      mode,
      processes: pids.length,
      rssMb: rss.reduce((n, r) => n + r.mb, 0),
      pssMb: rss.reduce((n, r) => n + r.h.pss, 0),
      perProcess: rss.map((r) => `${r.name} ${r.mb.toFixed(0)}/${r.h.pss.toFixed(0)} (binary ${f(r.h.binary)}, files ${f(r.h.files)}, [heap] ${f(r.h.brk)}, stacks ${f(r.h.stacks)}, other anon ${f(r.h.anon)})`).join('; '),
      cpuPct: (cpuTicks / TICKS / windowS) * 100,
      natsRssMb: proc(natsPid).rssMb,
      natsPssMb: holders(natsPid).pss,
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
process.stdout.write(`\n${pods} pods Running, ${windowS}s window (node ${process.version}, KS_ENTRY=${process.env['KS_ENTRY'] ?? 'dist'})\n\n| mode | processes | RSS / PSS of the services (MB) | CPU (% of one core) | nats-server RSS / PSS (MB) | per process: RSS/PSS, and the PSS by what holds it (MB) |\n|---|---|---|---|---|---|\n`);
for (const r of rows) process.stdout.write(`| ${r.mode} | ${r.processes} | ${r.rssMb.toFixed(0)} / ${r.pssMb.toFixed(0)} | ${r.cpuPct.toFixed(1)} | ${r.natsRssMb.toFixed(0)} / ${r.natsPssMb.toFixed(0)} | ${r.perProcess} |\n`);
process.stdout.write(`\n${JSON.stringify(rows)}\n`);
