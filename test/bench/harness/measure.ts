/**
 * The figures, each measured on a running agent through its public
 * contract only: manifests written to (renamed into) its static pod
 * directory, `GET /pods` polled, the runtime's sandboxes listed over gRPC.
 * Every pod is the same hostNetwork busybox pod whose process exits on
 * SIGTERM, so a kill is not a grace period's wait.
 *
 * One agent's run, in order:
 *   warm-up   one pod started and removed, not counted (first-use costs of either agent)
 *   P1        N pods one after another: manifest -> Running and Ready in /pods
 *             (then all removed, and gone)
 *   P6 one    one pod started; manifest removed -> its sandbox NOT_READY in the CRI
 *   P2        M manifests at once -> every pod Running and Ready
 *   P3        those M pods running, S seconds: CPU and RSS of the agent's processes
 *   P7        K of those pods' containers SIGKILLed behind the agent's back, one at a time, at a random
 *             moment: kill -> its pod's status in /pods shows it (not Ready, or a restart counted)
 *   P6 many   the M manifests removed at once -> every sandbox NOT_READY
 *   density   D pods (250 by default, as large nodes run; the agents' maxPods allows them): P2 for D at once,
 *             P3 with D running, P6 for D at once
 *   P5        each process restarted on the idle agent (cold start to ready)
 */
