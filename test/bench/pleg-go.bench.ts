/**
 * The Go PLEG (contrib/pleg-go) beside ours under the same load: a real
 * nats-server with the services' users, cri-gateway on the real
 * containerd, and one PLEG at a time relisting every RELIST_PERIOD (1s):
 * ours as it runs by default (TRACING=on), ours with TRACING=off (the Go
 * PLEG records no trace hops), and the Go PLEG. For each, at rest (no pods)
 * and with P pods (default 20, one sleeping container each, made with the
 * CRI directly), after the first full inspection:
 *  - RSS and PSS of the process (/proc/<pid>/status, smaps_rollup);
 *  - CPU per relist: the process' CPU time over S seconds (default 30)
 *    divided by the relists it made (kubelet_pleg_relist_duration_seconds_count);
 *  - bytes over NATS per second: in + out bytes of its connection, from
 *    nats-server's connz asked over NATS ($SYS.REQ.ACCOUNT.PING.CONNZ);
 *  - cri-gateway's CPU over the same seconds (the relist's other half).
 *
 *   npm run build && bash deploy/runtime.sh start && node dist/test/bench/pleg-go.bench.js [--pods 20] [--seconds 30]
 */
import { spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { connect } from '@nats-io/transport-node';
import { NatsCriClient } from '@app/cri';
import { sampleMonitoring, type ConnzConnection } from '@app/nats';
import { REPO_ROOT, freePort, startNats, startService, stopProcess, waitHttpOk, type ServiceProcess } from '../../deploy/local/stack.js';
import { pssBytes, rssBytes } from './harness/agent.js';
import { runtimeAddress } from '../support/runtime.js';

const { values } = parseArgs({ options: { pods: { type: 'string', default: '20' }, seconds: { type: 'string', default: '30' } } });
const PODS = Number(values.pods);
const SECONDS = Number(values.seconds);
const NODE = 'plego-bench';

const cpuTicks = (pid: number) => {
  const f = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]?.split(' ') ?? [];
  return Number(f[11]) + Number(f[12]); // utime + stime, in clock ticks (100/s)
};
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const mib = (b: number | undefined) => ((b ?? NaN) / 2 ** 20).toFixed(1);

const goBinary = execFileSync('bash', [join(REPO_ROOT, 'contrib/pleg-go/build.sh')], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'inherit'] }).trim().split('\n').at(-1) ?? '';
const nats = await startNats({ nodes: [NODE] });
const nc = await connect({ servers: nats.url, name: 'bench', ...nats.auth() });
const base = { NODE_NAME: NODE, NATS_URL: nats.url, LOG_LEVEL: 'warn' };
const gateway = await startService('cri-gateway', { ...base, CONTAINER_RUNTIME_ENDPOINT: `unix://${runtimeAddress()}` }, { port: await freePort(), instance: 'b' });
const cri = new NatsCriClient(nc, NODE, 'bench');

type Impl = 'ts' | 'ts-tracing-off' | 'go';
async function startPleg(impl: Impl): Promise<ServiceProcess> {
  const env = { ...base, RELIST_PERIOD: '1s', ...(impl === 'ts-tracing-off' ? { TRACING: 'off' } : {}) };
  const port = await freePort();
  if (impl !== 'go') return startService('pleg', env, { port, instance: impl });
  const child = spawn(goBinary, [], { env: { ...process.env, ...nats.credentials.env('pleg'), ...env, PORT: String(port), INSTANCE_ID: 'go' }, stdio: ['ignore', 'ignore', 'inherit'] });
  await waitHttpOk(`http://127.0.0.1:${port}/readyz`, 30_000, () => child.exitCode === null);
  return { service: 'pleg', instance: 'go', port, process: child, readyUrl: `http://127.0.0.1:${port}/readyz`, stop: (g = 10_000) => stopProcess(child, g) };
}

async function relists(port: number): Promise<number> {
  const text = await (await fetch(`http://127.0.0.1:${port}/metrics`)).text();
  return Number(/^kubelet_pleg_relist_duration_seconds_count\{[^}]*\} (\d+)/m.exec(text)?.[1] ?? NaN);
}
async function natsBytes(): Promise<ConnzConnection | undefined> {
  const { connz } = await sampleMonitoring(nc);
  return connz.connections.find((c) => c.name?.startsWith(`pleg@${NODE}#`));
}

