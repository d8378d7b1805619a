/**
 * cri-gateway against the real containerd, through NATS (the typed client
 * of libs/cri) and HTTP: a hostNetwork pod's whole lifecycle, a pod-network
 * sandbox on the CNI bridge, ExecSync, images, PullImage failing in bounded
 * time, a runtime restart under a running gateway, and bad input.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createServer, type Server, type Socket } from 'node:net';
import { connect, type NatsConnection } from '@nats-io/transport-node';
import { CriError, DEFAULT_CRI_TIMEOUTS, NatsCriClient, type ContainerConfig, type CriInput, type PodSandboxConfig } from '@app/cri';
import { freePort, startNats, startService, type NatsServer, type ServiceProcess } from '../deploy/local/stack.js';
import { failOnLeftovers } from './support/node-stack.js';
import { runtimeAddress, runtimeStreamsEvents, scratchRuntime, type ScratchRuntime } from './support/runtime.js';
import { unixFetch } from './support/unix-http.js';

const NODE = 'cri-e2e';
const BUSYBOX = 'localhost/kubelet-split/busybox:1.35';
const enc = new TextEncoder();
const dec = new TextDecoder();
/**
 * The gateway's IMAGE_PULL_TIMEOUT, well apart from the 2 s pull deadline a
 * caller sends below, so that the bounds telling the two apart leave a loaded
 * machine room on both sides.
 */
const GATEWAY_PULL_TIMEOUT_MS = 10_000;

function sandboxConfig(name: string, hostNetwork: boolean): CriInput<PodSandboxConfig> {
  const uid = randomUUID();
  return {
    metadata: { name, namespace: 'cri-e2e', uid, attempt: 0 },
    logDirectory: `/tmp/ks-cri-e2e/${uid}`,
    labels: { 'io.kubernetes.pod.name': name, 'io.kubernetes.pod.namespace': 'cri-e2e', 'io.kubernetes.pod.uid': uid, 'kubelet-split/test': 'cri-e2e', 'kubelet-split.io/node': NODE },
    annotations: {},
    linux: {
      securityContext: { namespaceOptions: { network: hostNetwork ? 'NODE' : 'POD', pid: 'CONTAINER', ipc: 'POD' } },
    },
  };
}

function containerConfig(name: string, command: string[], labels: Record<string, string> = {}): CriInput<ContainerConfig> {
  return {
    metadata: { name, attempt: 0 },
    image: { image: BUSYBOX },
    command,
    labels: { 'io.kubernetes.container.name': name, ...labels },
    logPath: `${name}.log`,
  };
}