import { randomUUID } from 'node:crypto';
import { execFileSync } from 'node:child_process';
import { renameSync, unlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import {
  CreateContainerRequest,
  type CreateContainerResponse,
  RemovePodSandboxRequest,
  RunPodSandboxRequest,
  type RunPodSandboxResponse,
  StartContainerRequest,
  StopPodSandboxRequest,
} from '@app/cri';
import { KubeletLabels } from '@app/kube';
import { GrpcRuntimeConnection } from '../../../apps/cri-gateway/src/adapters/grpc-runtime-connection.js';
import { CriObserver, cpuTicks, machineTicks, pssBytes, rssBytes, type Agent, type AgentProcess, type PodView } from './agent.js';
import { distribution, type AgentFigures, type CpuShare, type FloorFigures, type ProcessFootprint } from './report.js';

export const BENCH_IMAGE = 'localhost/kubelet-split/busybox:1.35';
/** The container's command: PID 1 traps SIGTERM and exits at once. */
export const BENCH_COMMAND = ['sh', '-c', "trap 'exit 0' TERM; sleep 3600 & wait"];

export interface MeasureOptions {
  p1Pods: number;
  p2Pods: number;
  p3Seconds: number;
  p5Runs: number;
  /** P7: containers killed, one after another. */
  p7Kills: number;
  /** The density figures' pods (P2, P3 and P6 again with this many); 0: none. */
  densityPods: number;
  pollMs: { p1: number; p2: number; p6: number };
  log: (line: string) => void;
}

export function manifest(name: string): string {
  return [
    'apiVersion: v1',
    'kind: Pod',
    'metadata:',
    `  name: ${name}`,
    '  namespace: default',
    'spec:',
    '  hostNetwork: true',
    '  terminationGracePeriodSeconds: 10',
    '  containers:',
    '  - name: main',
    `    image: ${BENCH_IMAGE}`,
    '    imagePullPolicy: IfNotPresent',
    `    command: ${JSON.stringify(BENCH_COMMAND)}`,
    '',
  ].join('\n');
}

/** Written beside, as a dotfile (both agents skip those), then renamed in: the agent never reads half a file. */
function writeManifest(dir: string, name: string): void {
  const tmp = join(dir, `.${name}.yaml.tmp`);
  writeFileSync(tmp, manifest(name));
  renameSync(tmp, join(dir, `${name}.yaml`));
}

function removeManifest(dir: string, name: string): void {
  unlinkSync(join(dir, `${name}.yaml`));
}

const runningAndReady = (p: PodView | undefined) => p !== undefined && p.phase === 'Running' && p.ready;

async function until<T>(what: string, timeoutMs: number, pollMs: number, fn: () => Promise<T | undefined>): Promise<T> {
  const deadline = performance.now() + timeoutMs;
  let last: unknown;
  for (;;) {
    try {
      const v = await fn();
      if (v !== undefined) return v;
    } catch (err) {
      last = err;
    }
    if (performance.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}${last ? ` (${(last as Error).message})` : ''}`);
    await sleep(pollMs);
  }
}

/** Until none of the pods is in /pods and none has a ready sandbox. */
async function waitGone(agent: Agent, cri: CriObserver, names: string[], timeoutMs: number): Promise<void> {
  const pods = names.map((n) => agent.podName(n));
  await until(`${names.length} pod(s) gone from ${agent.name}`, timeoutMs, 200, async () => {
    const [listed, sandboxes] = await Promise.all([agent.pods(), cri.sandboxReady()]);
    return pods.every((p) => !listed.has(p) && sandboxes.get(p) !== true) ? true : undefined;
  });
}

/** Writes the manifests at once; each pod's time to Running and Ready, ms after the first write. */
async function startAll(agent: Agent, names: string[], pollMs: number, timeoutMs: number): Promise<{ perPod: number[]; totalMs: number }> {
  const t0 = performance.now();
  for (const n of names) writeManifest(agent.manifests, n);
  const readyAt = new Map<string, number>();
  await until(`${names.length} pod(s) Running and Ready in ${agent.name}`, timeoutMs, pollMs, async () => {
    const listed = await agent.pods();
    const now = performance.now() - t0;
    for (const n of names) if (!readyAt.has(n) && runningAndReady(listed.get(agent.podName(n)))) readyAt.set(n, now);
    return readyAt.size === names.length ? true : undefined;
  });
  const perPod = names.map((n) => readyAt.get(n) ?? Number.NaN);
  return { perPod, totalMs: Math.max(...perPod) };
}

/** Removes the manifests at once; each pod's time until no sandbox of it is ready, ms after the first removal. */
async function removeAll(agent: Agent, cri: CriObserver, names: string[], pollMs: number, timeoutMs: number): Promise<{ perPod: number[]; totalMs: number }> {
  const t0 = performance.now();
  for (const n of names) removeManifest(agent.manifests, n);
  const notReadyAt = new Map<string, number>();
  await until(`${names.length} sandbox(es) not ready in ${agent.name}'s runtime`, timeoutMs, pollMs, async () => {
    const sandboxes = await cri.sandboxReady();
    const now = performance.now() - t0;
    for (const n of names) if (!notReadyAt.has(n) && sandboxes.get(agent.podName(n)) !== true) notReadyAt.set(n, now);
    return notReadyAt.size === names.length ? true : undefined;
  });
  const perPod = names.map((n) => notReadyAt.get(n) ?? Number.NaN);
  return { perPod, totalMs: Math.max(...perPod) };
}

/**
 * P7: each pod's container SIGKILLed on the host (as `kill -9` or the OOM killer would: the agent is not told),
 * one pod after another, each at a random moment of a second so that the kills fall anywhere in a relist period;
 * each kill's time until the pod's status in /pods shows it: not Ready, or one restart more than before (an agent
 * may have restarted the container before a poll sees it not Ready). Then until the pod is Running and Ready again.
 */
async function killsSeen(agent: Agent, cri: CriObserver, names: string[], pollMs: number): Promise<number[]> {
  const seen: number[] = [];
  for (const n of names) {
    const pod = agent.podName(n);
    const before = (await agent.pods()).get(pod);
    if (before === undefined || !runningAndReady(before)) throw new Error(`P7: pod ${pod} is not Running and Ready before its kill`);
    const pid = await cri.runningContainerPid(pod);
    await sleep(Math.random() * 1000);
    const t0 = performance.now();
    process.kill(pid, 'SIGKILL');
    seen.push(
      await until(`${agent.name}'s status of ${pod} after its container (pid ${pid}) was killed`, 60_000, pollMs, async () => {
        const p = (await agent.pods()).get(pod);
        return p !== undefined && (!p.ready || p.restarts > before.restarts) ? performance.now() - t0 : undefined;
      }),
    );
    await until(`${pod} Running and Ready again in ${agent.name}`, 120_000, 100, async () => (runningAndReady((await agent.pods()).get(pod)) ? true : undefined));
  }
  return seen;
}

