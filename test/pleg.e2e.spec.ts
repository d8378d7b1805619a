/**
 * The PLEG against the real containerd (through cri-gateway): a container
 * started, killed with ctr behind the stack's back, and removed gives
 * ContainerStarted, ContainerDied and ContainerRemoved; getNewerThan releases
 * a waiter. Twice: the generic PLEG (PLEG_MODE=generic, each within about its
 * 1 s relist period), and the evented PLEG on containerd 2 (each from the
 * runtime's event, far sooner than its 5-minute relist, with no relist run
 * meanwhile: docs/adr/0040).
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { connect, type NatsConnection } from '@nats-io/transport-node';
import { Kvm } from '@nats-io/kv';
import { NatsCriClient } from '@app/cri';
import type { PodLifecycleEventMessage } from '@app/contracts';
import { KvPodCache } from '@app/pod-cache';
import { SystemClock } from '@app/clock';
import { silentLogger } from '@app/observability';
import { freePort, startNats, startService, type NatsServer, type ServiceProcess } from '../deploy/local/stack.js';
import { failOnLeftovers } from './support/node-stack.js';
import { runtimeAddress, runtimeStreamsEvents } from './support/runtime.js';
import { expectEventedModeFollowsRuntime, metricValue } from './support/pleg-mode.js';

const NODE = 'pleg-e2e';
const dec = new TextDecoder();

/** A PLEG and its cri-gateway on the real containerd, nothing else: only the PLEG's relist or the runtime's events can see what a test does. */
function plegOnContainerd(node: string, plegEnv: Record<string, string>) {
  const f = {
    nats: undefined as NatsServer | undefined,
    nc: undefined as NatsConnection | undefined,
    gateway: undefined as ServiceProcess | undefined,
    pleg: undefined as unknown as ServiceProcess,
    cri: undefined as unknown as NatsCriClient,
    cache: undefined as unknown as KvPodCache,
    events: [] as { at: number; e: PodLifecycleEventMessage }[],
    uid: randomUUID(),
    podSandboxId: '',
    metric: (name: string) => metricValue(`http://127.0.0.1:${f.pleg.port}/metrics`, name),
  };
  before(async () => {
    f.nats = await startNats();
    f.nc = await connect({ servers: f.nats.url, name: 'pleg-e2e-test', ...f.nats.auth() });
    f.nc.subscribe(`kubelet.${node}.pleg.*`, { callback: (_e, m) => void f.events.push({ at: Date.now(), e: JSON.parse(dec.decode(m.data)) as PodLifecycleEventMessage }) });
    const env = { NODE_NAME: node, NATS_URL: f.nats.url, LOG_LEVEL: 'warn' };
    f.gateway = await startService('cri-gateway', { ...env, CONTAINER_RUNTIME_ENDPOINT: `unix://${runtimeAddress()}` }, { port: await freePort(), instance: 'g' });
    f.pleg = await startService('pleg', { ...env, ...plegEnv }, { port: await freePort(), instance: 'p' });
    f.cri = new NatsCriClient(f.nc, node, 'pleg-e2e-test');
    f.cache = new KvPodCache({ kv: await new Kvm(f.nc).open('pod-cache'), node, clock: new SystemClock(), logger: silentLogger() });
    await f.cache.start();
  });
  after(async () => {
    f.cache?.stop();
    try {
      if (f.podSandboxId) {
        await f.cri.runtime('StopPodSandbox', { podSandboxId: f.podSandboxId }).catch(() => undefined);
        await f.cri.runtime('RemovePodSandbox', { podSandboxId: f.podSandboxId }).catch(() => undefined);
      }
      // Its pod carries the node label: anything of it still in containerd is a leak.
      if (f.cri) await failOnLeftovers(f.cri, node);
    } finally {
      await Promise.all([f.pleg?.stop(), f.gateway?.stop()]);
      await f.nc?.close();
      await f.nats?.stop();
    }
  });
  return f;
}
type PlegFixture = ReturnType<typeof plegOnContainerd>;

/**
 * A container started, killed with ctr behind the stack's back, and removed; each of ContainerStarted,
 * ContainerDied and ContainerRemoved waited for (up to 15 s) and how long it took returned. Then the
 * pod cache holds the pod with its sandbox and without the container.
 */
