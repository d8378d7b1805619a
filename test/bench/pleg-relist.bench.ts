/**
 * Relist cost with many pods: creates P hostNetwork pods with C containers
 * each (default 100 x 2) in the real containerd, then
 *  1. runs the generic PLEG's relist in this process N times (through
 *     cri-gateway, as the pleg service does) and prints p50/p99 in ms;
 *  2. starts the pleg service (RELIST_PERIOD=1s) and samples its CPU time
 *     over a minute from /proc.
 * Removes every pod it made.
 *
 *   npm run build && bash deploy/runtime.sh start && node dist/test/bench/pleg-relist.bench.js [--pods 100] [--containers 2] [--relists 100] [--cpu-seconds 60]
 */
import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { connect } from '@nats-io/transport-node';
import { SystemClock } from '@app/clock';
import type { PodCacheEntry } from '@app/contracts';
import { NatsCriClient } from '@app/cri';
import { silentLogger } from '@app/observability';
import { GenericPleg } from '../../apps/pleg/src/generic-pleg.js';
import { PlegEventSink, PodCacheStore } from '../../apps/pleg/src/ports.js';
import { freePort, startNats, startService } from '../../deploy/local/stack.js';
import { runtimeAddress } from '../support/runtime.js';

const { values } = parseArgs({ options: { pods: { type: 'string', default: '100' }, containers: { type: 'string', default: '2' }, relists: { type: 'string', default: '100' }, 'cpu-seconds': { type: 'string', default: '60' } } });
const PODS = Number(values.pods);
const CONTAINERS = Number(values.containers);
const NODE = 'pleg-bench';

class NullCache extends PodCacheStore {
  load() {
    return Promise.resolve({ entries: [] as PodCacheEntry[], global: 0 });
  }
  set() {
    return Promise.resolve();
  }
  delete() {
    return Promise.resolve();
  }
  updateGlobal() {
    return Promise.resolve();
  }
}
class CountingSink extends PlegEventSink {
  n = 0;
  publish(): boolean {
    this.n++;
    return true;
  }
}

const cpuTicks = (pid: number) => {
  const f = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]?.split(' ') ?? [];
  return Number(f[11]) + Number(f[12]); // utime + stime, in clock ticks (100/s)
};
const pct = (xs: number[], p: number) => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor((p / 100) * xs.length))] ?? NaN;

const nats = await startNats();
const nc = await connect({ servers: nats.url, ...nats.auth() });
const gateway = await startService('cri-gateway', { NODE_NAME: NODE, NATS_URL: nats.url, LOG_LEVEL: 'warn', CONTAINER_RUNTIME_ENDPOINT: `unix://${runtimeAddress()}` }, { port: await freePort(), instance: 'b' });
const cri = new NatsCriClient(nc, NODE, 'bench');
const sandboxes: string[] = [];
try {
  const t0 = Date.now();
  for (let p = 0; p < PODS; p++) {
    const uid = randomUUID();
    const labels = { 'io.kubernetes.pod.uid': uid, 'io.kubernetes.pod.name': `bench-${p}`, 'io.kubernetes.pod.namespace': 'pleg-bench', 'kubelet-split.io/node': NODE };
    const config = { metadata: { name: `bench-${p}`, namespace: 'pleg-bench', uid, attempt: 0 }, labels, linux: { securityContext: { namespaceOptions: { network: 'NODE' as const } } } };
    const { podSandboxId } = await cri.runtime('RunPodSandbox', { config });
    sandboxes.push(podSandboxId);
    for (let c = 0; c < CONTAINERS; c++) {
      const { containerId } = await cri.runtime('CreateContainer', { podSandboxId, config: { metadata: { name: `c${c}`, attempt: 0 }, image: { image: 'localhost/kubelet-split/busybox:1.35' }, command: ['sleep', '3600'], labels: { ...labels, 'io.kubernetes.container.name': `c${c}` } }, sandboxConfig: config });
      await cri.runtime('StartContainer', { containerId });
    }
  }
  process.stdout.write(`created ${PODS} pods with ${CONTAINERS} containers each in ${((Date.now() - t0) / 1000).toFixed(1)}s\n`);

  const sink = new CountingSink();
  const pleg = new GenericPleg({ cri, cache: new NullCache(), sink, clock: new SystemClock(), logger: silentLogger() }, { inspectTimeoutMs: 5000, inspectConcurrency: 4, relistThresholdMs: 180_000 });
  let t = performance.now();
  await pleg.relist();
  process.stdout.write(`first relist (inspects every pod): ${(performance.now() - t).toFixed(1)}ms, ${sink.n} events\n`);
  const times: number[] = [];
  for (let i = 0; i < Number(values.relists); i++) {
    t = performance.now();
    await pleg.relist();
    times.push(performance.now() - t);
  }
  process.stdout.write(`steady relist over ${times.length} runs: p50 ${pct(times, 50).toFixed(2)}ms, p99 ${pct(times, 99).toFixed(2)}ms\n`);

  const seconds = Number(values['cpu-seconds']);
  const plegProc = await startService('pleg', { NODE_NAME: NODE, NATS_URL: nats.url, LOG_LEVEL: 'warn', RELIST_PERIOD: '1s' }, { port: await freePort(), instance: 'b' });
  await new Promise((r) => setTimeout(r, 5000)); // past the first full inspection
  const pid = plegProc.process.pid ?? 0;
  const gwPid = gateway.process.pid ?? 0;
  const [a, ga] = [cpuTicks(pid), cpuTicks(gwPid)];
  await new Promise((r) => setTimeout(r, seconds * 1000));
  const [b, gb] = [cpuTicks(pid), cpuTicks(gwPid)];
  process.stdout.write(`pleg process CPU over ${seconds}s at RELIST_PERIOD=1s: ${(((b - a) / 100 / seconds) * 100).toFixed(1)}% of one core (${((b - a) / 100).toFixed(2)}s)\n`);
  process.stdout.write(`cri-gateway CPU over the same minute: ${(((gb - ga) / 100 / seconds) * 100).toFixed(1)}% of one core\n`);
  await plegProc.stop();
} finally {
  for (const id of sandboxes) {
    await cri.runtime('StopPodSandbox', { podSandboxId: id }).catch(() => undefined);
    await cri.runtime('RemovePodSandbox', { podSandboxId: id }).catch(() => undefined);
  }
  await gateway.stop();
  await nc.close();
  await nats.stop();
}
