/**
 * The apiserver source on the real stack (real NATS, real containerd) and a
 * real kube-apiserver and etcd (test/support/control-plane.ts): pods created
 * in the API and bound to the node run; a graceful delete gives the
 * containers the deletion's grace period; the apiserver restarting loses
 * nothing and runs nothing twice; a pod the node's admission refuses is
 * Failed with upstream's reason; a mirror pod is never run; a KUBECONFIG
 * that cannot be used stops config-source at boot.
 *
 * Finishing a deletion (the last DELETE with grace 0 once the pod is
 * terminated) is the status manager's (ADR 0013); where this file needs the
 * object gone it deletes it itself, as `kubectl delete --force` would, and
 * tolerates finding it gone already.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { V1Pod } from '@kubernetes/client-node';
import type { Container as ApiContainer, Pod } from 'kubernetes-types/core/v1.js';
import { isNotFound, PatchType } from '@app/apiserver';
import type { PodUpdateMessage } from '@app/contracts';
import type { Container } from '@app/cri';
import { freePort, runServiceToExit } from '../deploy/local/stack.js';
import { startControlPlane, type ControlPlane } from './support/control-plane.js';
import { NodeStack } from './support/node-stack.js';

const NODE = 'api-src-e2e';
const NS = 'api-src';
const IMAGE = 'localhost/kubelet-split/busybox:1.35';
const dec = new TextDecoder();

/** A container that ends at once on SIGTERM (the shell runs the trap between its 1 s sleeps). */
const polite = (name: string): ApiContainer => ({ name, image: IMAGE, command: ['sh', '-c', 'trap "exit 0" TERM; while true; do sleep 1; done'] });
/** A container that ignores SIGTERM: only the SIGKILL at the end of the grace period stops it. */
const stubborn = (name: string): ApiContainer => ({ name, image: IMAGE, command: ['sh', '-c', 'trap "" TERM; while true; do sleep 1; done'] });

function apiPod(name: string, spec: Partial<NonNullable<Pod['spec']>> = {}, metadata: Partial<NonNullable<Pod['metadata']>> = {}): Pod {
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name, namespace: NS, ...metadata },
    spec: {
      nodeName: NODE,
      hostNetwork: true,
      automountServiceAccountToken: false,
      terminationGracePeriodSeconds: 2,
      containers: [polite('main')],
      ...spec,
    },
  };
}