async function containerLifecycle(f: PlegFixture, node: string): Promise<{ started: number; died: number; removed: number }> {
  const eventFor = async (type: string, id: string, since: number): Promise<number> => {
    const deadline = Date.now() + 15_000;
    while (Date.now() < deadline) {
      const hit = f.events.find((x) => x.at >= since && x.e.eventType === type && x.e.data === id);
      if (hit) return hit.at - since;
      await new Promise((r) => setTimeout(r, 20));
    }
    assert.fail(`no ${type} for ${id}; got ${JSON.stringify(f.events.map((x) => x.e))}`);
  };
  const uid = f.uid;
  const labels = { 'io.kubernetes.pod.uid': uid, 'io.kubernetes.pod.name': 'pleg-pod', 'io.kubernetes.pod.namespace': 'pleg-e2e', 'kubelet-split.io/node': node };
  const config = { metadata: { name: 'pleg-pod', namespace: 'pleg-e2e', uid, attempt: 0 }, labels, linux: { securityContext: { namespaceOptions: { network: 'NODE' as const } } } };
  f.podSandboxId = (await f.cri.runtime('RunPodSandbox', { config })).podSandboxId;
  const podSandboxId = f.podSandboxId;
  const containerId = (
    await f.cri.runtime('CreateContainer', {
      podSandboxId,
      config: { metadata: { name: 'main', attempt: 0 }, image: { image: 'localhost/kubelet-split/busybox:1.35' }, command: ['sleep', '3600'], labels: { ...labels, 'io.kubernetes.container.name': 'main' } },
      sandboxConfig: config,
    })
  ).containerId;
  let t = Date.now();
  await f.cri.runtime('StartContainer', { containerId });
  const started = await eventFor('ContainerStarted', containerId, t);

  t = Date.now();
  const kill = spawnSync('ctr', ['--address', runtimeAddress(), '-n', 'k8s.io', 'tasks', 'kill', '-s', 'SIGKILL', containerId], { encoding: 'utf8' });
  assert.equal(kill.status, 0, kill.stderr);
  const died = await eventFor('ContainerDied', containerId, t);

  t = Date.now();
  await f.cri.runtime('RemoveContainer', { containerId });
  const removed = await eventFor('ContainerRemoved', containerId, t);
  // The PLEG writes the pod cache, then sends the event; this test's copy of the cache follows the bucket by a KV
  // watch, which JetStream delivers on its own: wait for the write the event follows, rather than read the copy at once.
  const cacheDeadline = Date.now() + 15_000;
  while (f.cache.get(uid).entry?.containerStatuses.length !== 0 && Date.now() < cacheDeadline) await new Promise((r) => setTimeout(r, 20));
  const entry = f.cache.get(uid).entry;
  assert.ok(entry, 'the pod is in the cache');
  assert.equal(entry.sandboxStatuses.length, 1);
  assert.equal(entry.containerStatuses.length, 0, 'the removed container is gone from the cache');
  return { started, died, removed };
}

