/**
 * What `npm run bench -- --fleet` writes (fleet.bench.ts): the figures of
 * one fleet per node count, their sums by part of the fleet (a node, the
 * hub, the control plane) and the markdown table. Pure functions of the
 * measured processes, tested without a fleet.
 */
import type { ProcessFootprint } from './report.js';

/** One part's cost: its processes summed. */
export interface PartCost {
  processes: number;
  /** % of one core over the window. */
  cpuPercent: number;
  rssMb: number;
  pssMb: number;
}

/** The fleet of one node count. */
export interface FleetRun {
  nodes: number;
  /** Seconds waited after every node was Ready, then the idle window measured. */
  settleSeconds: number;
  idleSeconds: number;
  /** Fleet.start to every node Ready, ms. */
  startMs: number;
  idle: {
    /** A node's services, its leaf nats-server and its containerd, summed; averaged over the nodes. */
    perNode: PartCost;
    /** Each node's own sum, in node order. */
    nodes: PartCost[];
    /** The hub's three nats-servers. */
    hub: PartCost;
    /** etcd, kube-apiserver, kube-scheduler, kube-controller-manager. */
    controlPlane: PartCost;
    processes: (ProcessFootprint & { part: string })[];
  };
  /** kube-apiserver's requests over the idle window (apiserver_request_total), per second: all, the writes, by `VERB resource[/subresource]`. */
  apiserver: { requestsPerSecond: number; writesPerSecond: number; byKind: Record<string, number> };
  /** The first hub server's own clients' subscriptions in the KUBELET account, by subject (SUBSZ lists only local ones: the leafs' interest is in the counts alone). */
  hubSubjects: string[];
  /** The hub's subscriptions in the KUBELET account (what crosses the leaf links as interest), per hub server; an error when it could not be asked. */
  hubSubscriptions: number[] | { error: string };
  rollout: {
    pods: number;
    /** From the Deployment's create to the last pod Ready as the apiserver lists it (polled every pollMs). */
    readyMs: number;
    pollMs: number;
    /** Pods per node once all were Ready. */
    spread: Record<string, number>;
    /** CPU seconds each part used during the rollout (per node: averaged over the nodes). */
    cpuSeconds: { perNode: number; hub: number; controlPlane: number };
  } | { error: string };
}

export interface FleetBenchResult {
  commit: string;
  startedAt: string;
  finishedAt: string;
  machine: { cpus: number; node: string; kernel: string; loadavg: { start: number[]; end: number[] } };
  runs: FleetRun[];
  /** A node count whose fleet did not come up or failed, with the reason. */
  failures: { nodes: number; reason: string }[];
}

const finite = (n: number | undefined) => (n !== undefined && Number.isFinite(n) ? n : 0);

/** The processes summed (a figure a process did not give counts 0). */
export function partCost(processes: readonly ProcessFootprint[]): PartCost {
  return {
    processes: processes.length,
    cpuPercent: processes.reduce((s, p) => s + finite(p.cpuPercent), 0),
    rssMb: processes.reduce((s, p) => s + finite(p.rssMb), 0),
    pssMb: processes.reduce((s, p) => s + finite(p.pssMb), 0),
  };
}

/** The parts' mean (the per-node figure). */
export function meanCost(parts: readonly PartCost[]): PartCost {
  const n = Math.max(1, parts.length);
  const mean = (f: (p: PartCost) => number) => parts.reduce((s, p) => s + f(p), 0) / n;
  return { processes: mean((p) => p.processes), cpuPercent: mean((p) => p.cpuPercent), rssMb: mean((p) => p.rssMb), pssMb: mean((p) => p.pssMb) };
}

const f0 = (n: number) => (Number.isFinite(n) ? n.toFixed(0) : '-');
const f1 = (n: number) => (Number.isFinite(n) ? n.toFixed(1) : '-');
const cost = (c: PartCost) => `${f1(c.cpuPercent)} % · ${f0(c.rssMb)} / ${f0(c.pssMb)} MB`;

/** The markdown table: a row per node count; CPU as % of one core, memory as RSS / PSS. */
export function fleetTable(result: FleetBenchResult): string {
  const lines = [
    '| nodes | per node: CPU · RSS / PSS | hub (3 servers): CPU · RSS / PSS | hub subscriptions (KUBELET, per server) | control plane: CPU · RSS / PSS | apiserver idle: requests/s (writes/s) | 10 pods per node: create → all Ready | rollout CPU s: node (mean) / hub / control plane |',
    '|---|---|---|---|---|---|---|---|',
  ];
  for (const r of result.runs) {
    const subs = Array.isArray(r.hubSubscriptions) ? r.hubSubscriptions.join(' / ') : `(${r.hubSubscriptions.error})`;
    const ro = 'error' in r.rollout ? `failed: ${r.rollout.error}` : `${r.rollout.pods} pods in ${f1(r.rollout.readyMs / 1000)} s`;
    const roCpu = 'error' in r.rollout ? '-' : `${f1(r.rollout.cpuSeconds.perNode)} / ${f1(r.rollout.cpuSeconds.hub)} / ${f1(r.rollout.cpuSeconds.controlPlane)}`;
    lines.push(`| ${r.nodes} | ${cost(r.idle.perNode)} | ${cost(r.idle.hub)} | ${subs} | ${cost(r.idle.controlPlane)} | ${f1(r.apiserver.requestsPerSecond)} (${f1(r.apiserver.writesPerSecond)}) | ${ro} | ${roCpu} |`);
  }
  for (const f of result.failures) lines.push(`| ${f.nodes} | failed: ${f.reason.replace(/\|/g, '\\|').split('\n')[0] ?? ''} | | | | | | |`);
  const r0 = result.runs[0];
  const note = r0 ? `Idle: ${r0.settleSeconds} s after every node Ready, then a ${r0.idleSeconds} s window; ` : '';
  return `${lines.join('\n')}\n\n${note}${result.machine.cpus} CPUs, node ${result.machine.node}, commit ${result.commit}.\n`;
}
