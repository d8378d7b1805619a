/**
 * The PLEG against the real containerd (through cri-gateway): a container
 * started, killed with ctr behind the stack's back, and removed gives
 * ContainerStarted, ContainerDied and ContainerRemoved within about one relist
 * period; getNewerThan releases a waiter within one period.
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
import { runtimeAddress } from './support/runtime.js';
import { expectEventedModeFollowsRuntime } from './support/pleg-mode.js';

const NODE = 'pleg-e2e';
const dec = new TextDecoder();

describe('pleg on the real containerd', { timeout: 180_000 }, () => {
  let nats: NatsServer;
  let nc: NatsConnection;
  let gateway: ServiceProcess;
  let pleg: ServiceProcess;
  let cri: NatsCriClient;
  let cache: KvPodCache;
  const events: { at: number; e: PodLifecycleEventMessage }[] = [];
  const uid = randomUUID();
  let podSandboxId = '';
  let containerId = '';

  async function eventFor(type: string, id: string, since: number): Promise<number> {
    const deadline = Date.now() + 15_000;
    while (Date.now() < deadline) {
      const hit = events.find((x) => x.at >= since && x.e.eventType === type && x.e.data === id);
      if (hit) return hit.at - since;
      await new Promise((r) => setTimeout(r, 20));
    }
    assert.fail(`no ${type} for ${id}; got ${JSON.stringify(events.map((x) => x.e))}`);
  }

  before(async () => {
    nats = await startNats();
    nc = await connect({ servers: nats.url, name: 'pleg-e2e-test', ...nats.auth() });
    nc.subscribe(`kubelet.${NODE}.pleg.*`, { callback: (_e, m) => void events.push({ at: Date.now(), e: JSON.parse(dec.decode(m.data)) as PodLifecycleEventMessage }) });
    const env = { NODE_NAME: NODE, NATS_URL: nats.url, LOG_LEVEL: 'warn' };
    gateway = await startService('cri-gateway', { ...env, CONTAINER_RUNTIME_ENDPOINT: `unix://${runtimeAddress()}` }, { port: await freePort(), instance: 'g' });
    pleg = await startService('pleg', { ...env, PLEG_MODE: 'generic', RELIST_PERIOD: '1s' }, { port: await freePort(), instance: 'p' });
    cri = new NatsCriClient(nc, NODE, 'pleg-e2e-test');
    cache = new KvPodCache({ kv: await new Kvm(nc).open('pod-cache'), node: NODE, clock: new SystemClock(), logger: silentLogger() });
    await cache.start();
  });

  after(async () => {
    cache?.stop();
    try {
      if (podSandboxId) {
        await cri.runtime('StopPodSandbox', { podSandboxId }).catch(() => undefined);
        await cri.runtime('RemovePodSandbox', { podSandboxId }).catch(() => undefined);
      }
      // Its pod carries the node label: anything of it still in containerd is a leak.
      if (cri) await failOnLeftovers(cri, NODE);
    } finally {
      await Promise.all([pleg?.stop(), gateway?.stop()]);
      await nc?.close();
      await nats?.stop();
    }
  });

  it('ContainerStarted, ContainerDied (killed with ctr) and ContainerRemoved, each within about one relist', async () => {
    const labels = { 'io.kubernetes.pod.uid': uid, 'io.kubernetes.pod.name': 'pleg-pod', 'io.kubernetes.pod.namespace': 'pleg-e2e', 'kubelet-split.io/node': NODE };
    const config = { metadata: { name: 'pleg-pod', namespace: 'pleg-e2e', uid, attempt: 0 }, labels, linux: { securityContext: { namespaceOptions: { network: 'NODE' as const } } } };
    podSandboxId = (await cri.runtime('RunPodSandbox', { config })).podSandboxId;
    containerId = (
      await cri.runtime('CreateContainer', {
        podSandboxId,
        config: { metadata: { name: 'main', attempt: 0 }, image: { image: 'localhost/kubelet-split/busybox:1.35' }, command: ['sleep', '3600'], labels: { ...labels, 'io.kubernetes.container.name': 'main' } },
        sandboxConfig: config,
      })
    ).containerId;
    let t = Date.now();
    await cri.runtime('StartContainer', { containerId });
    const started = await eventFor('ContainerStarted', containerId, t);

    t = Date.now();
    const kill = spawnSync('ctr', ['--address', runtimeAddress(), '-n', 'k8s.io', 'tasks', 'kill', '-s', 'SIGKILL', containerId], { encoding: 'utf8' });
    assert.equal(kill.status, 0, kill.stderr);
    const died = await eventFor('ContainerDied', containerId, t);

    t = Date.now();
    await cri.runtime('RemoveContainer', { containerId });
    const removed = await eventFor('ContainerRemoved', containerId, t);
    // One relist period is 1s; allow for the relist in flight and a loaded machine.
    for (const [what, ms] of [['started', started], ['died', died], ['removed', removed]] as const) assert.ok(ms < 3000, `${what} after ${ms}ms`);
    // The PLEG writes the pod cache, then sends the event; this test's copy of the cache follows the bucket by a KV
    // watch, which JetStream delivers on its own: wait for the write the event follows, rather than read the copy at once.
    const cacheDeadline = Date.now() + 15_000;
    while (cache.get(uid).entry?.containerStatuses.length !== 0 && Date.now() < cacheDeadline) await new Promise((r) => setTimeout(r, 20));
    const entry = cache.get(uid).entry;
    assert.ok(entry, 'the pod is in the cache');
    assert.equal(entry.sandboxStatuses.length, 1);
    assert.equal(entry.containerStatuses.length, 0, 'the removed container is gone from the cache');
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
