/**
 * Pods of a real cluster on the node (a real kube-apiserver and etcd, the
 * stack on the real containerd, config-source and status-manager with the
 * node's own credentials under Node authorization and NodeRestriction):
 * what `kubectl get pods`, `kubectl delete pod` and `kubectl get events`
 * show.
 *  - a pod created in the API and bound to the node runs, and the API shows
 *    it Running and Ready with its pod IP (a hostNetwork pod: the host's)
 *    and its container statuses;
 *  - deleting it in the API gives its container its grace period, then the
 *    object is gone from the API;
 *  - a readiness probe flipping: the API's Ready condition follows within a
 *    probe period (and a slack for a loaded machine), not at a resync;
 *  - a pod refused at admission is Failed in the API with the reason and a
 *    Warning event, and nothing else is disturbed;
 *  - the pods' events are in the API, a repeated one counted;
 *  - a static pod's status is its mirror pod's;
 *  - a KUBECONFIG that cannot be used stops the status manager at boot.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { isNotFound, type ApiServer, type WatchEvent } from '@app/apiserver';
import type { Event, Pod, PodSpec } from '@app/contracts';
import { freePort, runServiceToExit } from '../deploy/local/stack.js';
import { startControlPlane, type ControlPlane } from './support/control-plane.js';
import { NodeStack } from './support/node-stack.js';

const NODE = 'node-api';
const NS = 'default';
const IMAGE = 'localhost/kubelet-split/busybox:1.35';
/** A container that stops at once on SIGTERM. */
const SLEEPER = 'trap "exit 0" TERM; while true; do sleep 1; done';