async function until<T>(what: string, fn: () => Promise<T | undefined>, timeoutMs = 20_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let last: unknown;
  while (Date.now() < deadline) {
    try {
      const v = await fn();
      if (v !== undefined) return v;
    } catch (err) {
      last = err;
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`timed out waiting for ${what}${last ? ` (last error: ${last instanceof Error ? last.message : JSON.stringify(last)})` : ''}`);
}

describe('cri-gateway on the real containerd', { timeout: 300_000 }, () => {
  let nats: NatsServer;
  let nc: NatsConnection;
  let gateway: ServiceProcess;
  let cri: NatsCriClient;
  let http: string;
  // The CRI over HTTP is on a unix socket (CRI_HTTP_SOCKET), never on the TCP port.
  const criSocket = join(mkdtempSync(join(tmpdir(), 'ks-cri-http-')), 'cri-http.sock');
  let criHttp: ReturnType<typeof unixFetch>;
  const sandboxes: string[] = [];

  before(async () => {
    nats = await startNats();
    nc = await connect({ servers: nats.url, name: 'cri-e2e-test', ...nats.auth() });
    gateway = await startService(
      'cri-gateway',
      { NODE_NAME: NODE, NATS_URL: nats.url, LOG_LEVEL: 'warn', CONTAINER_RUNTIME_ENDPOINT: `unix://${runtimeAddress()}`, IMAGE_PULL_TIMEOUT: `${GATEWAY_PULL_TIMEOUT_MS / 1000}s`, CRI_HTTP_SOCKET: criSocket },
      { port: await freePort(), instance: 'e2e', timeoutMs: 60_000 },
    );
    http = `http://127.0.0.1:${gateway.port}`;
    criHttp = unixFetch(criSocket);
    cri = new NatsCriClient(nc, NODE, 'cri-e2e-test');
  });

  after(async () => {
    try {
      for (const id of sandboxes) {
        await cri.runtime('StopPodSandbox', { podSandboxId: id }).catch(() => undefined);
        await cri.runtime('RemovePodSandbox', { podSandboxId: id }).catch(() => undefined);
      }
      // Its sandboxes carry the node label: anything of them still in containerd is a leak.
      if (cri) await failOnLeftovers(cri, NODE);
    } finally {
      await gateway?.stop(10_000);
      await nc?.close();
      await nats?.stop();
    }
  });

  it('/readyz says the runtime answered, with RuntimeReady, NetworkReady, and the container events relayed (containerd 2) or unsupported (containerd 1.6)', async () => {
    const body = (await (await fetch(`${http}/readyz`)).json()) as { ok: boolean; checks: Record<string, { ok: boolean; detail?: string }> };
    assert.equal(body.ok, true);
    assert.match(body.checks['runtime']?.detail ?? '', /containerd .*RuntimeReady=true NetworkReady=true/);
    const settled = runtimeStreamsEvents() ? new RegExp(`relaying to cri\\.${NODE}\\.events`) : /unsupported by this runtime/;
    let detail = '';
    await until(`the events relay to settle (${settled})`, async () => {
      const b = (await (await fetch(`${http}/readyz`)).json()) as { checks: Record<string, { detail?: string }> };
      detail = b.checks['containerEvents']?.detail ?? '';
      return settled.test(detail) ? true : undefined;
    }).catch((err: Error) => {
      throw new Error(`${err.message}; containerEvents said: ${detail}`);
    });
  });

  it('Version over NATS and over HTTP give the same answer', async () => {
    const viaNats = await cri.runtime('Version', { version: 'v1' });
    const viaHttp = (await (await criHttp('/runtime/Version', { method: 'POST', body: '{"version":"v1"}' })).json()) as typeof viaNats;
    assert.equal(viaNats.runtimeName, 'containerd');
    assert.equal(viaNats.runtimeApiVersion, 'v1');
    assert.deepEqual(viaHttp, viaNats);
  });

  it('runs a hostNetwork pod through its whole lifecycle', async () => {
    const config = sandboxConfig('host-pod', true);
    const { podSandboxId } = await cri.runtime('RunPodSandbox', { config });
    sandboxes.push(podSandboxId);
    const sb = await cri.runtime('PodSandboxStatus', { podSandboxId });
    assert.equal(sb.status?.state, 'SANDBOX_READY');
    assert.equal(sb.status?.linux?.namespaces?.options?.network, 'NODE');

    // One container that exits 3, one that sleeps.
    const exits = await cri.runtime('CreateContainer', { podSandboxId, config: containerConfig('exits', ['sh', '-c', 'echo bye; exit 3'], { role: 'exits' }), sandboxConfig: config });
    const ignoresTerm = ['sh', '-c', 'trap "" TERM; while true; do sleep 1; done'];
    const sleeps = await cri.runtime('CreateContainer', { podSandboxId, config: containerConfig('sleeps', ignoresTerm, { role: 'sleeps' }), sandboxConfig: config });
    await cri.runtime('StartContainer', { containerId: exits.containerId });
    await cri.runtime('StartContainer', { containerId: sleeps.containerId });

    // ListContainers with filters: by sandbox, by state, by label.
    const bySandbox = await cri.runtime('ListContainers', { filter: { podSandboxId } });
    assert.deepEqual(bySandbox.containers.map((c) => c.metadata?.name).sort(), ['exits', 'sleeps']);
    const exited = await until('the first container to exit', async () => {
      const r = await cri.runtime('ListContainers', { filter: { podSandboxId, state: { state: 'CONTAINER_EXITED' } } });
      return r.containers.length === 1 ? r.containers : undefined;
    });
    assert.equal(exited[0]?.id, exits.containerId);
    const running = await cri.runtime('ListContainers', { filter: { podSandboxId, state: { state: 'CONTAINER_RUNNING' } } });
    assert.deepEqual(running.containers.map((c) => c.id), [sleeps.containerId]);
    const byLabel = await cri.runtime('ListContainers', { filter: { labelSelector: { role: 'sleeps', 'io.kubernetes.container.name': 'sleeps' } } });
    assert.deepEqual(byLabel.containers.map((c) => c.id), [sleeps.containerId]);

    // ContainerStatus after exit carries the exit code.
    const st = await cri.runtime('ContainerStatus', { containerId: exits.containerId });
    assert.equal(st.status?.state, 'CONTAINER_EXITED');
    assert.equal(st.status?.exitCode, 3);
    assert.equal(st.status?.metadata?.name, 'exits');

    // StopContainer with a grace period: the container ignores SIGTERM, so it is killed after 2s.
    const t0 = Date.now();
    await cri.runtime('StopContainer', { containerId: sleeps.containerId, timeout: '2' });
    const took = Date.now() - t0;
    assert.ok(took >= 1500 && took < 30_000, `StopContainer took ${took}ms`);
    const stopped = await cri.runtime('ContainerStatus', { containerId: sleeps.containerId });
    assert.equal(stopped.status?.state, 'CONTAINER_EXITED');
    assert.equal(stopped.status?.exitCode, 137);

    // RemoveContainer twice: the second is not an error.
    await cri.runtime('RemoveContainer', { containerId: exits.containerId });
    await cri.runtime('RemoveContainer', { containerId: exits.containerId });
    await cri.runtime('RemoveContainer', { containerId: sleeps.containerId });
    await assert.rejects(cri.runtime('ContainerStatus', { containerId: exits.containerId }), (err: unknown) => err instanceof CriError && err.code === 'NotFound');

    await cri.runtime('StopPodSandbox', { podSandboxId });
    const notReady = await cri.runtime('PodSandboxStatus', { podSandboxId });
    assert.equal(notReady.status?.state, 'SANDBOX_NOTREADY');
    await cri.runtime('RemovePodSandbox', { podSandboxId });
    const listed = await cri.runtime('ListPodSandbox', { filter: { id: podSandboxId } });
    assert.equal(listed.items.length, 0);
  });

  it('gives a pod-network sandbox an IP from the CNI bridge', async () => {
    const config = sandboxConfig('net-pod', false);
    const { podSandboxId } = await cri.runtime('RunPodSandbox', { config });
    sandboxes.push(podSandboxId);
    const sb = await cri.runtime('PodSandboxStatus', { podSandboxId });
    assert.equal(sb.status?.state, 'SANDBOX_READY');
    // The bridge's /24 (deploy/runtime.sh: KS_CNI_SUBNET, 10.88.77.0/24 unless a run gives its containerd its own).
    const prefix = (process.env['KS_CNI_SUBNET'] ?? '10.88.77.0/24').split('.').slice(0, 3).join('.');
    assert.ok((sb.status?.network?.ip ?? '').startsWith(`${prefix}.`), `the sandbox's IP ${sb.status?.network?.ip ?? '(none)'} is on the bridge's ${prefix}.0/24`);
    await cri.runtime('StopPodSandbox', { podSandboxId });
    await cri.runtime('RemovePodSandbox', { podSandboxId });
  });

  it('ExecSync returns stdout and the exit code, and times out', async () => {
    const config = sandboxConfig('exec-pod', true);
    const { podSandboxId } = await cri.runtime('RunPodSandbox', { config });
    sandboxes.push(podSandboxId);
    const { containerId } = await cri.runtime('CreateContainer', { podSandboxId, config: containerConfig('main', ['sleep', '3600']), sandboxConfig: config });
    await cri.runtime('StartContainer', { containerId });

    const ok = await cri.runtime('ExecSync', { containerId, cmd: ['sh', '-c', 'echo out; echo err >&2; exit 0'], timeout: '10' });
    assert.equal(Buffer.from(ok.stdout, 'base64').toString(), 'out\n');
    assert.equal(Buffer.from(ok.stderr, 'base64').toString(), 'err\n');
    assert.equal(ok.exitCode, 0);

    const failed = await cri.runtime('ExecSync', { containerId, cmd: ['sh', '-c', 'exit 7'], timeout: '10' });
    assert.equal(failed.exitCode, 7);

    const t0 = Date.now();
    await assert.rejects(cri.runtime('ExecSync', { containerId, cmd: ['sleep', '30'], timeout: '1' }), (err: unknown) => {
      assert.ok(err instanceof CriError);
      assert.match(`${err.code} ${err.description}`, /DeadlineExceeded|timeout/i);
      return true;
    });
    assert.ok(Date.now() - t0 < 20_000, 'ExecSync timeout was not honoured');
    await cri.runtime('StopPodSandbox', { podSandboxId });
    await cri.runtime('RemovePodSandbox', { podSandboxId });
  });

  it('ImageStatus: a present image has an id, an absent one is empty', async () => {
    const present = await cri.image('ImageStatus', { image: { image: BUSYBOX } });
    assert.match(present.image?.id ?? '', /^sha256:/);
    assert.ok(present.image?.repoTags.includes(BUSYBOX));
    const absent = await cri.image('ImageStatus', { image: { image: 'localhost/kubelet-split/absent:0' } });
    assert.equal(absent.image ?? null, null);
  });

  it('PullImage fails cleanly when the registry refuses connections', async () => {
    const port = await freePort(); // nothing listens there
    const t0 = Date.now();
    await assert.rejects(cri.image('PullImage', { image: { image: `127.0.0.1:${port}/kubelet-split/absent:1` } }), (err: unknown) => err instanceof CriError && /127\.0\.0\.1/.test(err.description));
    assert.ok(Date.now() - t0 < 15_000);
  });

  it('PullImage fails with DeadlineExceeded when the registry never answers: at the caller\'s deadline, or the gateway\'s IMAGE_PULL_TIMEOUT for a call without one', async () => {
    const sockets: Socket[] = [];
    const silent: Server = createServer((s) => void sockets.push(s)); // accepts, never speaks
    await new Promise<void>((r) => silent.listen(0, '127.0.0.1', r));
    const port = (silent.address() as { port: number }).port;
    try {
      // The caller's own pull timeout (2s, the gateway's is 10s) travels with the call and is the gRPC deadline.
      const caller = new NatsCriClient(nc, NODE, 'cri-e2e-test', { ...DEFAULT_CRI_TIMEOUTS, pullMs: 2000 });
      let t0 = Date.now();
      await assert.rejects(caller.image('PullImage', { image: { image: `127.0.0.1:${port}/kubelet-split/hangs:1` } }), (err: unknown) => err instanceof CriError && err.code === 'DeadlineExceeded');
      let took = Date.now() - t0;
      assert.ok(took >= 1500 && took < GATEWAY_PULL_TIMEOUT_MS - 2000, `took ${took}ms with the caller's pull timeout of 2s (the gateway's is ${GATEWAY_PULL_TIMEOUT_MS}ms)`);
      // curl over HTTP sends no deadline: the gateway's IMAGE_PULL_TIMEOUT applies.
      t0 = Date.now();
      const res = await criHttp('/image/PullImage', { method: 'POST', body: JSON.stringify({ image: { image: `127.0.0.1:${port}/kubelet-split/hangs:2` } }), headers: { 'content-type': 'application/json' } });
      took = Date.now() - t0;
      assert.equal(res.status, 504);
      assert.equal(((await res.json()) as { error?: { code: string } }).error?.code, 'DeadlineExceeded');
      assert.ok(took >= GATEWAY_PULL_TIMEOUT_MS - 500 && took < GATEWAY_PULL_TIMEOUT_MS + 16_000, `took ${took}ms with IMAGE_PULL_TIMEOUT=${GATEWAY_PULL_TIMEOUT_MS}ms`);
    } finally {
      sockets.forEach((s) => s.destroy());
      silent.close();
    }
  });

  it('bad input over NATS gets an error reply each time, and the gateway keeps serving', async () => {
    const ask = async (subject: string, body: string) => JSON.parse(dec.decode((await nc.request(subject, enc.encode(body), { timeout: 10_000 })).data)) as { error?: { code: string; description: string } };
    const cases = [
      { subject: `cri.${NODE}.runtime.ListContainers`, body: '{not json', code: 'InvalidArgument', re: /not JSON/ },
      { subject: `cri.${NODE}.runtime.StopContainer`, body: '{"containerId": 42}', code: 'InvalidArgument', re: /containerId must be a string/ },
      { subject: `cri.${NODE}.runtime.RunPodSandbox`, body: '{"config":{"metadata":{"nme":"x"}}}', code: 'InvalidArgument', re: /config\.metadata\.nme: unknown field of PodSandboxMetadata/ },
      { subject: `cri.${NODE}.runtime.NoSuchMethod`, body: '{}', code: 'Unimplemented', re: /unknown runtime method "NoSuchMethod"/ },
      { subject: `cri.${NODE}.runtime.RemovePodSandbox`, body: '{}', code: 'InvalidArgument', re: /podSandboxId is required/ },
      { subject: `cri.${NODE}.image.PullImage`, body: '[]', code: 'InvalidArgument', re: /must be a JSON object/ },
      { subject: `cri.${NODE}.runtime.ContainerStatus`, body: '{"containerId":"does-not-exist"}', code: 'NotFound', re: /does-not-exist/ },
    ];
    for (const tc of cases) {
      const reply = await ask(tc.subject, tc.body);
      assert.equal(reply.error?.code, tc.code, `${tc.subject} ${tc.body}: ${JSON.stringify(reply)}`);
      assert.match(reply.error?.description ?? '', tc.re);
    }
    assert.equal((await cri.runtime('Version', { version: 'v1' })).runtimeName, 'containerd');
  });

  it('bad input over HTTP gets an error body with a matching status, and the gateway keeps serving', async () => {
    const cases = [
      { path: '/runtime/ListContainers', body: '{not json', status: 400, code: 'InvalidArgument' },
      { path: '/runtime/StopContainer', body: '{"containerId": true}', status: 400, code: 'InvalidArgument' },
      { path: '/runtime/NoSuchMethod', body: '{}', status: 501, code: 'Unimplemented' },
      { path: '/runtime/StartContainer', body: '{}', status: 400, code: 'InvalidArgument' },
      { path: '/runtime/ListContainers', body: '{}', headers: { 'Cri-Timeout-Ms': 'soon' }, status: 400, code: 'InvalidArgument' },
      { path: '/runtime/ContainerStatus', body: '{"containerId":"nope"}', status: 404, code: 'NotFound' },
    ];
    for (const tc of cases) {
      const res = await criHttp(tc.path, { method: 'POST', body: tc.body, headers: { 'content-type': 'application/json', ...tc.headers } });
      const body = (await res.json()) as { error?: { code: string } };
      assert.equal(res.status, tc.status, `${tc.path} ${tc.body}`);
      assert.equal(body.error?.code, tc.code);
    }
    assert.equal((await fetch(`${http}/readyz`)).status, 200);
  });

  it('exports the kubelet runtime metrics', async () => {
    const text = await (await fetch(`${http}/metrics`)).text();
    assert.match(text, /kubelet_runtime_operations_total\{[^}]*operation_type="run_podsandbox"[^}]*\} [1-9]/);
    assert.match(text, /kubelet_runtime_operations_errors_total\{[^}]*operation_type="container_status"[^}]*\} [1-9]/);
    assert.match(text, /kubelet_runtime_operations_duration_seconds_bucket\{[^}]*operation_type="list_containers"/);
    assert.match(text, /kubelet_run_podsandbox_duration_seconds_count\{[^}]*runtime_handler=""[^}]*\} [1-9]/);
  });
});