interface Row {
  impl: Impl;
  pods: number;
  rssMiB: string;
  pssMiB: string;
  cpuMsPerRelist: string;
  cpuPct: string;
  natsBytesPerSec: string;
  gatewayCpuPct: string;
}

async function measure(impl: Impl, pods: number): Promise<Row> {
  const p = await startPleg(impl);
  const pid = p.process.pid ?? 0;
  try {
    // Leading, and past the first relist that inspects every pod.
    for (let i = 0; i < 100 && (await relists(p.port).catch(() => 0)) < 3; i++) await sleep(200);
    await sleep(3000);
    const [c0, g0, r0, n0] = [cpuTicks(pid), cpuTicks(gateway.process.pid ?? 0), await relists(p.port), await natsBytes()];
    await sleep(SECONDS * 1000);
    const [c1, g1, r1, n1] = [cpuTicks(pid), cpuTicks(gateway.process.pid ?? 0), await relists(p.port), await natsBytes()];
    const cpuMs = ((c1 - c0) / 100) * 1000;
    const bytes = n0 && n1 ? n1.in_bytes + n1.out_bytes - (n0.in_bytes + n0.out_bytes) : NaN;
    return {
      impl,
      pods,
      rssMiB: mib(rssBytes(pid)),
      pssMiB: mib(pssBytes(pid)),
      cpuMsPerRelist: (cpuMs / (r1 - r0)).toFixed(2),
      cpuPct: ((cpuMs / (SECONDS * 1000)) * 100).toFixed(2),
      natsBytesPerSec: (bytes / SECONDS).toFixed(0),
      gatewayCpuPct: ((((g1 - g0) / 100) * 1000 / (SECONDS * 1000)) * 100).toFixed(2),
    };
  } finally {
    await p.stop(10_000);
  }
}

const impls: Impl[] = ['ts', 'ts-tracing-off', 'go'];
const rows: Row[] = [];
const sandboxes: string[] = [];
try {
  for (const impl of impls) rows.push(await measure(impl, 0));
  for (let i = 0; i < PODS; i++) {
    const uid = randomUUID();
    const labels = { 'io.kubernetes.pod.uid': uid, 'io.kubernetes.pod.name': `bench-${i}`, 'io.kubernetes.pod.namespace': 'plego-bench', 'kubelet-split.io/node': NODE };
    const config = { metadata: { name: `bench-${i}`, namespace: 'plego-bench', uid, attempt: 0 }, labels, linux: { securityContext: { namespaceOptions: { network: 'NODE' as const } } } };
    const { podSandboxId } = await cri.runtime('RunPodSandbox', { config });
    sandboxes.push(podSandboxId);
    const { containerId } = await cri.runtime('CreateContainer', { podSandboxId, config: { metadata: { name: 'main', attempt: 0 }, image: { image: 'localhost/kubelet-split/busybox:1.35' }, command: ['sleep', '3600'], labels: { ...labels, 'io.kubernetes.container.name': 'main' } }, sandboxConfig: config });
    await cri.runtime('StartContainer', { containerId });
  }
  for (const impl of impls) rows.push(await measure(impl, PODS));
  process.stdout.write(`\n| PLEG | pods | RSS MiB | PSS MiB | CPU ms/relist | CPU % | NATS bytes/s | cri-gateway CPU % |\n|---|---|---|---|---|---|---|---|\n`);
  for (const r of rows) process.stdout.write(`| ${r.impl} | ${r.pods} | ${r.rssMiB} | ${r.pssMiB} | ${r.cpuMsPerRelist} | ${r.cpuPct} | ${r.natsBytesPerSec} | ${r.gatewayCpuPct} |\n`);
} finally {
  for (const id of sandboxes) {
    await cri.runtime('StopPodSandbox', { podSandboxId: id }).catch(() => undefined);
    await cri.runtime('RemovePodSandbox', { podSandboxId: id }).catch(() => undefined);
  }
  await gateway.stop();
  await nc.close();
  await nats.stop();
}
