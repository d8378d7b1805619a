/**
 * Outages end to end (issue 12): the node's two dependencies fail in the
 * middle of a churn of pods, and the node must converge afterwards.
 *  - nats-server restarted on the same port and store directory: every
 *    service reconnects, re-subscribes, and picks up where the KV state is;
 *  - containerd restarted (deploy/runtime.sh restart; the shims, and so the
 *    containers, keep running): the gateway's gRPC channel reconnects, the
 *    PLEG reports unhealthy while it cannot relist and recovers, and the sync
 *    loop skips its ticks meanwhile (the health gate);
 *  - on containerd 2, where the PLEG is evented (docs/adr/0040), the event
 *    stream broken mid-churn, by cri-gateway restarted and by the containerd
 *    restart: the PLEG falls back to the relist at once and returns to the
 *    events after, both seen in /mode, the kubelet_evented_pleg_* metrics and
 *    the events on the Node; no pod lost, no container run twice.
 * Converged means what a user would check: every desired pod has exactly
 * one ready sandbox and exactly one running container per container name of
 * its spec in containerd, every deleted pod has nothing left in containerd,
 * and GET /pods lists exactly the desired pods, Running and Ready, each
 * container running as the one containerd has. The time from the end of the
 * fault to convergence is printed.
 *
 * This restarts the containerd every e2e file shares: it runs only inside a
 * test run, which holds the e2e lock (`flock -o /tmp/e2e.lock npm test -- outages`).
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { V1Pod } from '@kubernetes/client-node';
import { KubeletLabels } from '@app/kube';
import { NodeStack } from './support/node-stack.js';
import { restartRuntime, runtimeStreamsEvents } from './support/runtime.js';
import { metricValue } from './support/pleg-mode.js';

const IMAGE = 'localhost/kubelet-split/busybox:1.35';
const NODE = 'outage-e2e';
/** Longer than the PLEG's RELIST_THRESHOLD below, so that the PLEG turns unhealthy. */
const CONTAINERD_DOWN_MS = 16_000;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** A pod's spec as the test wrote it: its containers' names (an update renames one, so the old container must go). */
interface Desired {
  containers: string[];
}

function manifest(name: string, d: Desired): string {
  const containers = d.containers.map((c) => `    - name: ${c}\n      image: ${IMAGE}\n      command: ["sh", "-c", "sleep 3600"]\n`).join('');
  return `apiVersion: v1\nkind: Pod\nmetadata:\n  name: ${name}\nspec:\n  hostNetwork: true\n  terminationGracePeriodSeconds: 2\n  containers:\n${containers}`;
}

/** What is wrong with the node against `desired` and `deleted`; empty when it has converged. */
async function problems(stack: NodeStack, desired: Map<string, Desired>, deleted: Set<string>): Promise<string[]> {
  const out: string[] = [];
  const filter = { labelSelector: { [KubeletLabels.node]: NODE } };
  const [sandboxes, containers] = await Promise.all([stack.cri.runtime('ListPodSandbox', { filter }), stack.cri.runtime('ListContainers', { filter })]);
  const podOf = (labels: Record<string, string>) => labels[KubeletLabels.podName] ?? '';
  const list = await stack.podList();
  const served = new Map<string, V1Pod>(list.items.filter((p) => p.metadata?.namespace === 'default').map((p) => [p.metadata?.name ?? '', p]));
  for (const [name, d] of desired) {
    const pod = stack.podName(name);
    const ready = sandboxes.items.filter((s) => podOf(s.labels) === pod && s.state === 'SANDBOX_READY');
    if (ready.length !== 1) out.push(`${pod}: ${ready.length} ready sandboxes`);
    const running = containers.containers.filter((c) => podOf(c.labels) === pod && c.state === 'CONTAINER_RUNNING');
    const names = running.map((c) => c.metadata?.name ?? '').sort();
    if (names.join(',') !== [...d.containers].sort().join(',')) out.push(`${pod}: running containers [${names.join(',')}], want [${d.containers.join(',')}]`);
    const p = served.get(pod);
    if (!p) {
      out.push(`${pod}: not in /pods`);
      continue;
    }
    const s = p.status;
    if (s?.phase !== 'Running') out.push(`${pod}: /pods phase ${s?.phase ?? 'none'}`);
    if (s?.conditions?.find((c) => c.type === 'Ready')?.status !== 'True') out.push(`${pod}: /pods not Ready`);
    for (const c of d.containers) {
      const st = s?.containerStatuses?.find((x) => x.name === c);
      const inRuntime = running.find((r) => r.metadata?.name === c);
      if (!st?.state?.running || !inRuntime || st.containerID !== `containerd://${inRuntime.id}`) out.push(`${pod}: /pods says container ${c} is ${JSON.stringify(st?.state)} ${st?.containerID ?? ''}, containerd runs ${inRuntime?.id.slice(0, 12) ?? 'nothing'}`);
    }
  }
  for (const name of deleted) {
    const pod = stack.podName(name);
    const left = sandboxes.items.filter((s) => podOf(s.labels) === pod).length + containers.containers.filter((c) => podOf(c.labels) === pod).length;
    if (left > 0) out.push(`${pod}: deleted, but ${left} sandbox(es)/container(s) left in containerd`);
    if (served.has(pod)) out.push(`${pod}: deleted, but still in /pods`);
  }
  return out;
}