/** Clock ticks per second (USER_HZ), the unit of /proc/<pid>/stat's utime and stime. */
export const CLK_TCK = (() => {
  try {
    return Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim()) || 100;
  } catch {
    return 100;
  }
})();

/** CPU % of one core over `seconds` and mean RSS and PSS, per process, sampling the memory every second (also the fleet bench's). */
export async function footprint(procs: readonly AgentProcess[], seconds: number): Promise<ProcessFootprint[]> {
  const t0 = performance.now();
  const cpu0 = procs.map((p) => cpuTicks(p.pid));
  const rss: number[][] = procs.map(() => []);
  const pss: number[][] = procs.map(() => []);
  const end = t0 + seconds * 1000;
  while (performance.now() < end) {
    procs.forEach((p, i) => {
      const r = rssBytes(p.pid);
      if (r !== undefined) rss[i]?.push(r);
      const s = pssBytes(p.pid);
      if (s !== undefined) pss[i]?.push(s);
    });
    await sleep(Math.min(1000, Math.max(0, end - performance.now())));
  }
  const elapsed = (performance.now() - t0) / 1000;
  return procs.map((p, i) => {
    const a = cpu0[i];
    const b = cpuTicks(p.pid);
    const samples = rss[i] ?? [];
    const pssSamples = pss[i] ?? [];
    return {
      name: p.name,
      pid: p.pid,
      cpuPercent: a === undefined || b === undefined ? Number.NaN : ((b - a) / CLK_TCK / elapsed) * 100,
      rssMb: samples.length ? samples.reduce((x, y) => x + y, 0) / samples.length / 1e6 : Number.NaN,
      ...(pssSamples.length ? { pssMb: pssSamples.reduce((x, y) => x + y, 0) / pssSamples.length / 1e6 } : {}),
    };
  });
}

/** Runs `fn` and says where the CPU went meanwhile: the machine's busy share (of all its cores), each agent process's CPU seconds. */
async function cpuDuring<T>(agent: Agent, fn: () => Promise<T>): Promise<{ result: T; cpu: CpuShare }> {
  const procs = agent.processes();
  const ticks0 = procs.map((p) => cpuTicks(p.pid));
  const machine0 = machineTicks();
  const result = await fn();
  const machine1 = machineTicks();
  return {
    result,
    cpu: {
      machineBusyPercent: ((machine1.busy - machine0.busy) / Math.max(1, machine1.total - machine0.total)) * 100,
      processes: procs.map((p, i) => ({ name: p.name, cpuSeconds: ((cpuTicks(p.pid) ?? Number.NaN) - (ticks0[i] ?? Number.NaN)) / CLK_TCK })),
    },
  };
}

/** A P3 window's sums over the agent's processes (PSS only when every process's could be read), and the processes. */
function totals(processes: ProcessFootprint[]): { cpuPercent: number; rssMb: number; pssMb?: number; processes: ProcessFootprint[] } {
  const sum = (f: (p: ProcessFootprint) => number) => processes.reduce((s, p) => s + (Number.isFinite(f(p)) ? f(p) : 0), 0);
  return { cpuPercent: sum((p) => p.cpuPercent), rssMb: sum((p) => p.rssMb), ...(processes.every((p) => p.pssMb !== undefined) ? { pssMb: sum((p) => p.pssMb ?? 0) } : {}), processes };
}

