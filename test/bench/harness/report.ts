/**
 * What `npm run bench` writes: the figures of one run (the JSON's shape),
 * their statistics, the markdown table and the SVG chart of the P1
 * latency distributions. Pure functions of the results, so that the
 * table and the chart can be tested without running anything.
 */

/** Percentile by nearest rank on the sorted samples (p50 of [1,2,3,4] is 2, as `sort | sed -n` would give). */
export function percentile(samples: readonly number[], p: number): number {
  if (samples.length === 0) return Number.NaN;
  const sorted = [...samples].sort((a, b) => a - b);
  const rank = Math.max(1, Math.ceil((p / 100) * sorted.length));
  return sorted[Math.min(sorted.length, rank) - 1] ?? Number.NaN;
}

export interface Distribution {
  /** Every sample, in ms, in the order measured. */
  samples: number[];
  p50: number;
  p90: number;
  p99: number;
  max: number;
}

export function distribution(samples: number[]): Distribution {
  return { samples, p50: percentile(samples, 50), p90: percentile(samples, 90), p99: percentile(samples, 99), max: samples.length ? Math.max(...samples) : Number.NaN };
}

/** The raw CRI floor: RunPodSandbox + CreateContainer + StartContainer straight on containerd. */
export interface FloorFigures {
  endpoint: string;
  /** One pod after another: each pod's three calls, in ms. */
  sequential: Distribution;
  /** `burst.pods` pods with `burst.concurrency` at a time: the whole burst, in ms. */
  burst: { pods: number; concurrency: number; totalMs: number };
}

/** P4: a CRI call through cri-gateway over NATS against the same call over gRPC. */
export interface NatsHopFigures {
  calls: number;
  rows: {
    call: string;
    grpcP50: number;
    grpcP99: number;
    natsP50: number;
    natsP99: number;
    addedP50: number;
    addedP99: number;
    /** The floor of the hop: a bare NATS request/reply of the same sizes to a responder that does nothing (nats-echo.ts). */
    bareNatsP50?: number;
    bareNatsP99?: number;
  }[];
}

export interface ProcessFootprint {
  /** `service#instance`, nats-server, kubelet. */
  name: string;
  pid: number;
  /** CPU time over the window as % of one core. */
  cpuPercent: number;
  /** Mean resident set over the window, MB (10^6 bytes). */
  rssMb: number;
  /** Mean proportional set over the window, MB (shared pages divided among the processes that map them). */
  pssMb?: number;
}

/** Where the CPU went while a figure was measured: the machine's busy share (of all its cores), each agent process's CPU seconds. */
export interface CpuShare {
  machineBusyPercent: number;
  processes: { name: string; cpuSeconds: number }[];
}

export interface AgentFigures {
  /** How the agent ran (mode, versions, settings that matter for the figures). */
  description: string;
  /** P1: manifest written -> Running and Ready in the read API, one pod after another, ms. */
  p1: Distribution;
  /**
   * P2: `pods` manifests written at once -> every pod Running and Ready: the whole burst, and each pod's time, ms;
   * and where the CPU went during it: the machine's busy share (of all its cores) and each agent process's CPU seconds
   * (the rest of the busy time is containerd, its shims, runc and the containers).
   */
  p2: { pods: number; totalMs: number; perPod: Distribution; cpu?: CpuShare };
  /** P3: `pods` pods running, `seconds` long: the agent's processes (containerd excluded). */
  p3: { pods: number; seconds: number; cpuPercent: number; rssMb: number; pssMb?: number; processes: ProcessFootprint[] };
  /** P5: each process's cold start to ready, ms (several runs: each run's time). */
  p5: { readiness: string; services: Record<string, number[]> };
  /** P7: a container SIGKILLed behind the agent's back -> its pod's status in the read API shows it, ms (absent in results of runs before it existed). */
  p7?: Distribution;
  /** P6: manifest removed -> the pod's sandbox NOT_READY in the CRI: one pod, and `pods` pods at once (time until all; where the CPU went meanwhile). */
  p6: { one: number; many: { pods: number; totalMs: number; perPod: Distribution; cpu?: CpuShare } };
  /** The density figures: P2, P3 and P6 again with `pods` pods (250 by default; absent in runs before they existed or with --density 0). */
  density?: {
    pods: number;
    p2: { totalMs: number; perPod: Distribution; cpu?: CpuShare };
    p3: { seconds: number; cpuPercent: number; rssMb: number; pssMb?: number; processes: ProcessFootprint[] };
    p6: { totalMs: number; perPod: Distribution; cpu?: CpuShare };
  };
}

export type AgentResult = ({ ok: true } & AgentFigures) | { ok: false; reason: string };

