/**
 * The Go PLEG (contrib/pleg-go) in place of ours, every service in a
 * process of its own, on the real containerd: the node's e2e subset with
 * the assertions of the files it comes from (pod-worker.e2e.spec.ts and
 * prober.e2e.spec.ts): a pod starts and is Running in GET /pods, a killed
 * container is seen exited and restarted, a crash-looping container
 * restarts with its restartCount and CrashLoopBackOff, a deleted pod goes,
 * a readiness probe makes the pod Ready; evented mode falls back to the
 * relist on this containerd. First, that what runs as the pleg
 * is the Go binary and it leads, and that no TypeScript PLEG runs.
 * contrib/pleg-go/build.sh builds it, or reuses the cached binary.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { V1ContainerStatus, V1PodStatus } from '@kubernetes/client-node';
import { Kvm } from '@nats-io/kv';
import type { PodCacheEntry, PodCacheGlobal } from '@app/contracts';
import { freePort, startService } from '../deploy/local/stack.js';
import { NodeStack } from './support/node-stack.js';
import { buildPlegGo } from './support/pleg-go.js';
import { runtimeAddress, runtimeStreamsEvents } from './support/runtime.js';
import { expectEventedModeFollowsRuntime } from './support/pleg-mode.js';

const IMAGE = 'localhost/kubelet-split/busybox:1.35';
const cs = (s: V1PodStatus, name: string): V1ContainerStatus | undefined => [...(s.containerStatuses ?? []), ...(s.initContainerStatuses ?? [])].find((c) => c.name === name);
const running = (s: V1PodStatus, name: string) => cs(s, name)?.state?.running !== undefined;
const ready = (s: V1PodStatus) => s.conditions?.find((c) => c.type === 'Ready')?.status === 'True';

function pod(name: string, spec: string): string {
  return `apiVersion: v1\nkind: Pod\nmetadata:\n  name: ${name}\nspec:\n  hostNetwork: true\n  terminationGracePeriodSeconds: 3\n${spec}`;
}
const container = (name: string, command: string, extra = '') => `    - name: ${name}\n      image: ${IMAGE}\n      command: ["sh", "-c", ${JSON.stringify(command)}]\n${extra}`;


describe('the Go PLEG in place of ours, split mode, on the real containerd', { timeout: 900_000 }, () => {
  const stack = new NodeStack({
    node: 'plego-e2e',
    services: ['cri-gateway', 'pleg', 'sync-loop', 'status-manager', 'prober', 'pod-worker', 'config-source'],
    env: { 'pod-worker': { CRASHLOOP_BACKOFF_INITIAL: '2s', CRASHLOOP_BACKOFF_MAX: '16s', SYNC_FREQUENCY: '10s', POD_SYNC_BACKOFF: '2s' } },
    replace: { pleg: { command: buildPlegGo() } },
  });
  const www = () => join(stack.dir, 'www');

  before(async () => {
    await stack.start();
    mkdirSync(www(), { recursive: true });
    writeFileSync(join(www(), 'index.html'), 'ok\n');
  });
  after(() => stack.stop());

  it('the pleg is the Go binary, it leads, and it answers /info, /healthz and /metrics as ours does', async () => {
    const pleg = stack.procs.get('pleg#0');
    assert.ok(pleg);
    const info = (await (await fetch(`http://127.0.0.1:${pleg.port}/info`)).json()) as { implementation?: string; service: string; node: string; pid: number; leadership?: { role: string; token?: number }; subjects: string[] };
    assert.equal(info.implementation, 'pleg-go');
    assert.deepEqual([info.service, info.node, info.pid], ['pleg', 'plego-e2e', pleg.process.pid]);
    // Leadership is won just after /readyz: the relist starts with it.
    const leading = await stack.waitFor('the Go PLEG to lead', async () => {
      const i = (await (await fetch(`http://127.0.0.1:${pleg.port}/info`)).json()) as typeof info;
      return i.leadership?.role === 'leader' ? i : undefined;
    }, 15_000);
    assert.ok((leading.leadership?.token ?? 0) > 0, 'a fencing token');
    assert.ok(info.subjects.includes('kubelet.plego-e2e.pleg.inspect.*'), info.subjects.join(', '));
    // The contract version it speaks, as every service says it (docs/adr/0034).
    assert.deepEqual((info as unknown as { contract: unknown }).contract, { version: 1, accepts: { oldest: 1, newest: 1 }, peersOutsidePolicy: [] });
    // The same answer over NATS, where the project's tools ask.
    const overNats = JSON.parse(new TextDecoder().decode((await stack.nc.request('kubelet.plego-e2e.service.pleg.info', new Uint8Array(), { timeout: 5000 })).data)) as typeof info;
    assert.equal(overNats.implementation, 'pleg-go');
    const health = await fetch(`http://127.0.0.1:${pleg.port}/healthz`);
    assert.equal(health.status, 200);
    const metrics = await stack.waitFor('a relist in the metrics', async () => {
      const text = await (await fetch(`http://127.0.0.1:${pleg.port}/metrics`)).text();
      return /^kubelet_pleg_relist_duration_seconds_count\{[^}]*\} [1-9]/m.test(text) ? text : undefined;
    }, 15_000);
    assert.match(metrics, /^leader_election_master_status\{name="pleg",[^}]*\} 1$/m);
    assert.match(metrics, /^kubelet_split_pleg_healthy\{[^}]*\} 1$/m);
    // Only one PLEG: no process of ours runs dist/apps/pleg.
    const ps = spawnSync('pgrep', ['-f', 'dist/apps/pleg/src/main.js'], { encoding: 'utf8' });
    const ours = ps.stdout.trim().split('\n').filter(Boolean).map(Number).filter((pid) => readFileSync(`/proc/${pid}/environ`, 'utf8').includes('NODE_NAME=plego-e2e'));
    assert.deepEqual(ours, [], 'no TypeScript PLEG of this node runs');
  });

  it('a one-container pod reaches Running and its container runs in containerd', async () => {
    // The PLEG's events as the sync loop gets them: their headers are ours.
    const events: { eventType: string; headers: Record<string, string | undefined> }[] = [];
    const sub = stack.nc.subscribe('kubelet.plego-e2e.pleg.*', {
      callback: (_e, m) => {
        const h = (k: string) => m.headers?.get(k) || undefined;
        events.push({ eventType: (JSON.parse(new TextDecoder().decode(m.data)) as { eventType: string }).eventType, headers: { traceparent: h('traceparent'), uid: h('Kubelet-Pod-UID'), service: h('Kubelet-Service'), sender: h('Kubelet-Sender'), revision: h('Kubelet-Leader-Revision'), contract: h('Kubelet-Contract') } });
      },
    });
    stack.writeManifest('one', pod('one', `  containers:\n${container('main', 'sleep 3600')}`));
    const s = await stack.waitForPod('one', 'Running', (x) => x.phase === 'Running' && running(x, 'main'));
    assert.equal(cs(s, 'main')?.ready, true);
    assert.equal(s.conditions?.find((c) => c.type === 'Ready')?.status, 'True');
    const cts = await stack.containers('one');
    assert.equal(cts.length, 1);
    assert.equal(cts[0]?.state, 'CONTAINER_RUNNING');
    assert.equal(`containerd://${cts[0]?.id ?? ''}`, cs(s, 'main')?.containerID);
    const reasons = stack.eventsOf('one').map((e) => e.reason);
    for (const r of ['Pulled', 'Created', 'Started']) assert.ok(reasons.includes(r), `${r} in ${reasons.join(',')}`);
    sub.unsubscribe();
    const started = events.find((e) => e.eventType === 'ContainerStarted');
    assert.ok(started, `a ContainerStarted event among ${events.map((e) => e.eventType).join(', ')}`);
    const uid = (await stack.podList()).items.find((p) => p.metadata?.name === stack.podName('one'))?.metadata?.uid;
    assert.match(started.headers.traceparent ?? '', /^00-[0-9a-f]{32}-[0-9a-f]{16}-01$/);
    assert.deepEqual([started.headers.uid, started.headers.service, started.headers.sender, started.headers.contract], [uid, 'pleg', 'pleg@plego-e2e#0', '1']);
    assert.ok(Number(started.headers.revision) > 0, 'the leader\'s fencing token');
  });

  it('the pod cache holds the pod under <node>.pod.<uid>, written by the Go PLEG, its container running', async () => {
    const s = await stack.waitForPod('one', 'Running', (x) => running(x, 'main'));
    const uid = (await stack.podList()).items.find((p) => p.metadata?.name === stack.podName('one'))?.metadata?.uid ?? '';
    const kv = await new Kvm(stack.nc).open('pod-cache');
    const entry = await stack.waitFor('the pod cache entry', async () => {
      const e = await kv.get(`plego-e2e.pod.${uid}`);
      return e && e.value.length > 0 ? (JSON.parse(new TextDecoder().decode(e.value)) as PodCacheEntry) : undefined;
    });
    assert.deepEqual([entry.uid, entry.name, entry.namespace], [uid, stack.podName('one'), 'default']);
    const containerId = (cs(s, 'main')?.containerID ?? '').replace('containerd://', '');
    assert.deepEqual((entry.containerStatuses as { id: string; state: string }[]).map((c) => [c.id, c.state]), [[containerId, 'CONTAINER_RUNNING']]);
    const global = JSON.parse(new TextDecoder().decode((await kv.get('plego-e2e.global'))?.value)) as PodCacheGlobal;
    // Evented (the default) where the runtime streams events: relists 5 minutes apart (threshold 10 min) and a heartbeat
    // every 10 s between them; else the relist every second. The entry may be ahead of the cache's clock: an immediate
    // inspection stamps it after the pod worker's sync.
    const evented = runtimeStreamsEvents();
    assert.equal(global.relistThresholdMs, evented ? 600_000 : 180_000, JSON.stringify(global));
    assert.equal(global.aliveThresholdMs, 180_000);
    assert.ok(Date.now() - global.timestamp < (evented ? 310_000 : 10_000) && Date.now() - (global.aliveAt ?? 0) < 20_000 && Date.now() - entry.timestamp < 60_000, `the cache's clock follows the relists, its sign of life the heartbeats: ${JSON.stringify(global)}, entry at ${entry.timestamp}`);
  });

  it('a container killed behind the stack\'s back (with ctr) is restarted', async () => {
    const s0 = await stack.waitForPod('one', 'Running', (x) => running(x, 'main'));
    const id = (cs(s0, 'main')?.containerID ?? '').replace('containerd://', '');
    const kill = spawnSync('ctr', ['--address', runtimeAddress(), '-n', 'k8s.io', 'tasks', 'kill', '-s', 'SIGKILL', id], { encoding: 'utf8' });
    assert.equal(kill.status, 0, kill.stderr);
    const s = await stack.waitForPod('one', 'restarted', (x) => running(x, 'main') && (cs(x, 'main')?.restartCount ?? 0) >= 1, 40_000);
    assert.notEqual(cs(s, 'main')?.containerID, cs(s0, 'main')?.containerID);
    assert.equal(cs(s, 'main')?.lastState?.terminated?.exitCode, 137);
  });

  it('restartPolicy OnFailure with exit 1 restarts with growing delays and shows CrashLoopBackOff', async () => {
    stack.writeManifest('crash', pod('crash', `  restartPolicy: OnFailure\n  containers:\n${container('main', 'exit 1')}`));
    const s = await stack.waitForPod('crash', 'three restarts', (x) => (cs(x, 'main')?.restartCount ?? 0) >= 3, 90_000);
    const seenBackOff = stack.served.some((h) => h.pod === stack.podName('crash') && cs(h.status, 'main')?.state?.waiting?.reason === 'CrashLoopBackOff');
    assert.ok(seenBackOff, 'GET /pods showed CrashLoopBackOff');
    assert.equal(cs(s, 'main')?.lastState?.terminated?.exitCode, 1);
    assert.ok(stack.eventsOf('crash').some((e) => e.reason === 'BackOff'), 'BackOff events were sent');
    const created = stack.eventsOf('crash').filter((e) => e.reason === 'Created').map((e) => Date.parse(e.timestamp));
    const delays = created.slice(1).map((t, i) => t - (created[i] ?? 0));
    assert.ok(delays.length >= 3, `restarts: ${delays.join(', ')}`);
    assert.ok((delays[1] ?? 0) >= 1500, `the second restart waited the 2s back-off: ${delays.join(', ')}ms`);
    assert.ok((delays[2] ?? 0) > (delays[1] ?? 0) + 1000, `the delays grow: ${delays.join(', ')}ms`);
    stack.removeManifest('crash');
  });

  it('deleting the manifest runs preStop and stops within the grace period; the pod goes from GET /pods', async () => {
    const marker = join(stack.dir, 'prestop-ran');
    stack.writeManifest(
      'grace',
      pod(
        'grace',
        `  containers:\n${container('main', 'trap "" TERM; while true; do sleep 1; done', `      lifecycle:\n        preStop:\n          exec:\n            command: ["sh", "-c", "echo stopping > /host/prestop-ran"]\n      volumeMounts:\n        - { name: host, mountPath: /host }\n`)}  volumes:\n    - name: host\n      hostPath:\n        path: ${stack.dir}\n`,
      ),
    );
    await stack.waitForPod('grace', 'Running', (x) => running(x, 'main'));
    const t0 = Date.now();
    stack.removeManifest('grace');
    await stack.waitFor('the container to stop', async () => ((await stack.containers('grace')).every((c) => c.state !== 'CONTAINER_RUNNING') ? true : undefined));
    const took = Date.now() - t0;
    assert.ok(existsSync(marker) && readFileSync(marker, 'utf8').includes('stopping'), 'the preStop hook ran');
    assert.ok(took < 12_000, `stopped after ${took}ms`);
    await stack.waitFor('the sandbox to be removed', async () => ((await stack.sandboxes('grace')).length === 0 ? true : undefined));
    assert.ok(stack.eventsOf('grace').some((e) => e.reason === 'Killing'));
    await stack.waitFor('grace gone from GET /pods', async () => ((await stack.podList()).items.some((p) => p.metadata?.name === stack.podName('grace')) ? undefined : true));
  });

  it('an httpGet readiness probe on busybox httpd flips Ready when the file is removed and put back', async () => {
    const port = await freePort();
    stack.writeManifest(
      'web',
      `apiVersion: v1\nkind: Pod\nmetadata:\n  name: web\nspec:\n  hostNetwork: true\n  terminationGracePeriodSeconds: 2\n  containers:\n    - name: httpd\n      image: ${IMAGE}\n      command: ["httpd", "-f", "-p", "127.0.0.1:${port}", "-h", "/www"]\n      readinessProbe:\n        httpGet:\n          host: 127.0.0.1\n          path: /index.html\n          port: ${port}\n        periodSeconds: 1\n      volumeMounts:\n        - { name: www, mountPath: /www }\n  volumes:\n    - name: www\n      hostPath:\n        path: ${www()}\n`,
    );
    await stack.waitForPod('web', 'Ready', ready);
    rmSync(join(www(), 'index.html'));
    let t0 = Date.now();
    await stack.waitForPod('web', 'not Ready', (x) => !ready(x), 15_000);
    const down = Date.now() - t0;
    writeFileSync(join(www(), 'index.html'), 'ok again\n');
    t0 = Date.now();
    await stack.waitForPod('web', 'Ready again', ready, 15_000);
    const up = Date.now() - t0;
    assert.ok(down < 4000 && up < 4000, `Ready flipped after ${down}ms and ${up}ms`);
  });

  it('switched to evented mode, the PLEG follows the runtime: events on containerd 2, the relist by itself on containerd 1.6', async () => {
    const pleg = stack.procs.get('pleg#0');
    assert.ok(pleg);
    await expectEventedModeFollowsRuntime(pleg.port);
  });

  it('ours and the Go PLEG share one election: ours as standby leads when the Go PLEG stops, and goes on from the cache it wrote', async () => {
    const goPleg = stack.procs.get('pleg#0');
    assert.ok(goPleg);
    const s0 = await stack.waitForPod('one', 'Running', (x) => running(x, 'main'));
    const ours = await startService('pleg', stack.env('pleg'), { port: await freePort(), instance: '1', timeoutMs: 60_000 });
    stack.procs.set('pleg#1', ours);
    const infoOf = async (port: number) => (await (await fetch(`http://127.0.0.1:${port}/info`)).json()) as { leadership?: { role: string; leader?: string; token?: number } };
    const standby = await stack.waitFor('ours to see the Go PLEG lead', async () => ((await infoOf(ours.port)).leadership?.leader === '0' ? infoOf(ours.port) : undefined), 15_000);
    assert.equal(standby.leadership?.role, 'standby');
    const goToken = (await infoOf(goPleg.port)).leadership?.token ?? 0;
    await goPleg.stop(10_000); // SIGTERM: it releases the lease
    assert.equal(goPleg.process.exitCode, 0, 'the Go PLEG exits 0 on SIGTERM');
    const leading = await stack.waitFor('ours to lead', async () => ((await infoOf(ours.port)).leadership?.role === 'leader' ? infoOf(ours.port) : undefined), 15_000);
    assert.ok((leading.leadership?.token ?? 0) > goToken, 'a later term, a higher fencing token');
    // Ours relists from the Go PLEG's view: the running pod is untouched, a kill is seen and restarted.
    const id = (cs(s0, 'main')?.containerID ?? '').replace('containerd://', '');
    const kill = spawnSync('ctr', ['--address', runtimeAddress(), '-n', 'k8s.io', 'tasks', 'kill', '-s', 'SIGKILL', id], { encoding: 'utf8' });
    assert.equal(kill.status, 0, kill.stderr);
    const s = await stack.waitForPod('one', 'restarted under our PLEG', (x) => running(x, 'main') && (cs(x, 'main')?.restartCount ?? 0) > (cs(s0, 'main')?.restartCount ?? 0), 40_000);
    assert.equal(cs(s, 'main')?.restartCount, (cs(s0, 'main')?.restartCount ?? 0) + 1, 'one restart: the takeover restarted nothing');
  });
});
