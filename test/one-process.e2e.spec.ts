/**
 * The one-process mode end to end (TARGET=all, docs/adr/0016-one-process-mode.md):
 * every service as a module of one Node process on the real containerd,
 * checked as the split mode's e2e files check it, and for what sharing a
 * process could break: each module is still its own NATS user and
 * connection, its own port and metrics, its own trace instance; a pod
 * starts, is restarted when its container is killed, is probed; SIGKILL of
 * the process loses nothing and starts nothing twice; SIGTERM exits 0.
 *
 * The other e2e files run against this mode too with KS_TARGET=all (those
 * that do not stop one service on its own).
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import type { V1ContainerStatus, V1PodStatus } from '@kubernetes/client-node';
import { SERVICE_NAMES, Subjects, type ServiceInfo } from '@app/contracts';
import { sampleMonitoring } from '@app/nats';
import { readTraceRecords, type TraceRecord } from '@app/tracing';
import { exited } from '../deploy/local/stack.js';
import { NodeStack } from './support/node-stack.js';
import { runtimeAddress } from './support/runtime.js';

const IMAGE = 'localhost/kubelet-split/busybox:1.35';
const NODE = 'op-e2e';
const cs = (s: V1PodStatus, name: string): V1ContainerStatus | undefined => s.containerStatuses?.find((c) => c.name === name);
const running = (s: V1PodStatus, name: string) => cs(s, name)?.state?.running !== undefined;
const ready = (s: V1PodStatus) => s.conditions?.find((c) => c.type === 'Ready')?.status === 'True';

function pod(name: string, containers: string): string {
  return `apiVersion: v1\nkind: Pod\nmetadata:\n  name: ${name}\nspec:\n  hostNetwork: true\n  terminationGracePeriodSeconds: 2\n  containers:\n${containers}`;
}
const container = (name: string, command: string, extra = '') => `    - name: ${name}\n      image: ${IMAGE}\n      command: ["sh", "-c", ${JSON.stringify(command)}]\n${extra}`;

describe('the one-process mode (TARGET=all) on the real containerd', { timeout: 600_000 }, () => {
  const stack = new NodeStack({
    node: NODE,
    target: 'all',
    services: [...SERVICE_NAMES],
    env: { 'pod-worker': { CRASHLOOP_BACKOFF_INITIAL: '1s', SYNC_FREQUENCY: '10s', POD_SYNC_BACKOFF: '2s' } },
  });
  const port = (service: string) => stack.procs.get(`${service}#0`)?.port ?? 0;
  const processOf = () => stack.procs.get('cri-gateway#0')?.process;

  before(() => stack.start());
  after(() => stack.stop());

  it('runs every service in one process, each connected as its own NATS user and named <service>@<node>#<instance>', async () => {
    const pids = new Set([...stack.procs.values()].map((p) => p.process.pid));
    assert.equal(pids.size, 1, 'one process');
    const infos = await Promise.all(SERVICE_NAMES.map(async (s) => (await (await fetch(`http://127.0.0.1:${port(s)}/info`)).json()) as ServiceInfo));
    assert.deepEqual(infos.map((i) => i.service), [...SERVICE_NAMES], 'each module answers /info on its own port');
    assert.deepEqual(new Set(infos.map((i) => i.pid)), pids);
    const { connz } = await sampleMonitoring(stack.nc);
    const ours = connz.connections.filter((c) => c.name?.includes(`@${NODE}#`));
    assert.deepEqual(
      ours.map((c) => `${c.name ?? ''} as ${c.authorized_user ?? ''}`).sort(),
      SERVICE_NAMES.map((s) => `${s}@${NODE}#0 as ${s}`).sort(),
    );
  });

  it('a pod reaches Running and Ready, its container runs in containerd, and its events are sent', async () => {
    stack.writeManifest('web', pod('web', container('main', 'sleep 3600')));
    const s = await stack.waitForPod('web', 'Running and Ready', (x) => x.phase === 'Running' && running(x, 'main') && ready(x), 60_000);
    const cts = await stack.containers('web');
    assert.deepEqual(cts.map((c) => c.state), ['CONTAINER_RUNNING']);
    assert.equal(`containerd://${cts[0]?.id ?? ''}`, cs(s, 'main')?.containerID);
    const reasons = stack.eventsOf('web').map((e) => e.reason);
    for (const r of ['Pulled', 'Created', 'Started']) assert.ok(reasons.includes(r), `${r} in ${reasons.join(',')}`);
  });

  it('each module records its own trace hops: the pod\'s records name every service on its way to Running', async () => {
    const uid = (await stack.podList()).items.find((p) => p.metadata?.name === stack.podName('web'))?.metadata?.uid ?? '';
    assert.ok(uid);
    const wanted = ['config-source', 'sync-loop', 'pod-worker', 'cri-gateway', 'pleg', 'status-manager'];
    // Each service flushes its records in batches of its own (50 ms): the wait ends on what the
    // assertions check (every service seen, and the two hops below), not on the first record of each.
    const gatewayHop = (rs: TraceRecord[]) => rs.find((r) => r.kind === 'handle' && r.subject?.endsWith('.RunPodSandbox'));
    const workerHop = (rs: TraceRecord[]) => rs.find((r) => r.kind === 'cri' && r.method === 'StartContainer' && r.instance === `pod-worker@${NODE}#0`);
    const seen = await stack.waitFor('hops of every service on the pod\'s way', async () => {
      const rs: TraceRecord[] = [];
      await readTraceRecords(stack.nc, Subjects.trace.forPod(uid), (r) => void rs.push(r), { follow: false });
      const services = new Set(rs.map((r) => r.instance.split('@')[0]));
      return wanted.every((w) => services.has(w)) && gatewayHop(rs) && workerHop(rs) ? rs : undefined;
    }, 30_000);
    assert.equal(gatewayHop(seen)?.instance, `cri-gateway@${NODE}#0`, 'the gateway handled RunPodSandbox, and its hop says so');
    assert.ok(workerHop(seen), 'the pod worker\'s StartContainer call is its own hop');
  });

  it('each module serves its own metrics: the kubelet\'s series under their service\'s label only', async () => {
    const text = async (s: string) => (await fetch(`http://127.0.0.1:${port(s)}/metrics`)).text();
    const worker = await text('pod-worker');
    assert.match(worker, /kubelet_started_pods_total\{[^}]*service="pod-worker"[^}]*\} [1-9]/);
    assert.doesNotMatch(worker, /kubelet_pleg_relist_duration_seconds/, 'no pleg series in the pod worker\'s registry');
    const pleg = await text('pleg');
    assert.match(pleg, /kubelet_pleg_relist_duration_seconds_count\{[^}]*service="pleg"[^}]*\} [1-9]/);
    assert.doesNotMatch(pleg, /kubelet_started_pods_total/);
  });

  it('a container killed behind the stack\'s back (with ctr) is restarted', async () => {
    const s0 = await stack.waitForPod('web', 'Running', (x) => running(x, 'main'));
    const id = (cs(s0, 'main')?.containerID ?? '').replace('containerd://', '');
    const kill = spawnSync('ctr', ['--address', runtimeAddress(), '-n', 'k8s.io', 'tasks', 'kill', '-s', 'SIGKILL', id], { encoding: 'utf8' });
    assert.equal(kill.status, 0, kill.stderr);
    const s = await stack.waitForPod('web', 'restarted', (x) => running(x, 'main') && (cs(x, 'main')?.restartCount ?? 0) >= 1, 40_000);
    assert.notEqual(cs(s, 'main')?.containerID, cs(s0, 'main')?.containerID);
    assert.equal(cs(s, 'main')?.lastState?.terminated?.exitCode, 137);
  });

  it('probes: a failing exec liveness probe restarts its container; an exec readiness probe turns the pod Ready', async () => {
    stack.writeManifest(
      'probed',
      pod(
        'probed',
        container('live', 'touch /tmp/healthy; sleep 4; rm /tmp/healthy; sleep 3600', `      livenessProbe:\n        exec:\n          command: ["cat", "/tmp/healthy"]\n        periodSeconds: 1\n        failureThreshold: 2\n`) +
          container('gate', 'sleep 8; touch /tmp/ready; sleep 3600', `      readinessProbe:\n        exec:\n          command: ["cat", "/tmp/ready"]\n        periodSeconds: 1\n`),
      ),
    );
    const notYet = await stack.waitForPod('probed', 'running, gate not ready yet', (x) => running(x, 'gate'), 60_000);
    assert.equal(cs(notYet, 'gate')?.ready, false, 'not ready before its probe succeeds');
    await stack.waitForPod('probed', 'gate ready', (x) => cs(x, 'gate')?.ready === true, 30_000);
    await stack.waitForPod('probed', 'live restarted by its liveness probe', (x) => (cs(x, 'live')?.restartCount ?? 0) >= 1, 60_000);
    assert.ok(stack.eventsOf('probed').some((e) => e.reason === 'Killing' && /failed liveness probe, will be restarted/.test(e.message)));
  });

  it('SIGKILL of the process: started again, it keeps the running pod (same sandbox and container) and serves it Running', async () => {
    const before = await stack.waitForPod('web', 'Running', (x) => running(x, 'main'));
    const sandboxes = (await stack.sandboxes('web')).filter((s) => s.state === 'SANDBOX_READY').map((s) => s.id);
    const child = processOf();
    assert.ok(child);
    child.kill('SIGKILL');
    await exited(child);
    await stack.startModules();
    const after = await stack.waitForPod('web', 'Running after the restart', (x) => running(x, 'main') && ready(x), 60_000);
    assert.equal(cs(after, 'main')?.containerID, cs(before, 'main')?.containerID, 'the same container');
    // Give the new process's housekeeping and a few relists the chance to do something twice.
    await new Promise((r) => setTimeout(r, 4000));
    assert.deepEqual((await stack.sandboxes('web')).filter((s) => s.state === 'SANDBOX_READY').map((s) => s.id), sandboxes, 'no second sandbox');
    assert.deepEqual((await stack.containers('web')).filter((c) => c.state === 'CONTAINER_RUNNING').map((c) => `containerd://${c.id}`), [cs(before, 'main')?.containerID]);
  });

  it('the manifest removed: the pod is killed and leaves /pods and containerd', async () => {
    stack.removeManifest('web');
    stack.removeManifest('probed');
    await stack.waitFor('the pods to be gone from containerd', async () => ((await stack.sandboxes('web')).length + (await stack.sandboxes('probed')).length === 0 ? true : undefined), 60_000);
    await stack.waitFor('the pods to leave /pods', async () => ((await stack.podList()).items.length === 0 ? true : undefined), 30_000);
  });

  it('SIGTERM drains every module and the process exits 0', async () => {
    const child = processOf();
    assert.ok(child);
    const t0 = Date.now();
    child.kill('SIGTERM');
    await exited(child);
    assert.equal(child.exitCode, 0, `exit ${String(child.exitCode)} (signal ${String(child.signalCode)})`);
    assert.ok(Date.now() - t0 < 10_000, `exited after ${Date.now() - t0}ms`);
    await stack.startModules(); // for the suite's own cleanup, which asks the runtime through cri-gateway
  });
});