/** Waits until the node has converged; returns how long that took. */
async function converge(stack: NodeStack, desired: Map<string, Desired>, deleted: Set<string>, timeoutMs = 180_000): Promise<number> {
  const t0 = Date.now();
  let last: string[] = [];
  while (Date.now() - t0 < timeoutMs) {
    try {
      last = await problems(stack, desired, deleted);
      if (last.length === 0) return Date.now() - t0;
    } catch (err) {
      last = [`(${(err as Error).message})`];
    }
    await sleep(250);
  }
  assert.fail(`the node did not converge within ${timeoutMs}ms:\n  ${last.join('\n  ')}`);
}

/**
 * A churn of pods with `fault` started in its middle: creates, then (while
 * the fault goes on) updates, deletes and more creates. Returns the desired
 * and deleted pods and when the fault ended.
 */
async function churn(stack: NodeStack, prefix: string, fault: () => Promise<void>): Promise<{ desired: Map<string, Desired>; deleted: Set<string>; faultEnded: number }> {
  const desired = new Map<string, Desired>();
  const deleted = new Set<string>();
  const create = (name: string, containers: string[]) => {
    desired.set(name, { containers });
    deleted.delete(name);
    stack.writeManifest(name, manifest(name, { containers }));
  };
  for (let i = 0; i < 8; i++) {
    create(`${prefix}-${i}`, i % 3 === 0 ? ['a', 'b'] : ['a']);
    await sleep(150);
  }
  let faultEnded = 0;
  const during = fault().then(() => void (faultEnded = Date.now()));
  await sleep(300);
  // While the fault goes on: two updates (a container renamed), three deletes, four creates.
  create(`${prefix}-1`, ['a2']);
  create(`${prefix}-3`, ['a', 'b2']);
  for (const i of [2, 5, 7]) {
    stack.removeManifest(`${prefix}-${i}`);
    desired.delete(`${prefix}-${i}`);
    deleted.add(`${prefix}-${i}`);
    await sleep(150);
  }
  for (let i = 8; i < 12; i++) {
    create(`${prefix}-${i}`, ['a']);
    await sleep(150);
  }
  await during;
  // And one more round after it: an update, a delete, a create.
  create(`${prefix}-4`, ['a3']);
  stack.removeManifest(`${prefix}-6`);
  desired.delete(`${prefix}-6`);
  deleted.add(`${prefix}-6`);
  create(`${prefix}-12`, ['a']);
  return { desired, deleted, faultEnded };
}

async function health(url: string): Promise<{ status: number; body: string }> {
  try {
    const res = await fetch(url, { signal: AbortSignal.timeout(2000) });
    return { status: res.status, body: await res.text() };
  } catch (err) {
    return { status: 0, body: (err as Error).message };
  }
}

interface PlegMode {
  desired?: string;
  effective?: string;
  fallbackReason?: string;
}