export interface BenchResult {
  /** The repository's commit (git rev-parse HEAD), `+dirty` when the work tree has changes. */
  commit: string;
  startedAt: string;
  finishedAt: string;
  smoke: boolean;
  /** The machine, and its load average (1, 5, 15 min) when the run started and ended: the figures of a shared machine depend on it. */
  machine: { cpus: number; node: string; kernel: string; containerd: string; loadavg: { start: number[]; end: number[] } };
  settings: { p1Pods: number; p2Pods: number; p3Seconds: number; p6Pods: number; p7Kills?: number; densityPods?: number; pollMs: { p1: number; p2: number; p6: number } };
  floor: FloorFigures | { error: string };
  p4: NatsHopFigures | { error: string };
  /** By agent name, in the order run: `kubelet` (upstream), `kubelet-split`, ... */
  agents: Record<string, AgentResult>;
}

const ms = (n: number | undefined): string => (n === undefined || !Number.isFinite(n) ? '—' : n >= 10_000 ? `${(n / 1000).toFixed(1)} s` : n >= 1000 ? `${(n / 1000).toFixed(2)} s` : `${Math.round(n)} ms`);
const ms3 = (n: number) => `${n.toFixed(3)} ms`;
/** The agent's own CPU seconds in a window (its processes, not containerd's). */
const cpuSeconds = (c: CpuShare | undefined): string => (c ? `${c.processes.reduce((x, p) => x + p.cpuSeconds, 0).toFixed(1)} s of CPU` : '—');

