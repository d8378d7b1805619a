/**
 * Pod workers end to end: static manifests in a temporary directory, the
 * services as processes, the real containerd. What is checked is what a
 * user would look at: the pod statuses in the v1 PodList the status manager
 * serves at GET /pods, the events, and the containers in containerd.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { spawnSync } from 'node:child_process';
import type { V1ContainerStatus, V1PodStatus } from '@kubernetes/client-node';
import { NodeStack } from './support/node-stack.js';
import { runtimeAddress } from './support/runtime.js';

const IMAGE = 'localhost/kubelet-split/busybox:1.35';
const cs = (s: V1PodStatus, name: string): V1ContainerStatus | undefined => [...(s.containerStatuses ?? []), ...(s.initContainerStatuses ?? [])].find((c) => c.name === name);
const running = (s: V1PodStatus, name: string) => cs(s, name)?.state?.running !== undefined;

function pod(name: string, spec: string): string {
  return `apiVersion: v1\nkind: Pod\nmetadata:\n  name: ${name}\nspec:\n  hostNetwork: true\n  terminationGracePeriodSeconds: 3\n${spec}`;
}
const container = (name: string, command: string, extra = '') => `    - name: ${name}\n      image: ${IMAGE}\n      command: ["sh", "-c", ${JSON.stringify(command)}]\n${extra}`;

describe('pod workers on the real containerd', { timeout: 600_000 }, () => {
  const stack = new NodeStack({
    node: 'pw-e2e',
    services: ['cri-gateway', 'pleg', 'sync-loop', 'status-manager', 'pod-worker', 'config-source'],
    env: { 'pod-worker': { CRASHLOOP_BACKOFF_INITIAL: '2s', CRASHLOOP_BACKOFF_MAX: '16s', SYNC_FREQUENCY: '10s', POD_SYNC_BACKOFF: '2s' } },
  });

  before(() => stack.start());
  after(() => stack.stop());

  it('a one-container pod reaches Running and its container runs in containerd', async () => {
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
  });

  it('two containers both run', async () => {
    stack.writeManifest('two', pod('two', `  containers:\n${container('a', 'sleep 3600')}${container('b', 'sleep 3600')}`));
    await stack.waitForPod('two', 'both running', (x) => running(x, 'a') && running(x, 'b'));
    const cts = await stack.containers('two');
    assert.deepEqual(cts.map((c) => c.state), ['CONTAINER_RUNNING', 'CONTAINER_RUNNING']);
  });

  it('init containers run in order before the main container', async () => {
    const vol = `  volumes:\n    - name: work\n      emptyDir: {}\n`;
    const mount = `      volumeMounts:\n        - { name: work, mountPath: /work }\n`;
    stack.writeManifest(
      'init',
      pod('init', `  initContainers:\n${container('first', 'echo first > /work/order', mount)}${container('second', 'grep -q first /work/order && echo second >> /work/order', mount)}  containers:\n${container('main', 'cat /work/order; sleep 3600', mount)}${vol}`),
    );
    const s = await stack.waitForPod('init', 'Running after its init containers', (x) => x.phase === 'Running' && running(x, 'main'));
    assert.equal(cs(s, 'first')?.state?.terminated?.exitCode, 0);
    assert.equal(cs(s, 'second')?.state?.terminated?.exitCode, 0, 'second ran after first (it checks first\'s output)');
    assert.equal(s.conditions?.find((c) => c.type === 'Initialized')?.status, 'True');
  });

  it('a failing init container blocks the main containers', async () => {
    stack.writeManifest('initfail', pod('initfail', `  initContainers:\n${container('broken', 'exit 1')}  containers:\n${container('main', 'sleep 3600')}`));
    const s = await stack.waitForPod('initfail', 'init restarting', (x) => (cs(x, 'broken')?.restartCount ?? 0) >= 1);
    assert.equal(s.phase, 'Pending');
    assert.equal(cs(s, 'main')?.state?.waiting?.reason, 'PodInitializing');
    assert.equal(s.conditions?.find((c) => c.type === 'Initialized')?.status, 'False');
    assert.ok(!(await stack.containers('initfail')).some((c) => c.labels['io.kubernetes.container.name'] === 'main'), 'main was never created');
    stack.removeManifest('initfail');
  });

  it('a sidecar keeps running beside the main container', async () => {
    stack.writeManifest('sidecar', pod('sidecar', `  initContainers:\n${container('proxy', 'sleep 3600', '      restartPolicy: Always\n')}  containers:\n${container('main', 'sleep 3600')}`));
    const s = await stack.waitForPod('sidecar', 'sidecar and main running', (x) => running(x, 'proxy') && running(x, 'main'));
    assert.equal(s.phase, 'Running');
    const cts = await stack.containers('sidecar');
    assert.deepEqual(cts.map((c) => c.state).sort(), ['CONTAINER_RUNNING', 'CONTAINER_RUNNING']);
  });

  it('restartPolicy OnFailure with exit 1 restarts with growing delays and shows CrashLoopBackOff', async () => {
    stack.writeManifest('crash', pod('crash', `  restartPolicy: OnFailure\n  containers:\n${container('main', 'exit 1')}`));
    const s = await stack.waitForPod('crash', 'three restarts', (x) => (cs(x, 'main')?.restartCount ?? 0) >= 3, 90_000);
    const seenBackOff = stack.served.some((h) => h.pod === stack.podName('crash') && cs(h.status, 'main')?.state?.waiting?.reason === 'CrashLoopBackOff');
    assert.ok(seenBackOff, 'GET /pods showed CrashLoopBackOff');
    assert.equal(cs(s, 'main')?.lastState?.terminated?.exitCode, 1);
    assert.ok(stack.eventsOf('crash').some((e) => e.reason === 'BackOff'), 'BackOff events were sent');
    // Dead containers beyond the newest are removed from containerd, so the delays are read from the Created events.
    const created = stack.eventsOf('crash').filter((e) => e.reason === 'Created').map((e) => Date.parse(e.timestamp));
    const delays = created.slice(1).map((t, i) => t - (created[i] ?? 0));
    assert.ok(delays.length >= 3, `restarts: ${delays.join(', ')}`);
    // As the kubelet: the first restart is at once, then 2s, 4s, 8s ... (CRASHLOOP_BACKOFF_INITIAL=2s).
    assert.ok((delays[1] ?? 0) >= 1500, `the second restart waited the 2s back-off: ${delays.join(', ')}ms`);
    assert.ok((delays[2] ?? 0) > (delays[1] ?? 0) + 1000, `the delays grow: ${delays.join(', ')}ms`);
    stack.removeManifest('crash');
  });

  it('restartPolicy Never: exit 1 ends Failed, exit 0 ends Succeeded', async () => {
    stack.writeManifest('fails', pod('fails', `  restartPolicy: Never\n  containers:\n${container('main', 'exit 1')}`));
    stack.writeManifest('works', pod('works', `  restartPolicy: Never\n  containers:\n${container('main', 'exit 0')}`));
    const failed = await stack.waitForPod('fails', 'Failed', (x) => x.phase === 'Failed');
    const ok = await stack.waitForPod('works', 'Succeeded', (x) => x.phase === 'Succeeded');
    assert.equal(cs(failed, 'main')?.state?.terminated?.exitCode, 1);
    assert.equal(cs(ok, 'main')?.state?.terminated?.exitCode, 0);
    assert.equal(cs(ok, 'main')?.restartCount, 0);
  });

  it('an absent image with pull policy Never gives ErrImageNeverPull', async () => {
    stack.writeManifest('nopull', pod('nopull', `  containers:\n    - name: main\n      image: localhost/kubelet-split/absent:1\n      imagePullPolicy: Never\n`));
    const s = await stack.waitForPod('nopull', 'ErrImageNeverPull', (x) => cs(x, 'main')?.state?.waiting?.reason === 'ErrImageNeverPull');
    assert.match(cs(s, 'main')?.state?.waiting?.message ?? '', /is not present with pull policy of Never/);
    stack.removeManifest('nopull');
  });

  it('deleting the manifest runs preStop and stops within the grace period', async () => {
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
    // A 3s grace period (the container ignores SIGTERM), plus the file check and a relist.
    assert.ok(took < 12_000, `stopped after ${took}ms`);
    await stack.waitFor('the sandbox to be removed', async () => ((await stack.sandboxes('grace')).length === 0 ? true : undefined));
    assert.ok(stack.eventsOf('grace').some((e) => e.reason === 'Killing'));
  });

  it('activeDeadlineSeconds fails the pod with DeadlineExceeded', async () => {
    stack.writeManifest('deadline', pod('deadline', `  activeDeadlineSeconds: 3\n  containers:\n${container('main', 'sleep 3600')}`));
    const s = await stack.waitForPod('deadline', 'Failed', (x) => x.phase === 'Failed', 40_000);
    assert.equal(s.reason, 'DeadlineExceeded');
    await stack.waitFor('its containers to stop', async () => ((await stack.containers('deadline')).every((c) => c.state !== 'CONTAINER_RUNNING') ? true : undefined));
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

  it('a static pod removed and added again (same UID) runs again in containerd', async () => {
    const spec = pod('again', `  containers:\n${container('main', 'sleep 3600')}`);
    stack.writeManifest('again', spec);
    const first = await stack.waitForPod('again', 'Running', (x) => running(x, 'main'));
    stack.removeManifest('again');
    await stack.waitFor('the sandbox to be removed', async () => ((await stack.sandboxes('again')).length === 0 ? true : undefined));
    stack.writeManifest('again', spec);
    const again = await stack.waitFor('a new container of the pod running in containerd', async () => (await stack.containers('again')).find((c) => c.state === 'CONTAINER_RUNNING' && `containerd://${c.id}` !== cs(first, 'main')?.containerID), 60_000);
    assert.equal(again.labels['io.kubernetes.container.name'], 'main');
  });

  it(
    'GET /pods shows the static pod added again Running, with its new container',
    async () => {
      const [live] = (await stack.containers('again')).filter((c) => c.state === 'CONTAINER_RUNNING');
      assert.ok(live, 'the pod runs again in containerd');
      const s = await stack.waitForPod('again', 'Running with the new container', (x) => running(x, 'main') && cs(x, 'main')?.containerID === `containerd://${live.id}`, 15_000);
      assert.equal(s.phase, 'Running');
    },
  );

  it('the pod-worker exports the kubelet metrics', async () => {
    const [, pw] = [...stack.procs.entries()].find(([k]) => k.startsWith('pod-worker')) ?? [];
    assert.ok(pw);
    const text = await (await fetch(`http://127.0.0.1:${pw.port}/metrics`)).text();
    assert.match(text, /kubelet_started_containers_total\{[^}]*container_type="container"[^}]*\} [1-9]/);
    assert.match(text, /kubelet_started_pods_total\{[^}]*\} [1-9]/);
    assert.match(text, /kubelet_pod_start_duration_seconds_count\{[^}]*\} [1-9]/);
    assert.match(text, /kubelet_pod_worker_duration_seconds_count\{[^}]*operation_type="sync"[^}]*\} [1-9]/);
    assert.match(text, /kubelet_working_pods\{[^}]*lifecycle="sync"[^}]*\} [1-9]/);
    assert.match(text, /kubelet_restarted_pods_total\{[^}]*static="true"[^}]*\} [1-9]/);
  });

  it('the pod-worker killed mid-sync and restarted: exactly one sandbox and one container per name', async () => {
    const [pw] = [...stack.procs.entries()].filter(([k]) => k.startsWith('pod-worker'));
    assert.ok(pw);
    stack.writeManifest('restart', pod('restart', `  containers:\n${container('a', 'sleep 3600')}${container('b', 'sleep 3600')}`));
    // Kill it as soon as the pod's sandbox exists: the sync is under way.
    await stack.waitFor('the sandbox', async () => ((await stack.sandboxes('restart')).length > 0 ? true : undefined));
    pw[1].process.kill('SIGKILL');
    await new Promise((r) => pw[1].process.once('exit', r));
    stack.procs.delete(pw[0]);
    await stack.startService('pod-worker', '1');
    await stack.waitForPod('restart', 'both running', (x) => running(x, 'a') && running(x, 'b'), 60_000);
    await new Promise((r) => setTimeout(r, 3000)); // a few more syncs
    const sandboxes = await stack.sandboxes('restart');
    assert.equal(sandboxes.length, 1, `sandboxes: ${sandboxes.map((s) => `${s.id.slice(0, 12)} ${s.state}`).join(', ')}`);
    const cts = await stack.containers('restart');
    const names = cts.map((c) => c.labels['io.kubernetes.container.name']).sort();
    assert.deepEqual(names, ['a', 'b'], cts.map((c) => `${c.metadata?.name ?? ''}#${c.metadata?.attempt ?? ''} ${c.state} ${c.id.slice(0, 12)} sb=${c.podSandboxId.slice(0, 12)} created=${c.createdAt}`).join('\n'));
  });
});