describe('the apiserver source: pods from a real kube-apiserver run on the node', { timeout: 600_000 }, () => {
  let cp: ControlPlane;
  let stack: NodeStack;
  /** Every PodUpdate config-source published: `<op>:<name>`, in order. */
  const published: string[] = [];

  const podsPath = `/api/v1/namespaces/${NS}/pods`;
  const create = (pod: Pod) => cp.admin.request<Pod>(podsPath, { method: 'POST', body: pod });
  const getApi = (name: string) => cp.admin.request<Pod>(`${podsPath}/${name}`);
  const deleteApi = async (name: string, gracePeriodSeconds: number) => {
    try {
      await cp.admin.request(`${podsPath}/${name}`, { method: 'DELETE', query: { gracePeriodSeconds } });
    } catch (err) {
      if (!isNotFound(err)) throw err;
    }
  };
  /** The pod as GET /pods serves it. */
  const served = async (name: string): Promise<V1Pod | undefined> => (await stack.podList()).items.find((p) => p.metadata?.namespace === NS && p.metadata.name === name);
  const waitServed = (name: string, what: string, pred: (p: V1Pod) => boolean, timeoutMs = 60_000) =>
    stack.waitFor(`${name} ${what}`, async () => {
      const p = await served(name);
      return p && pred(p) ? p : undefined;
    }, timeoutMs);
  const containers = async (name: string): Promise<Container[]> =>
    (await stack.cri.runtime('ListContainers', { filter: { labelSelector: { 'io.kubernetes.pod.name': name, 'io.kubernetes.pod.namespace': NS } } })).containers;
  const sandboxes = async (name: string) => (await stack.cri.runtime('ListPodSandbox', { filter: { labelSelector: { 'io.kubernetes.pod.name': name, 'io.kubernetes.pod.namespace': NS } } })).items;
  const running = (p: V1Pod) => p.status?.phase === 'Running' && (p.status.containerStatuses ?? []).length > 0 && (p.status.containerStatuses ?? []).every((c) => c.state?.running !== undefined);
  /** What ran of a pod: its sandboxes' and containers' IDs. */
  const runtimeIds = async (name: string) => ({ sandboxes: (await sandboxes(name)).map((s) => s.id).sort(), containers: (await containers(name)).map((c) => c.id).sort() });

  before(async () => {
    cp = await startControlPlane({ nodes: [NODE] });
    await cp.createNamespace(NS);
    stack = new NodeStack({
      node: NODE,
      services: ['cri-gateway', 'pleg', 'sync-loop', 'status-manager', 'pod-worker', 'config-source'],
      kubeconfig: cp.kubeconfig(NODE),
      // SOURCES_RESYNC_PERIOD: the sync loop checks its pods against config-source's listings every 2 s (what a restarted config-source no longer lists is removed).
      env: { 'sync-loop': { NODE_CPU: '4', NODE_LABELS: 'zone=a', SOURCES_RESYNC_PERIOD: '2s' } },
    });
    await stack.start();
    stack.nc.subscribe(`kubelet.${NODE}.config.*`, {
      callback: (_e, m) => {
        const msg = JSON.parse(dec.decode(m.data)) as PodUpdateMessage;
        for (const p of msg.pods ?? []) published.push(`${msg.op}:${p.metadata.name ?? ''}`);
      },
    });
    await stack.nc.flush();
  });

  after(async () => {
    // Every API pod goes (REMOVE kills what still runs), so NodeStack.stop() finds containerd clean.
    try {
      if (cp && stack?.nc) {
        const left = await cp.admin.request<{ items: Pod[] }>(podsPath).catch(() => ({ items: [] as Pod[] }));
        for (const p of left.items) await deleteApi(p.metadata?.name ?? '', 0);
      }
      await stack?.stop();
    } finally {
      await cp?.stop();
    }
  });

  it('a pod created in the API and bound to the node runs in containerd and is Running in /pods, as an "api" pod with its API UID', async () => {
    const created = await create(apiPod('web'));
    const pod = await waitServed('web', 'Running', running);
    assert.equal(pod.metadata?.uid, created.metadata?.uid);
    assert.equal(pod.metadata?.annotations?.['kubernetes.io/config.source'], 'api');
    assert.ok(pod.metadata?.annotations?.['kubernetes.io/config.seen'], 'config.seen is set');
    const ids = await runtimeIds('web');
    assert.equal(ids.sandboxes.length, 1);
    assert.deepEqual((await containers('web')).map((c) => `${c.metadata?.name ?? ''}:${c.state}`), ['main:CONTAINER_RUNNING']);
    const cs = stack.procs.get('config-source#0');
    const ready = (await (await fetch(`http://127.0.0.1:${cs?.port ?? 0}/readyz`)).json()) as { checks: { sources: { detail: string } } };
    assert.match(ready.checks.sources.detail, /^ready: file \(0 pods\), api \(1 pods\)$/);
    const metrics = await (await fetch(`http://127.0.0.1:${cs?.port ?? 0}/metrics`)).text();
    assert.match(metrics, /^kubelet_split_config_pod_updates_total\{source="api",op="add"[^}]*\} 1$/m);
  });

  it('a label added in the API (UPDATE) and a status condition written by someone else (RECONCILE) restart nothing', async () => {
    const before = await runtimeIds('web');
    await cp.admin.request(`${podsPath}/web`, { method: 'PATCH', contentType: PatchType.merge, body: { metadata: { labels: { tier: 'front' } } } });
    await waitServed('web', 'the new label', (p) => p.metadata?.labels?.['tier'] === 'front', 20_000);
    await cp.admin.request(`${podsPath}/web/status`, {
      method: 'PATCH',
      contentType: PatchType.strategicMerge,
      body: { status: { conditions: [{ type: 'example.com/Checked', status: 'True', lastTransitionTime: new Date().toISOString().replace(/\.\d+Z$/, 'Z') }] } },
    });
    await stack.waitFor('web RECONCILE', () => (published.includes('reconcile:web') ? true : undefined), 20_000);
    assert.ok(published.includes('update:web'), `an UPDATE for the label: ${published.join(' ')}`);
    // Two PLEG relists later, nothing has been started or stopped.
    await new Promise((r) => setTimeout(r, 3000));
    assert.deepEqual(await runtimeIds('web'), before);
    const pod = await served('web');
    assert.equal(pod?.status?.containerStatuses?.[0]?.restartCount, 0);
    assert.ok(running(pod ?? {}));
  });

  it("deleting it in the API with a grace period gives its containers that grace (not the spec's), then it leaves containerd and, once the object is gone, /pods", async () => {
    // The spec says 30 s; the delete says 5 s. `polite` ends on SIGTERM at once, `stubborn` only on the SIGKILL after the grace.
    await create(apiPod('graceful', { terminationGracePeriodSeconds: 30, containers: [polite('polite'), stubborn('stubborn')] }));
    await waitServed('graceful', 'Running', running);
    const t0 = Date.now();
    await deleteApi('graceful', 5);
    const stoppedAfter = new Map<string, number>();
    await stack.waitFor('graceful to leave containerd', async () => {
      const cs = await containers('graceful');
      for (const name of ['polite', 'stubborn']) {
        const c = cs.find((x) => x.metadata?.name === name);
        if (!stoppedAfter.has(name) && c?.state !== 'CONTAINER_RUNNING') stoppedAfter.set(name, Date.now() - t0);
      }
      return cs.length === 0 && (await sandboxes('graceful')).length === 0 ? true : undefined;
    }, 60_000);
    process.stdout.write(`# after a DELETE with grace 5 s: polite stopped within ${stoppedAfter.get('polite')} ms, stubborn within ${stoppedAfter.get('stubborn')} ms\n`);
    // At once: the DELETE's way to the pod worker, and the shell's trap between two 1 s sleeps; a loaded machine adds to
    // both. The bound only has to tell it from the end of the 5 s grace (the stubborn one's lower bound below).
    assert.ok((stoppedAfter.get('polite') ?? Infinity) < 4500, 'the container that ends on SIGTERM ends at once');
    assert.ok((stoppedAfter.get('stubborn') ?? 0) >= 4500, 'the container that ignores SIGTERM is killed only after the 5 s grace');
    assert.ok((stoppedAfter.get('stubborn') ?? Infinity) < 15_000, "the deletion's 5 s, not the spec's 30 s");
    assert.ok(published.includes('delete:graceful'), `a DELETE was published: ${published.join(' ')}`);
    // Its final status: terminated, `polite` by its own exit, `stubborn` by the SIGKILL.
    // (The pod worker's TerminatePod: /pods may have forgotten the pod already, for the status manager deletes a finished pod from the API.)
    const final = await stack.waitFor('graceful terminal', () => stack.history.findLast((h) => h.pod === 'graceful' && h.verb === 'TerminatePod' && (h.status.phase === 'Failed' || h.status.phase === 'Succeeded')), 20_000);
    const exit = (n: string) => final.status.containerStatuses?.find((c) => c.name === n)?.state?.terminated?.exitCode;
    const states = (cs: { name?: string; state?: { terminated?: { exitCode?: number; reason?: string } } }[] | undefined) =>
      (cs ?? []).map((c) => `${c.name ?? ''}=${c.state?.terminated ? `${c.state.terminated.exitCode ?? ''}/${c.state.terminated.reason ?? ''}` : Object.keys(c.state ?? {}).join('')}`).join(',');
    const history = stack.history.filter((h) => h.pod === 'graceful').map((h) => `${h.verb}:${h.status.phase ?? ''}[${states(h.status.containerStatuses)}]`).join(' ');
    assert.equal(exit('polite'), 0, `statuses sent: ${history}`);
    assert.equal(exit('stubborn'), 137, `statuses sent: ${history}`);
    // The object goes (the status manager's last DELETE, or the test's as `kubectl delete --force`): REMOVE, and /pods forgets it.
    await deleteApi('graceful', 0);
    await stack.waitFor('graceful to leave /pods', async () => ((await served('graceful')) === undefined ? true : undefined), 20_000);
    assert.ok(published.includes('remove:graceful'));
    await assert.rejects(getApi('graceful'), (err: unknown) => isNotFound(err));
  });

  it("config-source away while a pod is removed from the API and created again with its name: once back, the old pod (a REMOVE never seen terminating) is killed with its spec's grace, the new one (a new UID) runs once", async () => {
    const first = await create(apiPod('reborn', { terminationGracePeriodSeconds: 4, containers: [stubborn('main')] }));
    await waitServed('reborn', 'Running', running);
    const oldUid = first.metadata?.uid ?? '';
    const key = 'config-source#0';
    await stack.procs.get(key)?.stop(10_000);
    stack.procs.delete(key);
    // Meanwhile: removed at once (as `kubectl delete --force` does) and created again.
    await deleteApi('reborn', 0);
    const second = await create(apiPod('reborn', { terminationGracePeriodSeconds: 4, containers: [stubborn('main')] }));
    const newUid = second.metadata?.uid ?? '';
    assert.notEqual(newUid, oldUid);
    await stack.startService('config-source', '1');
    const byUid = async (uid: string) => (await containers('reborn')).filter((c) => c.labels['io.kubernetes.pod.uid'] === uid);
    let oldStoppedAt: number | undefined;
    // Its containers and its sandbox (the assertions below count the pod's sandboxes): RemovePodSandbox takes the
    // containers first, so the sandbox can still be listed a moment after they are gone.
    await stack.waitFor('the old reborn to leave containerd', async () => {
      const old = await byUid(oldUid);
      if (oldStoppedAt === undefined && !old.some((c) => c.state === 'CONTAINER_RUNNING')) oldStoppedAt = Date.now();
      return old.length === 0 && !(await sandboxes('reborn')).some((sb) => sb.metadata?.uid === oldUid) ? true : undefined;
    }, 60_000);
    const killing = stack.events.find((e) => e.involvedObject.uid === oldUid && e.reason === 'Killing');
    assert.ok(killing, 'a Killing event for the old pod');
    const grace = (oldStoppedAt ?? 0) - Date.parse(killing.timestamp);
    process.stdout.write(`# REMOVE of a pod never seen terminating (spec grace 4 s): stopped ${grace} ms after its Killing event\n`);
    assert.ok(grace >= 3500, "killed only after the spec's 4 s grace");
    assert.ok(grace < 9000, `stopped ${grace} ms after the kill began`);
    const pod = await waitServed('reborn', 'Running with the new UID', (p) => p.metadata?.uid === newUid && running(p));
    assert.equal(pod.status?.containerStatuses?.[0]?.restartCount, 0);
    assert.deepEqual((await sandboxes('reborn')).map((sb) => sb.metadata?.uid), [newUid], 'one sandbox, the new pod');
    assert.equal((await byUid(newUid)).length, 1, 'one container for the new pod');
    assert.ok(!published.includes('delete:reborn'), `never seen terminating: ${published.filter((o) => o.endsWith(':reborn')).join(' ')}`);
  });

  it('the apiserver restarted: config-source reconnects, a pod created as it comes back runs once, the running pod keeps its sandbox and containers, nothing is removed', async () => {
    const before = await runtimeIds('web');
    const mark = published.length;
    await cp.restart({ kill: true, downMs: 3000 });
    // Created before config-source's reflector is back from its back-off: it sees it by its watch or its relist.
    const created = await create(apiPod('latecomer'));
    const late = await waitServed('latecomer', 'Running', running, 60_000);
    assert.equal(late.metadata?.uid, created.metadata?.uid);
    const lateIds = await runtimeIds('latecomer');
    assert.equal(lateIds.sandboxes.length, 1, 'one sandbox');
    assert.equal(lateIds.containers.length, 1, 'one container');
    assert.deepEqual(await runtimeIds('web'), before, 'the running pod kept its sandbox and containers');
    assert.equal((await served('web'))?.status?.containerStatuses?.[0]?.restartCount, 0);
    const during = published.slice(mark);
    assert.deepEqual(during.filter((o) => o.startsWith('remove:') || o.startsWith('delete:')), [], `nothing removed: ${during.join(' ')}`);
    assert.deepEqual(during.filter((o) => o.startsWith('add:')), ['add:latecomer'], 'only the new pod is added');
    // A while later still: the same IDs (nothing ran twice).
    await new Promise((r) => setTimeout(r, 3000));
    assert.deepEqual(await runtimeIds('latecomer'), lateIds);
  });

  it('a pod the node refuses at admission is Failed in /pods with the reason and a Warning event; a mirror pod is never run; the others are undisturbed', async () => {
    const before = await runtimeIds('web');
    await create(apiPod('picky', { nodeSelector: { disktype: 'ssd' } }));
    await create(apiPod('greedy', { containers: [{ ...polite('main'), resources: { requests: { cpu: '16' } } }] }));
    // A mirror pod bound to this node (the apiserver's copy of a static pod): not a pod to run.
    await create(apiPod('mirror-of-static', {}, { annotations: { 'kubernetes.io/config.mirror': 'f00d' } }));
    const picky = await waitServed('picky', 'Failed', (p) => p.status?.phase === 'Failed', 30_000);
    assert.equal(picky.status?.reason, 'NodeAffinity');
    assert.equal(picky.status?.message, "Pod was rejected: Predicate NodeAffinity failed: node(s) didn't match Pod's node affinity/selector");
    const greedy = await waitServed('greedy', 'Failed', (p) => p.status?.phase === 'Failed', 30_000);
    assert.equal(greedy.status?.reason, 'OutOfcpu');
    assert.match(greedy.status?.message ?? '', /^Pod was rejected: Node didn't have enough resource: cpu, requested: 16000, used: \d+, capacity: 4000$/);
    const warnings = stack.events.filter((e) => e.involvedObject.namespace === NS && e.eventType === 'Warning').map((e) => `${e.involvedObject.name}/${e.reason}`);
    assert.ok(warnings.includes('picky/NodeAffinity'), warnings.join(' '));
    assert.ok(warnings.includes('greedy/OutOfcpu'), warnings.join(' '));
    for (const name of ['picky', 'greedy', 'mirror-of-static']) assert.deepEqual(await runtimeIds(name), { sandboxes: [], containers: [] }, `${name} never ran`);
    assert.equal(await served('mirror-of-static'), undefined, 'a mirror pod is not one of the node pods');
    assert.ok(!published.some((o) => o.endsWith(':mirror-of-static')), 'config-source never sent it');
    assert.deepEqual(await runtimeIds('web'), before, 'the running pod is undisturbed');
    assert.ok(running((await served('web')) ?? {}));
  });

  it('a KUBECONFIG that cannot be used stops config-source at boot, naming it (exit 1)', async () => {
    const missing = join(stack.dir, 'no-such-kubeconfig');
    const noContext = join(stack.dir, 'no-context.kubeconfig');
    writeFileSync(noContext, 'apiVersion: v1\nkind: Config\nclusters: []\ncontexts: []\nusers: []\n');
    for (const [path, why] of [
      [missing, /ENOENT/],
      [noContext, /no current cluster/],
    ] as const) {
      const { code, stderr } = await runServiceToExit('config-source', {
        NODE_NAME: NODE,
        NATS_URL: stack.nats.url,
        ...stack.nats.credentials.env('config-source'),
        PORT: String(await freePort()),
        INSTANCE_ID: 'bad-kubeconfig',
        LOG_LEVEL: 'warn',
        KUBECONFIG: path,
      });
      assert.equal(code, 1, stderr);
      assert.ok(stderr.includes(`KUBECONFIG ${path}`), stderr);
      assert.match(stderr, why);
    }
  });
});
