/**
 * P4, what the NATS hop costs: ListContainers and ContainerStatus through
 * cri-gateway over NATS (libs/cri's client) against the same calls made
 * directly over gRPC to containerd, N sequential calls each, alternating the
 * two so both see the same load, after a warm-up. Starts its own
 * nats-server and cri-gateway on `address`, with one pod of its own in the
 * runtime, removed at the end. Used by `npm run bench` and by
 * test/bench/cri-latency.bench.ts.
 */
import { randomUUID } from 'node:crypto';
import { connect } from '@nats-io/transport-node';
import { ContainerStatusRequest, ListContainersRequest, NatsCriClient } from '@app/cri';
import { KubeletLabels } from '@app/kube';
import { GrpcRuntimeConnection } from '../../../apps/cri-gateway/src/adapters/grpc-runtime-connection.js';
import { freePort, startNats, startService } from '../../../deploy/local/stack.js';
import { percentile, type NatsHopFigures } from './report.js';

const NODE = 'ks-bench-hop';

type Stats = { p50: number; p99: number };

export async function measureNatsHop(address: string, calls: number, image = 'localhost/kubelet-split/busybox:1.35'): Promise<NatsHopFigures & { containers: number }> {
  /** Alternates the two calls, so both see the same machine load; after a warm-up. */
  async function measure(direct: () => Promise<unknown>, viaNats: () => Promise<unknown>): Promise<[Stats, Stats]> {
    for (let i = 0; i < Math.min(100, calls); i++) await Promise.all([direct(), viaNats()]);
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
    const stats = (t: number[]): Stats => ({ p50: percentile(t, 50), p99: percentile(t, 99) });
    return [stats(d), stats(n)];
  }

  const nats = await startNats();
  const nc = await connect({ servers: nats.url, name: 'bench', ...nats.auth() });
  const direct = new GrpcRuntimeConnection(`unix://${address}`);
  let gateway: Awaited<ReturnType<typeof startService>> | undefined;
  let podSandboxId = '';
  const cri = new NatsCriClient(nc, NODE, 'bench');
  try {
    gateway = await startService('cri-gateway', { NODE_NAME: NODE, NATS_URL: nats.url, LOG_LEVEL: 'warn', CONTAINER_RUNTIME_ENDPOINT: `unix://${address}` }, { port: await freePort(), instance: 'bench' });
    const uid = randomUUID();
    const labels = { [KubeletLabels.node]: NODE };
    const config = { metadata: { name: 'bench-hop', namespace: 'bench', uid, attempt: 0 }, labels, linux: { securityContext: { namespaceOptions: { network: 'NODE' as const } } } };
    ({ podSandboxId } = await cri.runtime('RunPodSandbox', { config }));
    const { containerId } = await cri.runtime('CreateContainer', {
      podSandboxId,
      config: { metadata: { name: 'c', attempt: 0 }, image: { image }, command: ['sleep', '3600'], labels },
      sandboxConfig: config,
    });
    await cri.runtime('StartContainer', { containerId });
    const listed = await cri.runtime('ListContainers', {});
    const rows: NatsHopFigures['rows'] = [];
    const cases: [string, () => Promise<unknown>, () => Promise<unknown>][] = [
      ['ListContainers', () => direct.unary('runtime', 'ListContainers', ListContainersRequest.fromPartial({}), 30_000), () => cri.runtime('ListContainers', {})],
      ['ContainerStatus', () => direct.unary('runtime', 'ContainerStatus', ContainerStatusRequest.fromPartial({ containerId }), 30_000), () => cri.runtime('ContainerStatus', { containerId })],
    ];
    for (const [call, viaGrpc, viaNats] of cases) {
      const [g, n] = await measure(viaGrpc, viaNats);
      rows.push({ call, grpcP50: g.p50, grpcP99: g.p99, natsP50: n.p50, natsP99: n.p99, addedP50: n.p50 - g.p50, addedP99: n.p99 - g.p99 });
    }
    return { calls, rows, containers: listed.containers.length };
  } finally {
    if (podSandboxId) {
      await cri.runtime('StopPodSandbox', { podSandboxId }).catch(() => undefined);
      await cri.runtime('RemovePodSandbox', { podSandboxId }).catch(() => undefined);
    }
    direct.close();
    await gateway?.stop();
    await nc.close();
    await nats.stop();
  }
}
