/**
 * What the NATS hop costs: ListContainers and ContainerStatus through
 * cri-gateway over NATS (libs/cri's client) against the same calls made
 * directly over gRPC to containerd, N sequential calls each, alternating the
 * two so both see the same load, after a warm-up;
 * prints p50, p99 and the latency NATS adds.
 *
 *   npm run build && bash deploy/runtime.sh start && node dist/test/bench/cri-latency.bench.js [--calls 1000]
 */
import { randomUUID } from 'node:crypto';
import { parseArgs } from 'node:util';
import { connect } from '@nats-io/transport-node';
import { ContainerStatusRequest, ListContainersRequest, NatsCriClient } from '@app/cri';
import { GrpcRuntimeConnection } from '../../apps/cri-gateway/src/adapters/grpc-runtime-connection.js';
import { freePort, startNats, startService } from '../../deploy/local/stack.js';
import { runtimeAddress } from '../support/runtime.js';

const { values } = parseArgs({ options: { calls: { type: 'string', default: '1000' } } });
const calls = Number(values.calls);
const NODE = 'bench';

function percentile(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? Number.NaN;
}

type Stats = { p50: number; p99: number };

/** Alternates the two calls, so both see the same machine load; after a warm-up. */
async function measure(direct: () => Promise<unknown>, viaNats: () => Promise<unknown>): Promise<[Stats, Stats]> {
  for (let i = 0; i < 100; i++) await Promise.all([direct(), viaNats()]);
  const d: number[] = [];
  const n: number[] = [];
  for (let i = 0; i < calls; i++) {
    let t0 = performance.now();
    await direct();
    d.push(performance.now() - t0);
    t0 = performance.now();
    await viaNats();
    n.push(performance.now() - t0);
  }
  const stats = (t: number[]): Stats => {
    t.sort((a, b) => a - b);
    return { p50: percentile(t, 50), p99: percentile(t, 99) };
  };
  return [stats(d), stats(n)];
}

const address = runtimeAddress();
const nats = await startNats();
const nc = await connect({ servers: nats.url, name: 'bench', ...nats.auth() });
const gateway = await startService('cri-gateway', { NODE_NAME: NODE, NATS_URL: nats.url, LOG_LEVEL: 'warn', CONTAINER_RUNTIME_ENDPOINT: `unix://${address}` }, { port: await freePort(), instance: 'bench' });
const cri = new NatsCriClient(nc, NODE, 'bench');
const direct = new GrpcRuntimeConnection(`unix://${address}`);

const uid = randomUUID();
const config = { metadata: { name: 'bench', namespace: 'bench', uid, attempt: 0 }, linux: { securityContext: { namespaceOptions: { network: 'NODE' as const } } } };
const { podSandboxId } = await cri.runtime('RunPodSandbox', { config });
try {
  const { containerId } = await cri.runtime('CreateContainer', {
    podSandboxId,
    config: { metadata: { name: 'c', attempt: 0 }, image: { image: 'localhost/kubelet-split/busybox:1.35' }, command: ['sleep', '3600'] },
    sandboxConfig: config,
  });
  await cri.runtime('StartContainer', { containerId });
  const listed = await cri.runtime('ListContainers', {});

  const rows: [string, Stats, Stats][] = [
    ['ListContainers', ...(await measure(() => direct.unary('runtime', 'ListContainers', ListContainersRequest.fromPartial({}), 30_000), () => cri.runtime('ListContainers', {})))],
    ['ContainerStatus', ...(await measure(() => direct.unary('runtime', 'ContainerStatus', ContainerStatusRequest.fromPartial({ containerId }), 30_000), () => cri.runtime('ContainerStatus', { containerId })))],
  ];
  const f = (n: number) => `${n.toFixed(3)}ms`.padStart(10);
  process.stdout.write(`${calls} sequential calls each, ${listed.containers.length} containers in the runtime (node ${process.version})\n`);
  process.stdout.write(`${'call'.padEnd(16)}${'gRPC p50'.padStart(10)}${'gRPC p99'.padStart(10)}${'NATS p50'.padStart(10)}${'NATS p99'.padStart(10)}${'added p50'.padStart(11)}${'added p99'.padStart(11)}\n`);
  for (const [name, g, n] of rows) {
    process.stdout.write(`${name.padEnd(16)}${f(g.p50)}${f(g.p99)}${f(n.p50)}${f(n.p99)} ${f(n.p50 - g.p50)} ${f(n.p99 - g.p99)}\n`);
  }
} finally {
  await cri.runtime('StopPodSandbox', { podSandboxId }).catch(() => undefined);
  await cri.runtime('RemovePodSandbox', { podSandboxId }).catch(() => undefined);
  direct.close();
  await gateway.stop();
  await nc.close();
  await nats.stop();
}
