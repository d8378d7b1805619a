/**
 * What a finished API pod leaves on the node and in the apiserver (issue 28,
 * items 3, 4 and one of 6), on a real kube-apiserver and the real containerd,
 * as upstream's kubelet v1.34 leaves it:
 *  - a pod on the pod network that Succeeded keeps its podIP, in the API and
 *    in /pods, after its sandbox stopped (pleg/generic.go getPodIPs,
 *    kubelet.go preserveDataFromBeforeStopping);
 *  - while it stays in the API, its exited container and its last sandbox
 *    stay in containerd (SyncTerminatedPod leaves them to the container GC,
 *    kuberuntime_gc.go), and its log is read from that container;
 *  - a deleted pod is gone from the API only once its volumes are torn down
 *    (TerminatePod is SyncTerminatedPod's last step), and its sandbox and
 *    container are removed from containerd after that;
 *  - a phase set to Failed in the API by someone else is the pod's phase
 *    from then on: the pod is terminated, and the kubelet never writes
 *    Running back (kubelet_pods.go generateAPIPodStatus: "API phase was
 *    terminal", "pods are not allowed to transition out of terminal phases").
 * The pod worker resyncs every 3 s here (SYNC_FREQUENCY, upstream's
 * --sync-frequency, 1 min by default), so that the last test does not wait a
 * minute for the sync that reads the API's phase.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { isNotFound, PatchType, type WatchEvent } from '@app/apiserver';
import type { Pod, PodSpec } from '@app/contracts';
import { startControlPlane, type ControlPlane } from './support/control-plane.js';
import { NodeStack } from './support/node-stack.js';

const NODE = 'node-finished';
const NS = 'default';
const IMAGE = 'localhost/kubelet-split/busybox:1.35';
const SLEEPER = 'trap "exit 0" TERM; while true; do sleep 1; done';
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe('finished API pods: their IP, their containers, their deletion and a terminal phase set in the API', { timeout: 300_000 }, () => {
  let cp: ControlPlane;
  let stack: NodeStack;
  const podsPath = `/api/v1/namespaces/${NS}/pods`;
  const getPod = (name: string) => cp.admin.request<Pod>(`${podsPath}/${name}`);
  const createPod = (name: string, spec: Partial<PodSpec> & { command: string; mounts?: { name: string; mountPath: string }[] }) => {
    const { command, mounts, ...rest } = spec;
    const pod: Pod = {
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name, namespace: NS },
      spec: {
        nodeName: NODE,
        automountServiceAccountToken: false,
        enableServiceLinks: false,
        terminationGracePeriodSeconds: 5,
        containers: [{ name: 'app', image: IMAGE, imagePullPolicy: 'IfNotPresent', command: ['sh', '-c', command], ...(mounts ? { volumeMounts: mounts } : {}) }],
        ...rest,
      },
    };
    return cp.admin.request<Pod>(podsPath, { method: 'POST', body: pod });
  };
  const waitForApiPod = (name: string, what: string, pred: (p: Pod) => boolean, timeoutMs = 60_000) =>
    stack.waitFor(`${name} ${what} in the apiserver`, async () => {
      const p = await getPod(name);
      return pred(p) ? p : undefined;
    }, timeoutMs);
  const byPod = (name: string) => ({ filter: { labelSelector: { 'io.kubernetes.pod.name': name, 'io.kubernetes.pod.namespace': NS } } });
  const containersOf = async (name: string) => (await stack.cri.runtime('ListContainers', byPod(name))).containers;
  const sandboxesOf = async (name: string) => (await stack.cri.runtime('ListPodSandbox', byPod(name))).items;
  /** The pod's directory (its volumes) under the pod worker's POD_ROOT_DIR. */
  const podDir = (uid: string) => join(stack.dir, 'pods', uid);
  /** The final status the pod worker sent (TerminatePod): SyncTerminatedPod has run. */
  const terminated = (name: string) => stack.history.find((h) => h.pod === name && h.verb === 'TerminatePod')?.status;
  const served = async (name: string) => (await stack.podList()).items.find((p) => p.metadata?.name === name && p.metadata.namespace === NS);

  before(async () => {
    cp = await startControlPlane({ nodes: [NODE] });
    stack = new NodeStack({
      node: NODE,
      services: ['cri-gateway', 'pleg', 'sync-loop', 'status-manager', 'pod-worker', 'config-source'],
      kubeconfig: cp.kubeconfig(NODE),
      env: { 'pod-worker': { SYNC_FREQUENCY: '3s' } },
    });
    await stack.start();
  });

  after(async () => {
    try {
      if (cp && stack?.nc) {
        const left = await cp.admin.request<{ items: Pod[] }>(podsPath).catch(() => ({ items: [] as Pod[] }));
        for (const p of left.items) {
          await cp.admin.request(`${podsPath}/${p.metadata.name ?? ''}`, { method: 'DELETE' }).catch((err: unknown) => {
            if (!isNotFound(err)) throw err;
          });
        }
        await stack.waitFor('every API pod of the test gone from the apiserver', async () => ((await cp.admin.request<{ items: Pod[] }>(podsPath)).items.length === 0 ? true : undefined), 60_000);
      }
      await stack?.stop();
    } finally {
      await cp?.stop();
    }
  });

  it('a pod on the pod network that Succeeded keeps its podIP in the API and in /pods once its sandbox stopped', async (t) => {
    await createPod('done', { restartPolicy: 'Never', command: 'sleep 2; echo finished' });
    const running = await waitForApiPod('done', 'Running with a pod IP', (p) => p.status?.phase === 'Running' && !!p.status.podIP);
    const ip = running.status?.podIP ?? '';
    assert.match(ip, /^\d+\.\d+\.\d+\.\d+$/);
    assert.notEqual(ip, running.status?.hostIP, 'a pod-network pod has its own IP');
    const final = await stack.waitFor('done\'s final status (TerminatePod)', () => terminated('done'), 60_000);
    t.diagnostic(`final status: phase ${final.phase ?? ''}, podIP ${final.podIP ?? '(none)'}`);
    // The sandbox is stopped by now: what containerd says of its network is no longer the pod's IP.
    const [sandbox] = await sandboxesOf('done');
    t.diagnostic(`sandbox ${sandbox ? sandbox.state : '(removed)'}`);
    // The API has the final status once its container reads terminated there.
    const api = await waitForApiPod('done', 'Succeeded with its final container status', (p) => p.status?.phase === 'Succeeded' && p.status.containerStatuses?.[0]?.state?.terminated?.reason === 'Completed');
    const node = await served('done');
    t.diagnostic(`API podIP ${api.status?.podIP ?? '(none)'}, /pods podIP ${node?.status?.podIP ?? '(none)'} (was ${ip} while Running)`);
    assert.equal(final.podIP, ip, 'the final status keeps the pod IP');
    assert.deepEqual(final.podIPs, [{ ip }]);
    assert.equal(api.status?.podIP, ip, 'the API keeps the pod IP');
    assert.deepEqual(api.status?.podIPs, [{ ip }]);
    assert.equal(node?.status?.podIP, ip, '/pods keeps the pod IP');
  });

  it('a pod that Succeeded keeps its exited container and its last sandbox in containerd while it is in the API, and its log comes from that container', async (t) => {
    await createPod('kept', { restartPolicy: 'Never', hostNetwork: true, command: 'echo hello from kept' });
    const api = await waitForApiPod('kept', 'Succeeded', (p) => p.status?.phase === 'Succeeded' && p.status.containerStatuses?.[0]?.state?.terminated !== undefined);
    const succeededAt = Date.now();
    const uid = api.metadata.uid ?? '';
    const id = (api.status?.containerStatuses?.[0]?.containerID ?? '').replace(/^containerd:\/\//, '');
    assert.ok(id, 'the API names the container');
    // SyncTerminatedPod is done, in either order of its steps, once the final status was sent and the pod's directory is gone.
    await stack.waitFor('kept\'s final status sent and its directory removed', () => (terminated('kept') && !existsSync(podDir(uid)) ? true : undefined), 60_000);
    // Then as the issue looked: 8 s after Succeeded (four housekeeping passes).
    await sleep(Math.max(0, succeededAt + 8000 - Date.now()));
    const [containers, sandboxes] = await Promise.all([containersOf('kept'), sandboxesOf('kept')]);
    t.diagnostic(`${Math.round((Date.now() - succeededAt) / 1000)} s after Succeeded: containers ${JSON.stringify(containers.map((c) => `${c.id.slice(0, 12)}:${c.state}`))}, sandboxes ${JSON.stringify(sandboxes.map((s) => `${s.id.slice(0, 12)}:${s.state}`))}`);
    assert.deepEqual(containers.map((c) => [c.id, c.state]), [[id, 'CONTAINER_EXITED']], 'the exited container is still in containerd');
    assert.deepEqual(sandboxes.map((s) => s.state), ['SANDBOX_NOTREADY'], 'its last sandbox is still there, stopped');
    const res = await fetch(`${stack.api}/containerLogs/${NS}/kept/app`);
    assert.equal(res.status, 200);
    assert.equal(await res.text(), 'hello from kept\n');
  });

  it('a deleted API pod leaves the API only once its volumes are torn down; its sandbox and container go after that', async (t) => {
    // An emptyDir with some thousands of files: its teardown takes a while, the window the deletion must not fall into.
    await createPod('cleaned', {
      hostNetwork: true,
      volumes: [{ name: 'scratch', emptyDir: {} }],
      mounts: [{ name: 'scratch', mountPath: '/scratch' }],
      command: `cd /scratch && for d in 0 1 2 3 4 5 6 7 8 9; do mkdir $d; for f in $(seq 1 400); do echo $f > $d/$f; done; done; ${SLEEPER}`,
    });
    const running = await waitForApiPod('cleaned', 'Running', (x) => x.status?.phase === 'Running');
    const uid = running.metadata.uid ?? '';
    await stack.waitFor('the 4000 files written', () => (existsSync(join(podDir(uid), 'volumes', 'kubernetes.io~empty-dir', 'scratch', '9', '400')) ? true : undefined), 60_000);
    let dirAtDeletion: boolean | undefined;
    let deletedAt = 0;
    const watching = new AbortController();
    const seen: WatchEvent<Pod>[] = [];
    const watch = cp.admin
      .watch<Pod>(podsPath, { fieldSelector: 'metadata.name=cleaned', resourceVersion: running.metadata.resourceVersion }, (e) => {
        seen.push(e);
        if (e.type !== 'DELETED' || dirAtDeletion !== undefined) return;
        // At the very moment the apiserver says the object is gone: is the pod's volume directory still on the node?
        dirAtDeletion = existsSync(podDir(uid));
        deletedAt = Date.now();
      }, watching.signal)
      .catch(() => undefined);
    await cp.admin.request(`${podsPath}/cleaned`, { method: 'DELETE' });
    try {
      await stack.waitFor('the DELETED event of cleaned', () => (dirAtDeletion !== undefined ? true : undefined), 60_000);
    } finally {
      watching.abort();
      await watch;
    }
    const dirGoneAfterMs = await stack.waitFor('cleaned\'s directory gone', () => (!existsSync(podDir(uid)) ? Date.now() - deletedAt : undefined), 60_000);
    t.diagnostic(`at the API's DELETED event the pod directory was ${dirAtDeletion ? 'still there' : 'gone'}; it was gone ${dirAtDeletion ? `${dirGoneAfterMs} ms after` : 'before'}`);
    assert.equal(dirAtDeletion, false, 'the pod\'s volumes were torn down before the API object was deleted');
    const goneAfterMs = await stack.waitFor('cleaned\'s sandbox and container removed from containerd', async () => ((await containersOf('cleaned')).length === 0 && (await sandboxesOf('cleaned')).length === 0 ? Date.now() - deletedAt : undefined), 30_000);
    t.diagnostic(`sandbox and container removed ${goneAfterMs} ms after the API object`);
  });

  it('a phase set to Failed in the API by someone else stays Failed, and the pod is terminated', async (t) => {
    await createPod('overruled', { hostNetwork: true, command: SLEEPER });
    await waitForApiPod('overruled', 'Running', (p) => p.status?.phase === 'Running');
    const [live] = (await containersOf('overruled')).filter((c) => c.state === 'CONTAINER_RUNNING');
    assert.ok(live, 'its container runs');
    // What a controller does (kubectl patch --subresource=status): the pod failed, for a reason of its own.
    const t0 = Date.now();
    await cp.admin.request(`${podsPath}/overruled/status`, { method: 'PATCH', contentType: PatchType.strategicMerge, body: { status: { phase: 'Failed', reason: 'Overruled', message: 'failed by the test' } } });
    const phases: string[] = [];
    const stopped = await stack
      .waitFor('overruled\'s container stopped in containerd', async () => {
        const phase = (await getPod('overruled')).status?.phase ?? '';
        if (phases.at(-1) !== phase) phases.push(phase);
        return (await containersOf('overruled')).every((c) => c.state !== 'CONTAINER_RUNNING') ? Date.now() - t0 : undefined;
      }, 40_000)
      .catch((err: unknown) => {
        t.diagnostic(`API phases seen after the patch: ${phases.join(' -> ')}`);
        throw err;
      });
    t.diagnostic(`container stopped ${stopped} ms after the patch; API phases seen meanwhile: ${phases.join(' -> ')}`);
    const final = await stack.waitFor('overruled\'s final status (TerminatePod)', () => terminated('overruled'), 30_000);
    const api = await waitForApiPod('overruled', 'with its container terminated', (p) => {
      if (phases.at(-1) !== p.status?.phase) phases.push(p.status?.phase ?? '');
      return p.status?.containerStatuses?.[0]?.state?.terminated !== undefined;
    }, 30_000);
    t.diagnostic(`final ${final.phase ?? ''}/${final.reason ?? ''}; API ${api.status?.phase ?? ''}/${api.status?.reason ?? ''}`);
    // Upstream keeps the reason only with the phase it had (Running here): the phase is what holds.
    assert.deepEqual(phases, ['Failed'], 'the API never showed another phase after Failed');
    assert.equal(final.phase, 'Failed');
    assert.equal(api.status?.phase, 'Failed');
  });
});