/**
 * The evented PLEG's view of a fault that breaks the event stream, while `fault` runs: whether it fell
 * back (the reason /mode gave), then the wait for its return to events after it (generous: 30 s of
 * streaming, doubled after a recent return, plus the reconnect), and what the metrics and the Node's
 * events said. On containerd 1.6 the PLEG relists throughout: it says so, and nothing else is checked.
 */
async function watchEventedPleg(stack: NodeStack, url: (service: string, path: string) => string, fault: () => Promise<void>): Promise<() => Promise<string>> {
  const mode = async (): Promise<PlegMode> => (await (await fetch(url('pleg', '/mode'), { signal: AbortSignal.timeout(2000) })).json()) as PlegMode;
  const metric = (name: string) => metricValue(url('pleg', '/metrics'), name);
  if (!runtimeStreamsEvents()) {
    await fault();
    return async () => {
      const m = await mode();
      assert.equal(m.effective, 'generic');
      assert.match(m.fallbackReason ?? '', /does not stream container events/);
      return 'containerd 1.6: relisting throughout';
    };
  }
  await stack.waitFor('the PLEG on events before the fault', async () => ((await mode()).effective === 'evented' ? true : undefined), 180_000);
  const errors = await metric('kubelet_evented_pleg_connection_error_count');
  const successes = await metric('kubelet_evented_pleg_connection_success_count');
  const eventsBefore = stack.events.length;
  let fellBack = '';
  let done = false;
  const watching = (async () => {
    while (!done) {
      const m: PlegMode = await mode().catch(() => ({}));
      if (m.effective === 'generic' && !fellBack) fellBack = m.fallbackReason ?? '(no reason)';
      await new Promise((r) => setTimeout(r, 100));
    }
  })();
  const t0 = Date.now();
  try {
    await fault();
  } finally {
    done = true;
    await watching;
  }
  return async () => {
    assert.ok(fellBack, 'the PLEG fell back to the relist while the event stream was broken');
    await stack.waitFor('the PLEG back on events', async () => ((await mode()).effective === 'evented' ? true : undefined), 240_000);
    const back = Date.now() - t0;
    assert.ok((await metric('kubelet_evented_pleg_connection_error_count')) > errors, 'the fallback counted');
    assert.ok((await metric('kubelet_evented_pleg_connection_success_count')) > successes, 'the return counted');
    const reasons = stack.events.slice(eventsBefore).map((e) => e.reason);
    assert.ok(reasons.includes('ContainerEventsUnavailable'), `a ContainerEventsUnavailable event on the Node; got ${reasons.join(', ')}`);
    await stack.waitFor('a ContainerEventsResumed event on the Node', () => (stack.events.slice(eventsBefore).some((e) => e.reason === 'ContainerEventsResumed') ? true : undefined), 10_000);
    return `fell back (${fellBack}), on events again ${(back / 1000).toFixed(1)}s after the fault began`;
  };
}