describe('API pods on the node: their status, deletion and events in the apiserver', { timeout: 420_000 }, () => {
  let cp: ControlPlane;
  let admin: ApiServer;
  let stack: NodeStack;
  const podsPath = `/api/v1/namespaces/${NS}/pods`;

  const getPod = (name: string) => admin.request<Pod>(`${podsPath}/${name}`);
  const ready = (p: Pod | undefined) => p?.status?.conditions?.find((c) => c.type === 'Ready')?.status;
  const createPod = (name: string, spec: Partial<PodSpec> & { command?: string }) => {
    const { command, ...rest } = spec;
    const pod: Pod = {
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name, namespace: NS },
      spec: {
        nodeName: NODE,
        automountServiceAccountToken: false,
        enableServiceLinks: false,
        terminationGracePeriodSeconds: 10,
        containers: [{ name: 'app', image: IMAGE, imagePullPolicy: 'IfNotPresent', command: ['sh', '-c', command ?? SLEEPER] }],
        ...rest,
      },
    };
    return admin.request<Pod>(podsPath, { method: 'POST', body: pod });
  };
  const waitForApiPod = (name: string, what: string, pred: (p: Pod) => boolean, timeoutMs = 60_000) =>
    stack.waitFor(`${name} ${what} in the apiserver`, async () => {
      const p = await getPod(name);
      return pred(p) ? p : undefined;
    }, timeoutMs);
  const eventsOf = async (name: string) =>
    (await admin.request<{ items: Event[] }>(`/api/v1/namespaces/${NS}/events`, { query: { fieldSelector: `involvedObject.name=${name}` } })).items;
  /** The pod's containers in containerd. */
  const containersOf = async (name: string) =>
    (await stack.cri.runtime('ListContainers', { filter: { labelSelector: { 'io.kubernetes.pod.name': name, 'io.kubernetes.pod.namespace': NS } } })).containers;

  before(async () => {
    cp = await startControlPlane({ nodes: [NODE] });
    admin = cp.admin;
    stack = new NodeStack({
      node: NODE,
      services: ['cri-gateway', 'pleg', 'sync-loop', 'status-manager', 'pod-worker', 'prober', 'config-source'],
      kubeconfig: cp.kubeconfig(NODE),
      env: { 'status-manager': { LOG_LEVEL: process.env['KS_E2E_STATUS_LOG_LEVEL'] ?? process.env['KS_E2E_LOG_LEVEL'] ?? 'warn' } },
    });
    await stack.start();
  });

  after(async () => {
    try {
      if (admin) {
        const left = (await admin.request<{ items: Pod[] }>(podsPath)).items;
        for (const p of left) await admin.request(`${podsPath}/${p.metadata.name ?? ''}`, { method: 'DELETE' }).catch(() => undefined);
        await stack.waitFor('every API pod of the test gone from the apiserver', async () => ((await admin.request<{ items: Pod[] }>(podsPath)).items.length === 0 ? true : undefined), 60_000);
      }
    } finally {
      try {
        await stack?.stop();
      } finally {
        await cp?.stop();
      }
    }
  });

  it('a pod bound to the node runs, and the API shows it Running and Ready with its pod IP and container statuses', async () => {
    await createPod('web', {});
    await createPod('web-host', { hostNetwork: true });
    const pod = await waitForApiPod('web', 'Running and Ready', (p) => p.status?.phase === 'Running' && ready(p) === 'True');
    const status = pod.status ?? {};
    assert.equal(status.hostIP, '127.0.0.1');
    assert.match(status.podIP ?? '', /^\d+\.\d+\.\d+\.\d+$/);
    assert.notEqual(status.podIP, status.hostIP, 'a pod-network pod has its own IP');
    assert.deepEqual(status.podIPs, [{ ip: status.podIP }]);
    assert.ok(status.startTime);
    const cs = status.containerStatuses?.[0];
    assert.equal(cs?.name, 'app');
    assert.equal(cs?.ready, true);
    assert.equal(cs?.started, true);
    assert.equal(cs?.restartCount, 0);
    assert.ok(cs?.state?.running?.startedAt);
    assert.equal(cs?.image, IMAGE);
    const id = /^containerd:\/\/([0-9a-f]+)$/.exec(cs?.containerID ?? '')?.[1];
    assert.ok(id, `a containerd container ID: ${cs?.containerID ?? ''}`);
    const running = (await containersOf('web')).find((c) => c.id === id);
    assert.equal(running?.state, 'CONTAINER_RUNNING', 'the API\'s container runs in containerd');
    for (const type of ['Initialized', 'ContainersReady', 'PodReadyToStartContainers', 'PodScheduled']) {
      assert.equal(status.conditions?.find((c) => c.type === type)?.status, 'True', type);
    }

    const host = await waitForApiPod('web-host', 'Running and Ready', (p) => p.status?.phase === 'Running' && ready(p) === 'True');
    assert.equal(host.status?.podIP, '127.0.0.1', 'a hostNetwork pod has the host\'s IP');
    assert.deepEqual(host.status?.podIPs, [{ ip: '127.0.0.1' }]);
  });

  it('deleting it in the API gives its container its grace period, then the object is gone from the API', async () => {
    await createPod('graceful', { command: 'trap "sleep 2; exit 0" TERM; while true; do sleep 1; done' });
    const running = await waitForApiPod('graceful', 'Running', (p) => p.status?.phase === 'Running' && ready(p) === 'True');
    const seen: WatchEvent<Pod>[] = [];
    const watching = new AbortController();
    const watch = admin.watch<Pod>(podsPath, { fieldSelector: 'metadata.name=graceful', resourceVersion: running.metadata.resourceVersion }, (e) => void seen.push(e), watching.signal).catch(() => undefined);
    const t0 = Date.now();
    await admin.request(`${podsPath}/graceful`, { method: 'DELETE' });
    await stack.waitFor('graceful gone from the apiserver', () => getPod('graceful').then(() => undefined, (err: unknown) => (isNotFound(err) ? true : undefined)), 60_000);
    const tookMs = Date.now() - t0;
    // The GET that saw it gone can come before the watch's DELETED event: wait for that event (a race in the test, not the node).
    await stack.waitFor('the watch\'s DELETED event', () => (seen.some((e) => e.type === 'DELETED') ? true : undefined), 10_000);
    watching.abort();
    await watch;
    process.stdout.write(`# deleted in the API: gone ${tookMs} ms later (the container's SIGTERM handler takes 2 s)\n`);
    assert.ok(tookMs >= 2000, `gone after ${tookMs} ms: the container was given its grace`);
    assert.equal(seen.at(-1)?.type, 'DELETED');
    const last = [...seen].reverse().find((e) => e.type === 'MODIFIED' && e.object.status?.containerStatuses?.[0]?.state?.terminated)?.object;
    const terminated = last?.status?.containerStatuses?.[0]?.state?.terminated;
    assert.equal(terminated?.exitCode, 0, `the container ran its SIGTERM handler and exited by itself: ${JSON.stringify(terminated)}`);
    assert.ok(last?.status?.phase === 'Succeeded' || last?.status?.phase === 'Failed', `the final status is terminal: ${last?.status?.phase ?? ''}`);
    await stack.waitFor('graceful to leave containerd', async () => ((await containersOf('graceful')).length === 0 ? true : undefined), 30_000);
  });

  it('a readiness probe flipping: the Ready condition in the API follows within a probe period (and a slack), not at a resync', async () => {
    const periodMs = 2000;
    // The next probe comes within a period; its ExecSync, the result's way to the status manager and its patch take
    // a few hundred ms on an idle machine, seconds on a loaded one. The bound is generous against that, and still
    // well under the status manager's 10 s resync, which is what a flip that only a resync carries would wait for.
    const boundMs = periodMs + 4000;
    await createPod('flip', {
      containers: [
        {
          name: 'app',
          image: IMAGE,
          imagePullPolicy: 'IfNotPresent',
          command: ['sh', '-c', `touch /tmp/ready; ${SLEEPER}`],
          readinessProbe: { exec: { command: ['cat', '/tmp/ready'] }, periodSeconds: periodMs / 1000, failureThreshold: 1, successThreshold: 1 },
        },
      ],
    });
    const pod = await waitForApiPod('flip', 'Ready', (p) => ready(p) === 'True');
    const containerId = (pod.status?.containerStatuses?.[0]?.containerID ?? '').replace('containerd://', '');
    const exec = (cmd: string[]) => stack.cri.runtime('ExecSync', { containerId, cmd, timeout: '5' });
    const flip = async (cmd: string[], to: 'True' | 'False') => {
      await exec(cmd);
      const t0 = Date.now();
      await waitForApiPod('flip', `Ready=${to}`, (p) => ready(p) === to, 15_000);
      return Date.now() - t0;
    };
    const notReadyMs = await flip(['rm', '/tmp/ready'], 'False');
    const readyMs = await flip(['touch', '/tmp/ready'], 'True');
    process.stdout.write(`# readiness in the API: Ready=False ${notReadyMs} ms, Ready=True ${readyMs} ms after the flip (period ${periodMs} ms)\n`);
    assert.ok(notReadyMs <= boundMs, `Ready=False after ${notReadyMs} ms (bound ${boundMs} ms)`);
    assert.ok(readyMs <= boundMs, `Ready=True after ${readyMs} ms (bound ${boundMs} ms)`);
    const flipped = await getPod('flip');
    assert.equal(flipped.status?.conditions?.find((c) => c.type === 'ContainersReady')?.status, 'True');
    assert.equal(flipped.status?.containerStatuses?.[0]?.ready, true);
  });

  it('a pod refused at admission is Failed in the API with the reason and a Warning event; nothing else is disturbed', async () => {
    const before = await waitForApiPod('web-host', 'Running and Ready', (p) => p.status?.phase === 'Running' && ready(p) === 'True');
    await createPod('picky', { nodeSelector: { disktype: 'ssd' } });
    const failed = await waitForApiPod('picky', 'Failed', (p) => p.status?.phase === 'Failed', 30_000);
    assert.equal(failed.status?.reason, 'NodeAffinity');
    assert.match(failed.status?.message ?? '', /^Pod was rejected: /);
    const warning = await stack.waitFor('the Warning event of picky in the apiserver', async () => (await eventsOf('picky')).find((e) => e.type === 'Warning' && e.reason === 'NodeAffinity'), 30_000);
    assert.equal(warning.involvedObject.uid, failed.metadata.uid);
    assert.equal(warning.source?.host, NODE);
    assert.deepEqual(await containersOf('picky'), [], 'nothing of it ran');
    const after = await getPod('web-host');
    assert.equal(after.status?.phase, 'Running');
    assert.equal(ready(after), 'True');
    assert.equal(after.status?.containerStatuses?.[0]?.containerID, before.status?.containerStatuses?.[0]?.containerID, 'the other pod\'s container is the same');
    assert.equal(after.status?.containerStatuses?.[0]?.restartCount, 0);

    // Deleted in the API (kubectl delete), the rejected pod goes away: it never ran, so nothing waits for its grace.
    await admin.request(`${podsPath}/picky`, { method: 'DELETE' });
    await stack.waitFor('the rejected picky gone from the apiserver', () => getPod('picky').then(() => undefined, (err: unknown) => (isNotFound(err) ? true : undefined)), 30_000);
  });

  it('the pods\' events are in the API from the kubelet on this node, and a repeated one is counted', async () => {
    const host = await getPod('web-host');
    const events = await stack.waitFor('Created and Started events of web-host in the apiserver', async () => {
      const es = await eventsOf('web-host');
      return es.some((e) => e.reason === 'Created') && es.some((e) => e.reason === 'Started') ? es : undefined;
    }, 30_000);
    for (const reason of ['Created', 'Started']) {
      const e = events.find((x) => x.reason === reason);
      assert.equal(e?.type, 'Normal');
      assert.equal(e?.count, 1);
      assert.deepEqual([e?.involvedObject.kind, e?.involvedObject.uid, e?.involvedObject.fieldPath], ['Pod', host.metadata.uid, 'spec.containers{app}']);
      assert.deepEqual([e?.source?.component, e?.source?.host, e?.reportingComponent, e?.reportingInstance], ['kubelet', NODE, 'kubelet', NODE]);
    }

    // A container that exits at once is started again and again (at once, then after 10 s of back-off): the same Started event, counted.
    await createPod('crash', { command: 'exit 1' });
    const started = await stack.waitFor('the Started event of crash counted three times', async () => (await eventsOf('crash')).find((e) => e.reason === 'Started' && (e.count ?? 0) >= 3), 90_000);
    const all = await eventsOf('crash');
    assert.equal(all.filter((e) => e.reason === 'Started').length, 1, 'one Started event, counted');
    assert.ok(Date.parse(started.lastTimestamp ?? '') > Date.parse(started.firstTimestamp ?? ''), 'lastTimestamp moves on');
    const backOff = all.find((e) => e.reason === 'BackOff');
    assert.equal(backOff?.type, 'Warning');
  });

  it('a static pod\'s status goes to its mirror pod in the API: Running and Ready with the static pod\'s containers', async () => {
    const name = stack.podName('mirrored');
    stack.writeManifest('mirrored', `apiVersion: v1\nkind: Pod\nmetadata:\n  name: mirrored\nspec:\n  hostNetwork: true\n  terminationGracePeriodSeconds: 2\n  containers:\n    - name: app\n      image: ${IMAGE}\n      command: ["sh", "-c", ${JSON.stringify(SLEEPER)}]\n`);
    const mirror = await waitForApiPod(name, 'mirror pod Running and Ready', (p) => p.metadata.annotations?.['kubernetes.io/config.mirror'] !== undefined && p.status?.phase === 'Running' && ready(p) === 'True');
    const id = (mirror.status?.containerStatuses?.[0]?.containerID ?? '').replace('containerd://', '');
    const [running] = (await stack.containers('mirrored')).filter((c) => c.state === 'CONTAINER_RUNNING');
    assert.equal(id, running?.id, 'the mirror pod shows the static pod\'s container');
    assert.equal(mirror.status?.podIP, '127.0.0.1');
    stack.removeManifest('mirrored');
    await stack.waitFor('the mirror pod gone from the API', () => getPod(name).then(() => undefined, (err: unknown) => (isNotFound(err) ? true : undefined)), 60_000);
  });

  it('a KUBECONFIG that cannot be used stops status-manager at boot, naming it (exit 1)', async () => {
    const noCluster = join(stack.dir, 'no-cluster.kubeconfig');
    writeFileSync(noCluster, 'apiVersion: v1\nkind: Config\nclusters: []\ncontexts: []\nusers: []\n');
    for (const [path, why] of [
      [join(stack.dir, 'no-such-kubeconfig'), /ENOENT/],
      [noCluster, /no current cluster/],
    ] as const) {
      const { code, stderr } = await runServiceToExit('status-manager', {
        NODE_NAME: NODE,
        NATS_URL: stack.nats.url,
        ...stack.nats.credentials.env('status-manager'),
        PORT: String(await freePort()),
        INSTANCE_ID: 'bad-kubeconfig',
        LOG_LEVEL: 'warn',
        KUBECONFIG: path,
      });
      assert.equal(code, 1);
      assert.match(stderr, /^status-manager: invalid configuration:/);
      assert.ok(stderr.includes(`KUBECONFIG cannot be used: KUBECONFIG ${path}`), stderr);
      assert.match(stderr, why);
    }
  });
});