describe('cri-gateway when containerd restarts underneath it', { timeout: 120_000 }, () => {
  let nats: NatsServer;
  let nc: NatsConnection;
  let gateway: ServiceProcess;
  let runtime: ScratchRuntime;

  before(async () => {
    runtime = scratchRuntime();
    runtime.start();
    nats = await startNats();
    nc = await connect({ servers: nats.url, name: 'cri-restart-test', ...nats.auth() });
    gateway = await startService(
      'cri-gateway',
      { NODE_NAME: 'cri-restart', NATS_URL: nats.url, LOG_LEVEL: 'warn', CONTAINER_RUNTIME_ENDPOINT: `unix://${runtime.address}`, RUNTIME_LIST_TIMEOUT: '3s' },
      { port: await freePort(), instance: 'restart', timeoutMs: 60_000 },
    );
  });

  after(async () => {
    await gateway?.stop(10_000);
    await nc?.close();
    await nats?.stop();
    runtime?.remove();
  });

  it('calls fail with Unavailable while it is down, then succeed again without restarting the gateway', async () => {
    const cri = new NatsCriClient(nc, 'cri-restart', 'cri-restart-test');
    const before = await cri.runtime('ListContainers', {});
    assert.ok(Array.isArray(before.containers));

    runtime.stop();
    const err = await until('a call to fail', async () => {
      try {
        await cri.runtime('ListContainers', {});
        return undefined;
      } catch (e) {
        return e;
      }
    });
    assert.ok(err instanceof CriError);
    assert.equal(err.code, 'Unavailable', err.message);
    await until('/readyz to turn 503', async () => ((await fetch(`http://127.0.0.1:${gateway.port}/readyz`)).status === 503 ? true : undefined));

    runtime.start();
    const after = await until('calls to succeed again', () => cri.runtime('ListContainers', {}), 30_000);
    assert.ok(Array.isArray(after.containers));
    assert.equal(gateway.process.exitCode, null, 'the gateway process was not restarted');
    await until('/readyz to turn 200', async () => ((await fetch(`http://127.0.0.1:${gateway.port}/readyz`)).status === 200 ? true : undefined));
  });
});