/** The markdown table: one row per figure, a column for the raw CRI floor and one per agent. */
export function markdownTable(r: BenchResult): string {
  const names = Object.keys(r.agents);
  const ok = (name: string): AgentFigures | undefined => {
    const a = r.agents[name];
    return a?.ok ? a : undefined;
  };
  const floor = 'error' in r.floor ? undefined : r.floor;
  const hop = 'error' in r.p4 ? undefined : r.p4;
  const cell = (f: (a: AgentFigures) => string) => names.map((n) => {
    const a = ok(n);
    return a ? f(a) : 'did not run';
  });
  const p5range = (a: AgentFigures) => {
    const medians = Object.values(a.p5.services).map((xs) => percentile(xs, 50));
    return medians.length ? `${ms(Math.min(...medians))}–${ms(Math.max(...medians))}` : '—';
  };
  const rows: string[][] = [
    [`P1 manifest -> Running and Ready in the read API, p50 / p90 / p99 (${r.settings.p1Pods} pods one after another)`, floor ? `${ms(floor.sequential.p50)} / ${ms(percentile(floor.sequential.samples, 90))} / ${ms(floor.sequential.p99)} (sandbox+create+start)` : '—', ...cell((a) => `${ms(a.p1.p50)} / ${ms(a.p1.p90)} / ${ms(a.p1.p99)}`)],
    [`P2 ${r.settings.p2Pods} manifests at once -> all Running and Ready (each pod p50 / p99)`, floor ? `${ms(floor.burst.totalMs)} (concurrency ${floor.burst.concurrency})` : '—', ...cell((a) => `${ms(a.p2.totalMs)} (${ms(a.p2.perPod.p50)} / ${ms(a.p2.perPod.p99)})`)],
    [`P3 ${r.settings.p2Pods} pods running, ${r.settings.p3Seconds} s: CPU of one core / RSS (containerd excluded)`, '—', ...cell((a) => `${a.p3.cpuPercent.toFixed(1)} % / ${Math.round(a.p3.rssMb)} MB`)],
    ['P5 cold start of each process to ready (median per process, min–max)', '—', ...cell(p5range)],
    [`P6 manifest removed -> sandbox not ready, one pod / ${r.settings.p6Pods} pods`, '—', ...cell((a) => `${ms(a.p6.one)} / ${ms(a.p6.many.totalMs)}`)],
    [`P7 container killed behind the agent's back -> its pod's status shows it, p50 / p90 / max (${r.settings.p7Kills ?? 0} kills)`, '—', ...cell((a) => (a.p7 ? `${ms(a.p7.p50)} / ${ms(a.p7.p90)} / ${ms(a.p7.max)}` : '—'))],
    ...(r.settings.densityPods
      ? [
          [`P2 density: ${r.settings.densityPods} manifests at once -> all Running and Ready (each pod p50 / p99); the agent's CPU meanwhile`, '—', ...cell((a) => (a.density ? `${ms(a.density.p2.totalMs)} (${ms(a.density.p2.perPod.p50)} / ${ms(a.density.p2.perPod.p99)}); ${cpuSeconds(a.density.p2.cpu)}` : '—'))],
          [`P3 density: ${r.settings.densityPods} pods running, ${r.settings.p3Seconds} s: CPU of one core / RSS (PSS)`, '—', ...cell((a) => (a.density ? `${a.density.p3.cpuPercent.toFixed(1)} % / ${Math.round(a.density.p3.rssMb)} MB${a.density.p3.pssMb === undefined ? '' : ` (${Math.round(a.density.p3.pssMb)})`}` : '—'))],
          [`P6 density: ${r.settings.densityPods} manifests removed at once -> every sandbox not ready`, '—', ...cell((a) => (a.density ? ms(a.density.p6.totalMs) : '—'))],
        ]
      : []),
    [
      'P4 what a NATS hop to cri-gateway adds over direct gRPC, p50 (p99); its floor, a bare NATS request/reply of the same sizes',
      '—',
      ...names.map((n) => (n.startsWith('kubelet-split') && hop ? hop.rows.map((x) => `${x.call} ${ms3(x.addedP50)} (${ms3(x.addedP99)})${x.bareNatsP50 === undefined || x.bareNatsP99 === undefined ? '' : `, floor ${ms3(x.bareNatsP50)} (${ms3(x.bareNatsP99)})`}`).join('; ') : '—')),
    ],
  ];
  const header = ['figure', 'raw CRI floor', ...names.map((n) => (n === 'kubelet' ? 'upstream kubelet' : n))];
  const line = (cells: string[]) => `| ${cells.join(' | ')} |`;
  const out = [line(header), line(header.map(() => '---')), ...rows.map(line)];
  const notes: string[] = [];
  for (const n of names) {
    const a = r.agents[n];
    if (!a) continue;
    if (!a.ok) {
      notes.push(`- ${n} did not run: ${a.reason}`);
      continue;
    }
    notes.push(`- ${n}: ${a.description}`);
    notes.push(`  - P3 per process (CPU / RSS${a.p3.pssMb === undefined ? '' : ' / PSS'}): ${a.p3.processes.map((p) => `${p.name} ${p.cpuPercent.toFixed(1)} % / ${Math.round(p.rssMb)} MB${p.pssMb === undefined ? '' : ` / ${Math.round(p.pssMb)} MB`}`).join(', ')}`);
    const cpuNote = (what: string, c: CpuShare | undefined) => {
      if (!c) return;
      const own = c.processes.reduce((x, p) => x + p.cpuSeconds, 0);
      notes.push(`  - ${what}: the machine ${c.machineBusyPercent.toFixed(0)} % busy (of all cores); the agent's processes ${own.toFixed(1)} s of CPU (${c.processes.map((p) => `${p.name} ${p.cpuSeconds.toFixed(1)} s`).join(', ')}), the rest containerd, its shims and runc`);
    };
    cpuNote('P2 CPU during the burst', a.p2.cpu);
    cpuNote(`P6 CPU while the ${a.p6.many.pods} pods were removed`, a.p6.many.cpu);
    if (a.p3.pssMb !== undefined) notes.push(`  - P3 PSS of all processes (each shared page counted once): ${Math.round(a.p3.pssMb)} MB`);
    if (a.density) {
      const d = a.density;
      notes.push(`  - density P3 per process (CPU / RSS${d.p3.pssMb === undefined ? '' : ' / PSS'}), ${d.pods} pods: ${d.p3.processes.map((p) => `${p.name} ${p.cpuPercent.toFixed(1)} % / ${Math.round(p.rssMb)} MB${p.pssMb === undefined ? '' : ` / ${Math.round(p.pssMb)} MB`}`).join(', ')}`);
      cpuNote(`density P2 CPU during the ${d.pods}-pod burst`, d.p2.cpu);
      cpuNote(`density P6 CPU while the ${d.pods} pods were removed`, d.p6.cpu);
    }
    notes.push(`  - P5 (${a.p5.readiness}): ${Object.entries(a.p5.services).map(([s, xs]) => `${s} ${xs.map((x) => ms(x)).join(', ')}`).join('; ')}`);
  }
  if ('error' in r.floor) notes.push(`- raw CRI floor not measured: ${r.floor.error}`);
  if ('error' in r.p4) notes.push(`- P4 not measured: ${r.p4.error}`);
  const load = (xs: number[]) => xs.map((x) => x.toFixed(2)).join(' ');
  notes.push(`- commit ${r.commit}; machine: ${r.machine.cpus} CPUs, Node ${r.machine.node}, kernel ${r.machine.kernel}, containerd ${r.machine.containerd}; load average ${load(r.machine.loadavg.start)} at the start, ${load(r.machine.loadavg.end)} at the end`);
  return `${out.join('\n')}\n\n${notes.join('\n')}\n`;
}

