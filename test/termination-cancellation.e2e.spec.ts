/**
 * How far a kill reaches into what the pod worker is doing, end to end on
 * the real stack joined to a real kube-apiserver (issue 28 item 5). Upstream
 * cancels the pod worker's context (UpdatePod's cancelFn) but runs the
 * runtime's SyncPod with context.WithoutCancel and kills with a background
 * context (kubelet.go SyncPod, SyncTerminatingPod), so that:
 *  - a shorter grace period arriving while a pod terminates (a second
 *    DELETE with a smaller gracePeriodSeconds) does not start the
 *    termination over: the preStop hook runs once per container instance;
 *  - a DELETE while a postStart hook runs lets the hook finish before the
 *    container is killed.
 * What a user would check: what the hooks did, written by them to a file on
 * the host (a hostPath volume), and the container's end in containerd.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Container as ApiContainer, Pod } from 'kubernetes-types/core/v1.js';
import { isNotFound } from '@app/apiserver';
import { startControlPlane, type ControlPlane } from './support/control-plane.js';
import { NodeStack } from './support/node-stack.js';

const NODE = 'cancellation-e2e';
const NS = 'cancellation';
const IMAGE = 'localhost/kubelet-split/busybox:1.35';
/** Appends `<what> <host uptime>` to /host/<file>. */
const note = (file: string, what: string) => `read up rest < /proc/uptime; echo "${what} $up" >> /host/${file}`;

function apiPod(name: string, dir: string, container: Partial<ApiContainer>): Pod {
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name, namespace: NS },
    spec: {
      nodeName: NODE,
      hostNetwork: true,
      automountServiceAccountToken: false,
      terminationGracePeriodSeconds: 30,
      containers: [
        {
          name: 'app',
          image: IMAGE,
          imagePullPolicy: 'IfNotPresent',
          // Ends at once on SIGTERM.
          command: ['sh', '-c', 'trap "exit 0" TERM; while true; do sleep 0.2; done'],
          volumeMounts: [{ name: 'host', mountPath: '/host' }],
          ...container,
        },
      ],
      volumes: [{ name: 'host', hostPath: { path: dir } }],
    },
  };
}

/** The lines of a hook's file, as `[what, uptime]`. */
function notes(path: string): [string, number][] {
  if (!existsSync(path)) return [];
  return readFileSync(path, 'utf8')
    .split('\n')
    .filter((l) => l.trim() !== '')
    .map((l) => {
      const [what = '', at = ''] = l.split(' ');
      return [what, Number(at)];
    });
}

describe('a kill does not cancel the runtime\'s work in flight (SyncPod WithoutCancel, SyncTerminatingPod with a background context)', { timeout: 300_000 }, () => {
  let cp: ControlPlane;
  let stack: NodeStack;
  const podsPath = `/api/v1/namespaces/${NS}/pods`;
  const remove = (name: string, gracePeriodSeconds: number) => cp.admin.request<Pod>(`${podsPath}/${name}`, { method: 'DELETE', query: { gracePeriodSeconds } });
  const appRunning = async (pod: string) =>
    (await stack.cri.runtime('ListContainers', { filter: { labelSelector: { 'io.kubernetes.pod.name': pod, 'io.kubernetes.pod.namespace': NS, 'io.kubernetes.container.name': 'app' } } })).containers.some(
      (c) => c.state === 'CONTAINER_RUNNING',
    );

  before(async () => {
    cp = await startControlPlane({ nodes: [NODE] });
    await cp.createNamespace(NS);
    stack = new NodeStack({ node: NODE, services: ['cri-gateway', 'pleg', 'sync-loop', 'status-manager', 'pod-worker', 'config-source'], kubeconfig: cp.kubeconfig(NODE) });
    await stack.start();
  });

  after(async () => {
    try {
      if (cp && stack?.nc) {
        const left = await cp.admin.request<{ items: Pod[] }>(podsPath).catch(() => ({ items: [] as Pod[] }));
        for (const p of left.items) {
          await remove(p.metadata?.name ?? '', 0).catch((err: unknown) => {
            if (!isNotFound(err)) throw err;
          });
        }
      }
      await stack?.stop();
    } finally {
      await cp?.stop();
    }
  });

  it('a shorter grace period arriving while the preStop hook runs: the hook runs exactly once', async (t) => {
    const file = 'prestop.log';
    const path = join(stack.dir, file);
    await cp.admin.request(podsPath, {
      method: 'POST',
      body: apiPod('prestop', stack.dir, { lifecycle: { preStop: { exec: { command: ['sh', '-c', `${note(file, 'preStop')}; sleep 6`] } } } }),
    });
    await stack.waitFor('app running in containerd', async () => ((await appRunning('prestop')) ? true : undefined), 60_000);

    await remove('prestop', 30);
    await stack.waitFor('the preStop hook started', () => (notes(path).length > 0 ? true : undefined), 30_000);
    const shortenedAt = Date.now();
    const shortened = await remove('prestop', 5);
    assert.equal(shortened.metadata?.deletionGracePeriodSeconds, 5, 'the apiserver took the shorter grace period');

    await stack.waitFor('app stopped in containerd', async () => ((await appRunning('prestop')) ? undefined : true), 60_000);
    const runs = notes(path);
    t.diagnostic(`preStop ran ${runs.length} time(s) (at uptime ${runs.map(([, at]) => at.toFixed(2)).join(', ')}); app stopped ${((Date.now() - shortenedAt) / 1000).toFixed(1)}s after the DELETE with grace 5s`);
    assert.equal(runs.length, 1, 'the preStop hook of one container instance runs once');
  });

  it('a DELETE while the postStart hook runs: the hook finishes before the container is killed', async (t) => {
    const file = 'poststart.log';
    const path = join(stack.dir, file);
    await cp.admin.request(podsPath, {
      method: 'POST',
      body: apiPod('poststart', stack.dir, { lifecycle: { postStart: { exec: { command: ['sh', '-c', `${note(file, 'started')}; sleep 4; ${note(file, 'finished')}`] } } } }),
    });
    await stack.waitFor('the postStart hook started', () => (notes(path).length > 0 ? true : undefined), 60_000);
    await remove('poststart', 30);

    await stack.waitFor('app stopped in containerd', async () => ((await appRunning('poststart')) ? undefined : true), 60_000);
    const seen = notes(path);
    const events = stack.events.filter((e) => e.involvedObject.name === 'poststart').map((e) => e.reason);
    t.diagnostic(`the hook wrote: ${seen.map(([what, at]) => `${what} ${at.toFixed(2)}`).join(', ')}; events: ${events.join(', ')}`);
    assert.deepEqual(seen.map(([what]) => what), ['started', 'finished'], 'the postStart hook ran to its end');
    assert.ok(!events.includes('FailedPostStartHook'), 'no FailedPostStartHook event');
  });
});
