/**
 * The fleet's cost (`npm run bench -- --fleet`, bench.ts): for each node
 * count, a fleet on this machine (test/fleet/fleet-cluster.ts: the control
 * plane, the NATS hub of three, N kubelet-split nodes with a pod worker
 * each), then
 *   idle      `settle` s after every node is Ready, a `window` s window:
 *             CPU and RSS/PSS of each node (its services, its leaf
 *             nats-server, its containerd), of the hub's three servers and
 *             of the control plane (etcd, kube-apiserver, kube-scheduler,
 *             kube-controller-manager), sampled as the node bench does
 *             (harness/measure.ts footprint); and the hub's subscriptions in
 *             the KUBELET account (the interest the leafs propagate)
 *   rollout   a Deployment of 10 pods per node: from its create to the last
 *             pod Ready as the apiserver lists it, and the CPU each part
 *             spent meanwhile
 * and the fleet stopped before the next count. Holds the fleet lock
 * (test/fleet/fleet-lock.ts) for the whole run, waiting while another fleet
 * (the lock, or a `ks-fleet1` bridge) is up. What it does not count: the
 * leaf links' relays (LeafLink, in this process) and the pods' shims.
 */
import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { cpus, loadavg, release, tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { connect } from '@nats-io/transport-node';
import { HUB_ACCOUNT, HUB_SYSTEM_USER } from '../../deploy/nats/fabric.js';
import { REPO_ROOT } from '../../deploy/local/stack.js';
import { Cleanups } from '../conformance/cleanups.js';
import { Fleet, type FleetNode } from '../fleet/fleet-cluster.js';
import { FLEET_LOCK, FleetLockHeld, takeLock } from '../fleet/fleet-lock.js';
import { createDeployment, createNamespace, httpDeployment, isReady, podsOf } from '../support/fleet-test.js';
import { cpuTicks, type AgentProcess } from './harness/agent.js';
import { meanCost, partCost, fleetTable, type FleetBenchResult, type FleetRun } from './harness/fleet-report.js';
import { CLK_TCK, footprint } from './harness/measure.js';

export interface FleetBenchOptions {
  nodeCounts: number[];
  out: string;
  settleSeconds: number;
  idleSeconds: number;
  podsPerNode: number;
  log: (line: string) => void;
}

type Part = { part: string; procs: AgentProcess[] };

const alive = (pid: number | undefined): pid is number => pid !== undefined && pid > 0 && existsSync(`/proc/${pid}`);

/** This process's children running `binary` (the controllers: startControllers keeps their handles to itself). */
function childrenRunning(binary: string): number[] {
  const out: number[] = [];
  for (const d of readdirSync('/proc')) {
    if (!/^\d+$/.test(d)) continue;
    try {
      const ppid = Number(readFileSync(`/proc/${d}/stat`, 'utf8').split(') ')[1]?.split(' ')[1]);
      if (ppid !== process.pid) continue;
      const argv0 = readFileSync(`/proc/${d}/cmdline`, 'utf8').split('\0')[0] ?? '';
      if (basename(argv0) === binary) out.push(Number(d));
    } catch {
      // gone meanwhile
    }
  }
  return out;
}

/** The node's processes, each once: services grouped in one process (the status group) under one name `a+b+...`. */
function nodeProcesses(node: FleetNode): AgentProcess[] {
  const byPid = new Map<number, string[]>();
  for (const sp of node.services) if (alive(sp.process.pid)) byPid.set(sp.process.pid, [...(byPid.get(sp.process.pid) ?? []), `${sp.service}#${sp.instance}`]);
  const procs: AgentProcess[] = [...byPid].map(([pid, names]) => ({ name: `${node.name}/${names.join('+')}`, pid }));
  if (alive(node.nats.process.pid)) procs.push({ name: `${node.name}/nats-server`, pid: node.nats.process.pid });
  const containerd = Number(readFileSync(join(node.net.state, 'containerd.pid'), 'utf8').trim());
  if (alive(containerd)) procs.push({ name: `${node.name}/containerd`, pid: containerd });
  return procs;
}

/** The fleet's processes by part: each node, the hub, the control plane. */
function parts(fleet: Fleet): { nodes: Part[]; hub: Part; controlPlane: Part } {
  const hub = fleet.hub.servers.flatMap((s) => (alive(s.process?.pid) ? [{ name: s.address.name, pid: s.process.pid }] : []));
  const controlPlane: AgentProcess[] = [
    { name: 'etcd', pid: fleet.cp.etcdPid },
    { name: 'kube-apiserver', pid: fleet.cp.apiserverPid },
    ...['kube-scheduler', 'kube-controller-manager'].flatMap((b) => childrenRunning(b).map((pid) => ({ name: b, pid }))),
  ];
  return { nodes: fleet.nodes.map((n) => ({ part: n.name, procs: nodeProcesses(n) })), hub: { part: 'hub', procs: hub }, controlPlane: { part: 'control plane', procs: controlPlane } };
}

/** Each hub server's subscription count in the KUBELET account, and the first server's subjects, asked as the system user. */
async function hubSubscriptions(fleet: Fleet): Promise<{ counts: number[]; subjects: string[] }> {
  const nc = await connect({ servers: fleet.hub.credentials.clientUrls, user: HUB_SYSTEM_USER, pass: fleet.hub.credentials.password(HUB_SYSTEM_USER) });
  try {
    const byServer: [string, number, string[]][] = [];
    const ask = new TextEncoder().encode(JSON.stringify({ account: HUB_ACCOUNT, subscriptions: true, limit: 100_000 }));
    for await (const m of await nc.requestMany('$SYS.REQ.SERVER.PING.SUBSZ', ask, { maxWait: 2000, maxMessages: fleet.hub.servers.length })) {
      const r = JSON.parse(new TextDecoder().decode(m.data)) as { server?: { name?: string }; data?: { num_subscriptions?: number; subscriptions_list?: { subject: string }[] }; error?: { description?: string } };
      if (r.error) throw new Error(r.error.description ?? 'SUBSZ failed');
      byServer.push([r.server?.name ?? '', r.data?.num_subscriptions ?? Number.NaN, (r.data?.subscriptions_list ?? []).map((x) => x.subject).sort()]);
    }
    byServer.sort(([a], [b]) => a.localeCompare(b));
    return { counts: byServer.map(([, n]) => n), subjects: byServer[0]?.[2] ?? [] };
  } finally {
    await nc.close();
  }
}

/** kube-apiserver's apiserver_request_total, by `VERB resource[/subresource]` (its /metrics, as the admin). */
function apiserverRequests(fleet: Fleet): Map<string, number> {
  const text = execFileSync('curl', ['-sfk', '--max-time', '10', '-H', `Authorization: Bearer ${fleet.cp.token('admin')}`, `${fleet.cp.url}/metrics`], { encoding: 'utf8', maxBuffer: 64 << 20 });
  const out = new Map<string, number>();
  for (const line of text.split('\n')) {
    if (!line.startsWith('apiserver_request_total{')) continue;
    const label = (k: string) => new RegExp(`[{,]${k}="([^"]*)"`).exec(line)?.[1] ?? '';
    const key = `${label('verb')} ${label('resource')}${label('subresource') ? `/${label('subresource')}` : ''}`;
    out.set(key, (out.get(key) ?? 0) + Number(line.slice(line.lastIndexOf(' ') + 1)));
  }
  return out;
}

const WRITE_VERBS = new Set(['POST', 'PUT', 'PATCH', 'DELETE', 'APPLY']);

/** Requests per second between two apiserverRequests, by kind; the writes' total. */
function requestRates(a: Map<string, number>, b: Map<string, number>, seconds: number): FleetRun['apiserver'] {
  const byKind: Record<string, number> = {};
  let writes = 0;
  let all = 0;
  for (const [k, v] of b) {
    const rate = (v - (a.get(k) ?? 0)) / seconds;
    if (rate <= 0) continue;
    byKind[k] = rate;
    all += rate;
    if (WRITE_VERBS.has(k.split(' ')[0] ?? '')) writes += rate;
  }
  return { requestsPerSecond: all, writesPerSecond: writes, byKind };
}

const ticksOf = (procs: readonly AgentProcess[]) => procs.reduce((s, p) => s + (cpuTicks(p.pid) ?? 0), 0);

async function rollout(fleet: Fleet, pods: number, log: (line: string) => void): Promise<FleetRun['rollout']> {
  const ns = 'fleet-bench';
  const app = 'bench-web';
  const pollMs = 250;
  await createNamespace(fleet, ns);
  const p = parts(fleet);
  const before = { nodes: p.nodes.map((n) => ticksOf(n.procs)), hub: ticksOf(p.hub.procs), cp: ticksOf(p.controlPlane.procs) };
  const t0 = performance.now();
  await createDeployment(fleet, httpDeployment(app, ns, pods));
  const deadline = t0 + 600_000;
  for (;;) {
    const listed = await podsOf(fleet, ns, app).catch(() => []);
    if (listed.length === pods && listed.every(isReady)) {
      const readyMs = performance.now() - t0;
      const spread: Record<string, number> = {};
      for (const pod of listed) spread[pod.spec?.nodeName ?? ''] = (spread[pod.spec?.nodeName ?? ''] ?? 0) + 1;
      const s = (t: number) => t / CLK_TCK;
      const nodeSeconds = p.nodes.map((n, i) => s(ticksOf(n.procs) - (before.nodes[i] ?? 0)));
      log(`${fleet.nodes.length} node(s): ${pods} pods Ready in ${(readyMs / 1000).toFixed(1)} s`);
      return {
        pods,
        readyMs,
        pollMs,
        spread,
        cpuSeconds: { perNode: nodeSeconds.reduce((a, b) => a + b, 0) / Math.max(1, nodeSeconds.length), hub: s(ticksOf(p.hub.procs) - before.hub), controlPlane: s(ticksOf(p.controlPlane.procs) - before.cp) },
      };
    }
    if (performance.now() > deadline) return { error: `not all ${pods} pods Ready within 600 s (${listed.filter(isReady).length} Ready)` };
    await sleep(pollMs);
  }
}

async function measureFleet(nodes: number, o: FleetBenchOptions, cleanups: Cleanups): Promise<FleetRun> {
  const dir = mkdtempSync(join(tmpdir(), `ks-fleet-bench-${nodes}-`));
  o.log(`${nodes} node(s): starting the fleet in ${dir}`);
  const t0 = performance.now();
  const fleet = await Fleet.start({ nodes, dir, say: (line) => o.log(`  fleet | ${line}`), podWorkerReplicas: 1 });
  const stopStep = { what: 'the fleet', run: () => fleet.stop() };
  cleanups.push(stopStep);
  try {
    const startMs = performance.now() - t0;
    o.log(`${nodes} node(s) Ready after ${(startMs / 1000).toFixed(0)} s; settling ${o.settleSeconds} s, then ${o.idleSeconds} s idle`);
    await sleep(o.settleSeconds * 1000);
    const p = parts(fleet);
    const all = [...p.nodes, p.hub, p.controlPlane];
    const requests0 = apiserverRequests(fleet);
    const w0 = performance.now();
    const measured = await footprint(all.flatMap((x) => x.procs), o.idleSeconds);
    const apiserver = requestRates(requests0, apiserverRequests(fleet), (performance.now() - w0) / 1000);
    const byPid = new Map(measured.map((m) => [m.pid, m]));
    const costOf = (x: Part) => partCost(x.procs.flatMap((q) => byPid.get(q.pid) ?? []));
    const nodeCosts = p.nodes.map(costOf);
    const subs = await hubSubscriptions(fleet).catch((err: unknown) => ({ error: (err as Error).message }));
    const hubSubjects = 'error' in subs ? [] : subs.subjects;
    const idle: FleetRun['idle'] = {
      perNode: meanCost(nodeCosts),
      nodes: nodeCosts,
      hub: costOf(p.hub),
      controlPlane: costOf(p.controlPlane),
      processes: all.flatMap((x) => x.procs.flatMap((q) => { const m = byPid.get(q.pid); return m ? [{ ...m, part: x.part }] : []; })),
    };
    o.log(`${nodes} node(s) idle: per node ${idle.perNode.cpuPercent.toFixed(1)} % ${idle.perNode.pssMb.toFixed(0)} MB PSS; hub ${idle.hub.cpuPercent.toFixed(1)} %; control plane ${idle.controlPlane.cpuPercent.toFixed(1)} %`);
    const ro = await rollout(fleet, o.podsPerNode * nodes, o.log).catch((err: unknown) => ({ error: (err as Error).message }));
    return { nodes, settleSeconds: o.settleSeconds, idleSeconds: o.idleSeconds, startMs, idle, apiserver, hubSubscriptions: 'error' in subs ? subs : subs.counts, hubSubjects, rollout: ro };
  } finally {
    o.log(`${nodes} node(s): stopping the fleet`);
    await fleet.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}

/** A fleet is up on this machine: the lock is held by a live process, or the first node's bridge exists. */
function anotherFleet(): string | undefined {
  if (spawnSync('ip', ['link', 'show', 'ks-fleet1'], { stdio: 'ignore' }).status === 0) return 'the bridge ks-fleet1 exists';
  if (existsSync(FLEET_LOCK)) return `${FLEET_LOCK} exists`;
  return undefined;
}

/** Waits for the machine's fleet slot, then takes the lock (released by `cleanups`). */
async function waitForTheLock(cleanups: Cleanups, log: (line: string) => void): Promise<void> {
  for (;;) {
    const busy = anotherFleet();
    if (busy === undefined) {
      try {
        takeLock(cleanups);
        return;
      } catch (err) {
        if (!(err instanceof FleetLockHeld)) throw err;
      }
    }
    log(`another fleet is up (${busy ?? 'the lock was just taken'}): waiting 20 s`);
    await sleep(20_000);
  }
}

/** Every node count in turn (see the file's header); writes fleet.json and fleet.md to `out` and returns the table. */
export async function runFleetBench(o: FleetBenchOptions): Promise<string> {
  const cleanups = new Cleanups(o.log);
  cleanups.onSignals((code) => process.exit(code));
  const git = (...a: string[]) => spawnSync('git', ['-C', REPO_ROOT, ...a], { encoding: 'utf8' });
  const result: FleetBenchResult = {
    commit: `${git('rev-parse', '--short', 'HEAD').stdout.trim() || 'unknown'}${git('status', '--porcelain', '--untracked-files=no').stdout.trim() ? '+dirty' : ''}`,
    startedAt: new Date().toISOString(),
    finishedAt: '',
    machine: { cpus: cpus().length, node: process.version, kernel: release(), loadavg: { start: loadavg(), end: [] } },
    runs: [],
    failures: [],
  };
  try {
    await waitForTheLock(cleanups, o.log);
    // The first start may build the control plane (minutes of Go): not inside a fleet's figures.
    execFileSync('bash', [join(REPO_ROOT, 'deploy', 'conformance', 'build.sh')], { stdio: ['ignore', 'ignore', 'inherit'] });
    for (const nodes of o.nodeCounts) {
      try {
        result.runs.push(await measureFleet(nodes, o, cleanups));
      } catch (err) {
        o.log(`${nodes} node(s): ${(err as Error).message}`);
        result.failures.push({ nodes, reason: (err as Error).message });
      }
    }
  } finally {
    await cleanups.run();
  }
  result.finishedAt = new Date().toISOString();
  result.machine.loadavg.end = loadavg();
  const table = fleetTable(result);
  mkdirSync(o.out, { recursive: true });
  writeFileSync(join(o.out, 'fleet.json'), `${JSON.stringify(result, null, 2)}\n`);
  writeFileSync(join(o.out, 'fleet.md'), table);
  return table;
}