const COLORS = ['#1f77b4', '#d62728', '#2ca02c', '#9467bd', '#ff7f0e'];

const esc = (s: string) => s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');

/**
 * The P1 latency distributions as an SVG: for each agent the empirical
 * cumulative distribution (x: ms from manifest to Running and Ready, y:
 * share of pods at or under it), a step line per agent, the raw CRI floor
 * dashed when it was measured.
 */
export function p1Chart(r: BenchResult, width = 720, height = 420): string {
  const series: { name: string; samples: number[]; dash?: string }[] = [];
  for (const [name, a] of Object.entries(r.agents)) if (a.ok) series.push({ name: name === 'kubelet' ? 'upstream kubelet' : name, samples: a.p1.samples });
  if (!('error' in r.floor)) series.push({ name: 'raw CRI floor', samples: r.floor.sequential.samples, dash: '6 4' });
  const left = 60;
  const right = 20;
  const top = 40;
  const bottom = 50;
  const plotW = width - left - right;
  const plotH = height - top - bottom;
  const maxX = niceCeil(Math.max(1, ...series.flatMap((s) => s.samples)));
  const x = (v: number) => left + (v / maxX) * plotW;
  const y = (f: number) => top + (1 - f) * plotH;
  const parts: string[] = [];
  parts.push(`<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}" viewBox="0 0 ${width} ${height}" font-family="sans-serif" font-size="12">`);
  parts.push(`<rect width="${width}" height="${height}" fill="white"/>`);
  parts.push(`<text x="${width / 2}" y="20" text-anchor="middle" font-size="14">P1: manifest -> Running and Ready (${r.settings.p1Pods} pods one after another), cumulative share of pods</text>`);
  for (let i = 0; i <= 5; i++) {
    const v = (maxX / 5) * i;
    parts.push(`<line x1="${x(v)}" y1="${top}" x2="${x(v)}" y2="${top + plotH}" stroke="#eee"/>`);
    parts.push(`<text x="${x(v)}" y="${top + plotH + 16}" text-anchor="middle">${Math.round(v)}</text>`);
    const f = i / 5;
    parts.push(`<line x1="${left}" y1="${y(f)}" x2="${left + plotW}" y2="${y(f)}" stroke="#eee"/>`);
    parts.push(`<text x="${left - 6}" y="${y(f) + 4}" text-anchor="end">${Math.round(f * 100)}%</text>`);
  }
  parts.push(`<line x1="${left}" y1="${top + plotH}" x2="${left + plotW}" y2="${top + plotH}" stroke="black"/>`);
  parts.push(`<line x1="${left}" y1="${top}" x2="${left}" y2="${top + plotH}" stroke="black"/>`);
  parts.push(`<text x="${left + plotW / 2}" y="${height - 12}" text-anchor="middle">ms</text>`);
  series.forEach((s, i) => {
    const color = COLORS[i % COLORS.length] ?? 'black';
    const sorted = [...s.samples].sort((a, b) => a - b);
    if (sorted.length === 0) return;
    let d = `M${x(0).toFixed(1)},${y(0).toFixed(1)} L${x(sorted[0] ?? 0).toFixed(1)},${y(0).toFixed(1)}`;
    sorted.forEach((v, k) => {
      d += ` L${x(v).toFixed(1)},${y(k / sorted.length).toFixed(1)} L${x(v).toFixed(1)},${y((k + 1) / sorted.length).toFixed(1)}`;
    });
    parts.push(`<path d="${d}" fill="none" stroke="${color}" stroke-width="2"${s.dash ? ` stroke-dasharray="${s.dash}"` : ''}><title>${esc(s.name)}</title></path>`);
    // Bottom right: where every line has already reached 100 %.
    const ly = top + plotH - 10 - (series.length - 1 - i) * 16;
    parts.push(`<line x1="${left + plotW - 270}" y1="${ly - 4}" x2="${left + plotW - 250}" y2="${ly - 4}" stroke="${color}" stroke-width="2"${s.dash ? ` stroke-dasharray="${s.dash}"` : ''}/>`);
    parts.push(`<text x="${left + plotW - 245}" y="${ly}">${esc(s.name)} (p50 ${Math.round(percentile(s.samples, 50))} ms)</text>`);
  });
  parts.push('</svg>');
  return `${parts.join('\n')}\n`;
}

/** 1, 2 or 5 times a power of ten, at or above v. */
function niceCeil(v: number): number {
  const p = 10 ** Math.floor(Math.log10(v));
  for (const m of [1, 2, 5, 10]) if (m * p >= v) return m * p;
  return 10 * p;
}