describe('the evented PLEG on the real containerd: events on containerd 2, the relist by itself on containerd 1.6', { timeout: 180_000 }, () => {
  const NODE_EVENTED = 'pleg-evented-e2e';
  const f = plegOnContainerd(NODE_EVENTED, { PLEG_MODE: 'evented' });

  it('sees a container started, killed behind its back and removed: from the runtime\'s events with no relist meanwhile (containerd 2), or from the 1 s relist it fell back to (containerd 1.6)', async () => {
    const url = `http://127.0.0.1:${f.pleg.port}`;
    if (!runtimeStreamsEvents()) {
      // containerd 1.6 has no GetContainerEvents: evented mode falls back by itself, and the relist sees it all.
      await waitUntil('the PLEG fallen back to the relist', async () => ((await (await fetch(`${url}/mode`)).json()) as { effective?: string }).effective === 'generic');
      const { started, died, removed } = await containerLifecycle(f, NODE_EVENTED);
      console.log(`# evented PLEG on containerd 1.6 (relisting): started seen after ${started} ms, died (ctr kill) after ${died} ms, removed after ${removed} ms`);
      for (const [what, ms] of [['started', started], ['died', died], ['removed', removed]] as const) assert.ok(ms < 3000, `${what} after ${ms}ms`);
      assert.match(((await (await fetch(`${url}/mode`)).json()) as { fallbackReason?: string }).fallbackReason ?? '', /does not stream container events/);
      return;
    }
    // Evented, with the relay streaming: the PLEG's gauge, and its relist at start done.
    await waitUntil('the PLEG evented with the relay streaming', async () => {
      const gw = (await (await fetch(`http://127.0.0.1:${f.gateway?.port ?? 0}/readyz`)).json()) as { checks: Record<string, { detail?: string }> };
      return (await f.metric('kubelet_split_pleg_evented')) === 1 && /relaying to/.test(gw.checks['containerEvents']?.detail ?? '') && (await f.metric('kubelet_pleg_relist_duration_seconds_count')) >= 1;
    });
    const relists = await f.metric('kubelet_pleg_relist_duration_seconds_count');
    const fallbacks = await f.metric('kubelet_evented_pleg_connection_error_count');
    const { started, died, removed } = await containerLifecycle(f, NODE_EVENTED);
    console.log(`# evented PLEG on containerd 2: started seen after ${started} ms, died (ctr kill) after ${died} ms, removed after ${removed} ms`);
    // Generous, to catch a hang: the relist that would otherwise see them is 300 s away.
    for (const [what, ms] of [['started', started], ['died', died], ['removed', removed]] as const) assert.ok(ms < 15_000, `${what} after ${ms}ms`);
    assert.equal(await f.metric('kubelet_pleg_relist_duration_seconds_count'), relists, 'no relist ran: the events did it');
    assert.equal(await f.metric('kubelet_evented_pleg_connection_error_count'), fallbacks, 'no fallback meanwhile');
    assert.deepEqual(await (await fetch(`${url}/mode`)).json(), { desired: 'evented', effective: 'evented' });
    assert.match(await (await fetch(`${url}/metrics`)).text(), /kubelet_evented_pleg_connection_latency_seconds_count\{[^}]*\} [1-9]/, 'the events\' latency is measured');
  });
});

async function waitUntil(what: string, fn: () => Promise<boolean>, timeoutMs = 30_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  let last = '';
  while (Date.now() < deadline) {
    try {
      if (await fn()) return;
    } catch (err) {
      last = (err as Error).message;
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  assert.fail(`timed out waiting for ${what}${last ? ` (${last})` : ''}`);
}

describe('pleg on the real containerd', { timeout: 180_000 }, () => {
  const f = plegOnContainerd(NODE, { PLEG_MODE: 'generic', RELIST_PERIOD: '1s' });
  let pleg: ServiceProcess;
  let cache: KvPodCache;
  let uid = '';
  before(() => {
    ({ pleg, cache, uid } = f);
  });

  it('ContainerStarted, ContainerDied (killed with ctr) and ContainerRemoved, each within about one relist', async () => {
    const { started, died, removed } = await containerLifecycle(f, NODE);
    // One relist period is 1s; allow for the relist in flight and a loaded machine.
    for (const [what, ms] of [['started', started], ['died', died], ['removed', removed]] as const) assert.ok(ms < 3000, `${what} after ${ms}ms`);
  });

  it('getNewerThan releases a waiter within one relist period, for an unchanged pod too', async () => {
    const t0 = Date.now();
    const r = await cache.getNewerThan(uid, t0);
    const waited = Date.now() - t0;
    assert.ok(r.timestamp > t0);
    assert.ok(waited < 2500, `waited ${waited}ms`);
    const other = await cache.getNewerThan('no-such-pod', Date.now());
    assert.equal(other.entry, undefined);
  });

  it('/metrics has the kubelet PLEG metrics and /healthz is green', async () => {
    const text = await (await fetch(`http://127.0.0.1:${pleg.port}/metrics`)).text();
    assert.match(text, /kubelet_pleg_relist_duration_seconds_count\{[^}]*\} [1-9]/);
    assert.match(text, /kubelet_pleg_relist_interval_seconds_count\{[^}]*\} [1-9]/);
    assert.match(text, /kubelet_pleg_last_seen_seconds\{[^}]*\} \d/);
    assert.match(text, /kubelet_pleg_discard_events\{[^}]*\} 0/);
    assert.equal((await fetch(`http://127.0.0.1:${pleg.port}/healthz`)).status, 200);
  });

  it('switched to evented mode, the PLEG follows the runtime: events on containerd 2, the relist by itself on containerd 1.6', async () => {
    await expectEventedModeFollowsRuntime(pleg.port);
  });
});