/** P1, P2, P3, P5 and P6 on a started agent (see the file's header); `coldStart` is what start() returned. */
export async function measureAgent(agent: Agent, coldStart: Record<string, number>, o: MeasureOptions): Promise<AgentFigures> {
  const cri = new CriObserver(agent.criEndpoint);
  try {
    o.log(`${agent.name}: warm-up pod`);
    await startAll(agent, ['bench-warmup'], o.pollMs.p1, 120_000);
    removeManifest(agent.manifests, 'bench-warmup');
    await waitGone(agent, cri, ['bench-warmup'], 120_000);

    o.log(`${agent.name}: P1, ${o.p1Pods} pods one after another`);
    const p1: number[] = [];
    const p1Names: string[] = [];
    for (let i = 0; i < o.p1Pods; i++) {
      const name = `bench-p1-${String(i).padStart(3, '0')}`;
      p1Names.push(name);
      const { totalMs } = await startAll(agent, [name], o.pollMs.p1, 60_000);
      p1.push(totalMs);
    }
    o.log(`${agent.name}: P1 p50 ${Math.round(distribution(p1).p50)} ms; removing the P1 pods`);
    for (const n of p1Names) removeManifest(agent.manifests, n);
    await waitGone(agent, cri, p1Names, 180_000);

    o.log(`${agent.name}: P6, one pod`);
    await startAll(agent, ['bench-p6'], o.pollMs.p1, 60_000);
    const one = (await removeAll(agent, cri, ['bench-p6'], o.pollMs.p6, 60_000)).totalMs;
    await waitGone(agent, cri, ['bench-p6'], 120_000);

    o.log(`${agent.name}: P2, ${o.p2Pods} manifests at once`);
    const p2Names = Array.from({ length: o.p2Pods }, (_, i) => `bench-p2-${String(i).padStart(3, '0')}`);
    const { result: p2, cpu: p2Cpu } = await cpuDuring(agent, () => startAll(agent, p2Names, o.pollMs.p2, 600_000));
    o.log(`${agent.name}: P2 ${Math.round(p2.totalMs)} ms; P3, ${o.p3Seconds} s with ${o.p2Pods} pods running`);

    await sleep(Math.min(5000, o.p3Seconds * 200)); // past the burst's tail (status writes, first probes of the runtime)
    const processes = await footprint(agent.processes(), o.p3Seconds);

    o.log(`${agent.name}: P7, ${o.p7Kills} containers killed behind its back`);
    const p7 = await killsSeen(agent, cri, p2Names.slice(0, o.p7Kills), o.pollMs.p1);
    o.log(`${agent.name}: P7 p50 ${Math.round(distribution(p7).p50)} ms`);

    o.log(`${agent.name}: P6, ${o.p2Pods} manifests removed at once`);
    const { result: many, cpu: p6Cpu } = await cpuDuring(agent, () => removeAll(agent, cri, p2Names, o.pollMs.p6, 600_000));
    await waitGone(agent, cri, p2Names, 300_000);

    let density: AgentFigures['density'];
    if (o.densityPods > 0) {
      const d = o.densityPods;
      o.log(`${agent.name}: density, ${d} manifests at once`);
      const names = Array.from({ length: d }, (_, i) => `bench-d-${String(i).padStart(3, '0')}`);
      const { result: start, cpu: startCpu } = await cpuDuring(agent, () => startAll(agent, names, o.pollMs.p2, 1_200_000));
      o.log(`${agent.name}: density P2 ${Math.round(start.totalMs)} ms; P3, ${o.p3Seconds} s with ${d} pods running`);
      await sleep(Math.min(5000, o.p3Seconds * 200));
      const running = await footprint(agent.processes(), o.p3Seconds);
      o.log(`${agent.name}: density P6, ${d} manifests removed at once`);
      const { result: gone, cpu: goneCpu } = await cpuDuring(agent, () => removeAll(agent, cri, names, o.pollMs.p6, 1_200_000));
      await waitGone(agent, cri, names, 600_000);
      density = {
        pods: d,
        p2: { totalMs: start.totalMs, perPod: distribution(start.perPod), cpu: startCpu },
        p3: { seconds: o.p3Seconds, ...totals(running) },
        p6: { totalMs: gone.totalMs, perPod: distribution(gone.perPod), cpu: goneCpu },
      };
    }

    const services: Record<string, number[]> = Object.fromEntries(Object.entries(coldStart).map(([k, v]) => [k, [v]]));
    for (let r = 1; r < o.p5Runs && agent.restartable; r++) {
      o.log(`${agent.name}: P5, restart ${r} of each process`);
      for (const [k, v] of Object.entries(await agent.restartEach())) (services[k] ??= []).push(v);
    }

    return {
      description: agent.description,
      p1: distribution(p1),
      p2: { pods: o.p2Pods, totalMs: p2.totalMs, perPod: distribution(p2.perPod), cpu: p2Cpu },
      p3: { pods: o.p2Pods, seconds: o.p3Seconds, ...totals(processes) },
      p5: { readiness: agent.readiness, services },
      p7: distribution(p7),
      p6: { one, many: { pods: o.p2Pods, totalMs: many.totalMs, perPod: distribution(many.perPod), cpu: p6Cpu } },
      ...(density ? { density } : {}),
    };
  } finally {
    cri.close();
  }
}