describe('outages: the node converges after its dependencies restart mid-churn', { timeout: 900_000 }, () => {
  const stack = new NodeStack({
    node: NODE,
    services: ['cri-gateway', 'pleg', 'sync-loop', 'status-manager', 'pod-worker', 'config-source'],
    env: {
      // A short threshold, so that a containerd down for some seconds shows as an unhealthy PLEG
      // (the sync loop reads the PLEG's last relist every 5s, so not shorter than that plus a relist).
      pleg: { RELIST_THRESHOLD: '10s', PLEG_MODE: 'evented' },
      'pod-worker': { POD_SYNC_BACKOFF: '2s', SYNC_FREQUENCY: '10s' },
    },
  });
  const url = (service: string, path: string) => `http://127.0.0.1:${stack.procs.get(`${service}#0`)?.port ?? 0}${path}`;

  before(() => stack.start());
  after(() => stack.stop());

  it('nats-server restarted mid-churn (same port, same store): every service reconnects and the node converges', async () => {
    const { desired, deleted, faultEnded } = await churn(stack, 'nats', () => stack.nats.restart({ downMs: 2000 }));
    const ms = await converge(stack, desired, deleted);
    console.log(`# outage nats-server restart (down 2s): converged ${((faultEnded ? Date.now() - faultEnded : ms) / 1000).toFixed(1)}s after nats-server was back (${desired.size} pods desired, ${deleted.size} deleted)`);
    for (const service of ['cri-gateway', 'pleg', 'sync-loop', 'status-manager', 'pod-worker', 'config-source']) {
      const r = await health(url(service, '/readyz'));
      assert.equal(r.status, 200, `${service} ready again: ${r.body}`);
    }
  });

  it('containerd restarted mid-churn: the gateway reconnects, the PLEG is unhealthy while it cannot relist and recovers, and the node converges', async () => {
    // Pods already running before the outage must not be restarted by it: their containers keep running in the shims.
    const before = new Map<string, string>();
    for (const name of ['nats-0', 'nats-8']) before.set(name, (await stack.containers(name)).find((c) => c.state === 'CONTAINER_RUNNING')?.id ?? '');
    let plegUnhealthy = '';
    let gateClosed = '';
    let evented: () => Promise<string> = () => Promise.resolve('');
    const { desired, deleted, faultEnded } = await churn(stack, 'ctd', async () => {
      evented = await watchEventedPleg(stack, url, async () => {
        const outage = restartRuntime(CONTAINERD_DOWN_MS);
        let done = false;
        void outage.finally(() => (done = true));
        while (!done) {
          const h = await health(url('pleg', '/healthz'));
          if (h.status !== 200 && !plegUnhealthy) plegUnhealthy = h.body;
          const r = await health(url('sync-loop', '/readyz'));
          if (/skipping pod synchronization/.test(r.body) && !gateClosed) gateClosed = r.body;
          await sleep(250);
        }
        await outage;
      });
    });
    const ms = await converge(stack, desired, deleted);
    const after = Date.now() - faultEnded;
    console.log(`# outage containerd restart (down ${CONTAINERD_DOWN_MS / 1000}s): converged ${(after / 1000).toFixed(1)}s after containerd was back (${desired.size} pods desired, ${deleted.size} deleted; convergence check ${(ms / 1000).toFixed(1)}s)`);
    assert.match(plegUnhealthy, /pleg was last seen active/, 'the PLEG said it was unhealthy while containerd was down');
    assert.match(gateClosed, /PLEG is not healthy/, 'the sync loop skipped its ticks meanwhile');
    await stack.waitFor('the PLEG healthy again', async () => ((await health(url('pleg', '/healthz'))).status === 200 ? true : undefined));
    await stack.waitFor('the gateway ready again', async () => ((await health(url('cri-gateway', '/readyz'))).status === 200 ? true : undefined));
    for (const [name, id] of before) {
      const now = (await stack.containers(name)).find((c) => c.state === 'CONTAINER_RUNNING')?.id ?? '';
      assert.equal(now, id, `${name}'s container kept running through the containerd restart (its shim stayed)`);
    }
    console.log(`# outage containerd restart, the PLEG: ${await evented()}`);
  });

  // SIGTERM, as a supervisor or a rolling upgrade stops it: the relay says "stopped" as it goes. (A SIGKILLed gateway says
  // nothing: the new gateway's stream has a new name, and the PLEG relists at once for what the gap missed; pleg.spec.ts.)
  it('cri-gateway restarted mid-churn (the event stream with it): the PLEG falls back and returns, and the node converges', async () => {
    let evented: () => Promise<string> = () => Promise.resolve('');
    const { desired, deleted } = await churn(stack, 'gw', async () => {
      evented = await watchEventedPleg(stack, url, async () => {
        const gw = stack.procs.get('cri-gateway#0');
        assert.ok(gw, 'cri-gateway runs');
        await gw.stop();
        stack.procs.delete('cri-gateway#0');
        await sleep(1500);
        await stack.startService('cri-gateway');
      });
    });
    const ms = await converge(stack, desired, deleted);
    console.log(`# outage cri-gateway restart: converged ${(ms / 1000).toFixed(1)}s after the churn (${desired.size} pods desired, ${deleted.size} deleted); the PLEG: ${await evented()}`);
  });
});
