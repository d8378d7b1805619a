/**
 * P4, what the NATS hop costs: ListContainers and ContainerStatus through
 * cri-gateway over NATS (libs/cri's client) against the same calls made
 * directly over gRPC to containerd, N sequential calls each, alternating
 * them so all see the same load, after a warm-up. With them, the floor of
 * the hop: a bare NATS request/reply of the same request, headers and reply
 * sizes to a responder in a process of its own (nats-echo.ts), which is
 * what the two loopback trips through nats-server cost with no work of ours
 * on either side. Starts its own nats-server, echo and cri-gateway on
 * `address`, with one pod of its own in the runtime, removed at the end.
 * Used by `npm run bench` and by test/bench/cri-latency.bench.ts.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { once } from 'node:events';
import { fileURLToPath } from 'node:url';
import { connect, type NatsConnection } from '@nats-io/transport-node';
import { CRI_PROGRESS_HEADER, CRI_PROGRESS_INTERVAL_MS, CRI_TIMEOUT_HEADER, ContainerStatusRequest, ListContainersRequest, NatsCriClient } from '@app/cri';
import { KubeletLabels } from '@app/kube';
import { messageHeaders } from '@app/tracing';
import { newInbox, senderOf } from '@app/nats';
import { GrpcRuntimeConnection } from '../../../apps/cri-gateway/src/adapters/grpc-runtime-connection.js';
import { freePort, startNats, startService } from '../../../deploy/local/stack.js';
import { percentile, type NatsHopFigures } from './report.js';

const NODE = 'ks-bench-hop';

type Stats = { p50: number; p99: number };

export async function measureNatsHop(address: string, calls: number, image = 'localhost/kubelet-split/busybox:1.35'): Promise<NatsHopFigures & { containers: number }> {
  /** Alternates the calls, one of each in turn, so all see the same machine load; after a warm-up. */
  async function measure(fns: readonly (() => Promise<unknown>)[]): Promise<Stats[]> {
    for (let i = 0; i < Math.min(100, calls); i++) for (const fn of fns) await fn();
    const times = fns.map((): number[] => []);
    for (let i = 0; i < calls; i++) {
      for (const [k, fn] of fns.entries()) {
        const t0 = performance.now();
        await fn();
        times[k]?.push(performance.now() - t0);
      }
    }
    return times.map((t) => ({ p50: percentile(t, 50), p99: percentile(t, 99) }));
  }

  const nats = await startNats();
  const nc = await connect({ servers: nats.url, name: 'bench', ...nats.auth() });
  const echo = await startEcho(nats.url, nats.auth());
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
    const cases: [string, () => Promise<unknown>, () => Promise<unknown>, () => Promise<unknown>][] = [
      [
        'ListContainers',
        () => direct.unary('runtime', 'ListContainers', ListContainersRequest.fromPartial({}), 30_000),
        () => cri.runtime('ListContainers', {}),
        await echoLike(nc, echo.subject, {}, listed),
      ],
      [
        'ContainerStatus',
        () => direct.unary('runtime', 'ContainerStatus', ContainerStatusRequest.fromPartial({ containerId }), 30_000),
        () => cri.runtime('ContainerStatus', { containerId }),
        await echoLike(nc, echo.subject, { containerId }, await cri.runtime('ContainerStatus', { containerId })),
      ],
    ];
    for (const [call, viaGrpc, viaNats, bare] of cases) {
      const [g, n, e] = (await measure([viaGrpc, viaNats, bare])) as [Stats, Stats, Stats];
      rows.push({ call, grpcP50: g.p50, grpcP99: g.p99, natsP50: n.p50, natsP99: n.p99, addedP50: n.p50 - g.p50, addedP99: n.p99 - g.p99, bareNatsP50: e.p50, bareNatsP99: e.p99 });
    }
    return { calls, rows, containers: listed.containers.length };
  } finally {
    if (podSandboxId) {
      await cri.runtime('StopPodSandbox', { podSandboxId }).catch(() => undefined);
      await cri.runtime('RemovePodSandbox', { podSandboxId }).catch(() => undefined);
    }
    direct.close();
    await gateway?.stop();
    await stopEcho(echo.process);
    await nc.close();
    await nats.stop();
  }
}

/**
 * A bare request to the echo with the bytes a CRI call sends (its request
 * JSON and the same headers as NatsCriClient's, made once) that asks for a
 * reply as long as the CRI call's answer. Replies come to one subscription,
 * a token per request, with no timer and no error object made per request
 * (nats.js's request() makes one, for its stack), so that it is the floor.
 */
async function echoLike(nc: NatsConnection, subject: string, request: unknown, reply: unknown): Promise<() => Promise<unknown>> {
  const data = new TextEncoder().encode(JSON.stringify(request));
  const headers = messageHeaders({ service: 'bench', sender: senderOf(nc) ?? 'bench' });
  headers.set(CRI_TIMEOUT_HEADER, '2000');
  headers.set(CRI_PROGRESS_HEADER, String(CRI_PROGRESS_INTERVAL_MS));
  const to = `${subject}.${new TextEncoder().encode(JSON.stringify(reply)).length}`;
  const inbox = `${newInbox(nc)}.`;
  const waiting = new Map<string, (data: Uint8Array) => void>();
  nc.subscribe(`${inbox}*`, { callback: (err, msg) => (err ? undefined : waiting.get(msg.subject.slice(inbox.length))?.(msg.data)) });
  let next = 0;
  const call = () =>
    new Promise<unknown>((resolve) => {
      const token = (next++).toString(36);
      waiting.set(token, (d) => (waiting.delete(token), resolve(d)));
      nc.publish(to, data, { reply: inbox + token, headers });
    });
  await call();
  return call;
}

async function startEcho(url: string, auth: { user: string; pass: string }): Promise<{ process: ChildProcess; subject: string }> {
  const subject = `ks-bench-echo.${randomUUID()}`;
  const child = spawn(process.execPath, [fileURLToPath(new URL('./nats-echo.js', import.meta.url))], {
    env: { ...process.env, NATS_URL: url, NATS_USER: auth.user, NATS_PASS: auth.pass, ECHO_SUBJECT: subject },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const exited = once(child, 'exit').then(([code]) => Promise.reject(new Error(`the bare NATS echo exited (${String(code)})`)));
  const ready = new Promise<void>((resolve) => child.stdout?.on('data', (d: Buffer) => d.toString().includes('ready') && resolve()));
  await Promise.race([ready, exited]);
  child.stdout?.resume();
  exited.catch(() => undefined);
  return { process: child, subject };
}

async function stopEcho(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null) return;
  const exited = once(child, 'exit');
  child.kill('SIGTERM');
  await exited;
}