/**
 * The raw CRI floor: what containerd alone takes for a pod like the
 * benchmark's (RunPodSandbox hostNetwork, CreateContainer, StartContainer),
 * straight over gRPC: `sequential` pods one after another, then `burst` pods
 * with `concurrency` at a time. Every pod carries a node label of its own and
 * is stopped and removed at the end.
 */
export async function measureFloor(endpoint: string, sequential: number, burst: number, concurrency: number): Promise<FloorFigures> {
  const conn = new GrpcRuntimeConnection(endpoint);
  const node = `ks-bench-floor-${process.pid}`;
  const sandboxes: string[] = [];
  const call = async <T>(method: string, req: unknown) => (await conn.unary('runtime', method, req, 120_000)) as T;
  const onePod = async (name: string): Promise<number> => {
    const t0 = performance.now();
    const labels = { [KubeletLabels.node]: node, [KubeletLabels.podName]: name, [KubeletLabels.podNamespace]: 'bench' };
    const config = { metadata: { name, namespace: 'bench', uid: randomUUID(), attempt: 0 }, labels, linux: { securityContext: { namespaceOptions: { network: 'NODE' as const } } } };
    const { podSandboxId } = await call<RunPodSandboxResponse>('RunPodSandbox', RunPodSandboxRequest.fromPartial({ config }));
    sandboxes.push(podSandboxId);
    const { containerId } = await call<CreateContainerResponse>(
      'CreateContainer',
      CreateContainerRequest.fromPartial({ podSandboxId, sandboxConfig: config, config: { metadata: { name: 'main', attempt: 0 }, image: { image: BENCH_IMAGE }, command: BENCH_COMMAND, labels } }),
    );
    await call('StartContainer', StartContainerRequest.fromPartial({ containerId }));
    return performance.now() - t0;
  };
  const cleanup = async () => {
    for (const podSandboxId of sandboxes.splice(0)) {
      await call('StopPodSandbox', StopPodSandboxRequest.fromPartial({ podSandboxId })).catch(() => undefined);
      await call('RemovePodSandbox', RemovePodSandboxRequest.fromPartial({ podSandboxId })).catch(() => undefined);
    }
  };
  try {
    const seq: number[] = [];
    for (let i = 0; i < sequential; i++) seq.push(await onePod(`floor-seq-${i}`));
    await cleanup();
    const t0 = performance.now();
    let next = 0;
    await Promise.all(
      Array.from({ length: Math.min(concurrency, burst) }, async () => {
        while (next < burst) await onePod(`floor-burst-${next++}`);
      }),
    );
    const totalMs = performance.now() - t0;
    return { endpoint, sequential: distribution(seq), burst: { pods: burst, concurrency, totalMs } };
  } finally {
    await cleanup();
    conn.close();
  }
}
