/**
 * What changes of a running API pod reach the node, on the real stack (real
 * NATS, real containerd) joined to a real kube-apiserver and etcd
 * (test/support/control-plane.ts), as upstream's [NodeConformance] specs
 * check them (test/e2e/common/node/ephemeral_containers.go, pods.go):
 *  - an ephemeral container added through the `ephemeralcontainers`
 *    subresource runs beside the pod's container (which is not restarted),
 *    in its target's process namespace, shows in the API's
 *    ephemeralContainerStatuses, and its log is served; a second one added
 *    runs once and is never restarted;
 *  - readiness gates: the pod is not Ready while a gate's condition (set by
 *    someone else in the apiserver) is missing or False, and is Ready once
 *    every gate's is True;
 *  - a Service created before a pod gives its containers the service
 *    environment variables (and the master `kubernetes` service's), read
 *    from the log of the finished container after its sandbox is gone;
 *  - a running pod's labels updated: it keeps running; its
 *    activeDeadlineSeconds set: it fails with DeadlineExceeded.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { Container as ApiContainer, Pod, Service } from 'kubernetes-types/core/v1.js';
import { isNotFound, PatchType } from '@app/apiserver';
import { startControlPlane, type ControlPlane } from './support/control-plane.js';
import { NodeStack } from './support/node-stack.js';

const NODE = 'pod-updates-e2e';
const NS = 'pod-updates';
const IMAGE = 'localhost/kubelet-split/busybox:1.35';
/** A container that ends at once on SIGTERM. */
const SLEEPER = 'trap "exit 0" TERM; while true; do sleep 1; done';
const sleeper = (name: string): ApiContainer => ({ name, image: IMAGE, imagePullPolicy: 'IfNotPresent', command: ['sh', '-c', SLEEPER] });

function apiPod(name: string, spec: Partial<NonNullable<Pod['spec']>> = {}, metadata: Partial<NonNullable<Pod['metadata']>> = {}): Pod {
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name, namespace: NS, ...metadata },
    spec: { nodeName: NODE, hostNetwork: true, automountServiceAccountToken: false, terminationGracePeriodSeconds: 2, containers: [sleeper('app')], ...spec },
  };
}

describe('changes of a running API pod on the node: ephemeral containers, readiness gates, service variables, updates', { timeout: 300_000 }, () => {
  let cp: ControlPlane;
  let stack: NodeStack;
  const podsPath = `/api/v1/namespaces/${NS}/pods`;
  const create = (pod: Pod) => cp.admin.request<Pod>(podsPath, { method: 'POST', body: pod });
  const getPod = (name: string) => cp.admin.request<Pod>(`${podsPath}/${name}`);
  const waitForApiPod = (name: string, what: string, pred: (p: Pod) => boolean, timeoutMs = 60_000) =>
    stack.waitFor(`${name} ${what} in the apiserver`, async () => {
      const p = await getPod(name);
      return pred(p) ? p : undefined;
    }, timeoutMs);
  const ready = (p: Pod) => p.status?.conditions?.find((c) => c.type === 'Ready');
  const running = (p: Pod) => p.status?.phase === 'Running' && (p.status.containerStatuses ?? []).every((c) => c.state?.running !== undefined);
  const logOf = async (pod: string, container: string) => {
    const res = await fetch(`${stack.api}/containerLogs/${NS}/${pod}/${container}`);
    return res.ok ? res.text() : '';
  };
  const containers = async (pod: string, name: string) =>
    (await stack.cri.runtime('ListContainers', { filter: { labelSelector: { 'io.kubernetes.pod.name': pod, 'io.kubernetes.pod.namespace': NS, 'io.kubernetes.container.name': name } } })).containers;

  before(async () => {
    cp = await startControlPlane({ nodes: [NODE] });
    await cp.createNamespace(NS);
    stack = new NodeStack({ node: NODE, services: ['cri-gateway', 'pleg', 'sync-loop', 'status-manager', 'pod-worker', 'prober', 'config-source'], kubeconfig: cp.kubeconfig(NODE) });
    await stack.start();
  });

  after(async () => {
    try {
      if (cp && stack?.nc) {
        const left = await cp.admin.request<{ items: Pod[] }>(podsPath).catch(() => ({ items: [] as Pod[] }));
        for (const p of left.items) {
          await cp.admin.request(`${podsPath}/${p.metadata?.name ?? ''}`, { method: 'DELETE', query: { gracePeriodSeconds: 0 } }).catch((err: unknown) => {
            if (!isNotFound(err)) throw err;
          });
        }
      }
      await stack?.stop();
    } finally {
      await cp?.stop();
    }
  });

  it('ephemeral containers added through the ephemeralcontainers subresource run once, in the target\'s process namespace, and show in the API status', async () => {
    await create(apiPod('target'));
    const before = await waitForApiPod('target', 'Running', running);
    const appId = before.status?.containerStatuses?.[0]?.containerID;
    // What upstream's AddEphemeralContainerSync sends: a strategic-merge patch of the subresource.
    await cp.admin.request(`${podsPath}/target/ephemeralcontainers`, {
      method: 'PATCH',
      contentType: PatchType.strategicMerge,
      body: {
        spec: {
          ephemeralContainers: [
            {
              name: 'debugger',
              image: IMAGE,
              imagePullPolicy: 'IfNotPresent',
              targetContainerName: 'app',
              stdin: true,
              tty: true,
              terminationMessagePolicy: 'File',
              // pid 1 of its process namespace is the target's shell.
              command: ['sh', '-c', 'while true; do echo polo; tr "\\0" " " < /proc/1/cmdline; echo; sleep 2; done'],
            },
          ],
        },
      },
    });
    const withDebugger = await waitForApiPod('target', 'with its ephemeral container running', (p) => p.status?.ephemeralContainerStatuses?.find((c) => c.name === 'debugger')?.state?.running !== undefined, 30_000);
    assert.equal(withDebugger.metadata?.generation, 2);
    assert.equal(withDebugger.status?.containerStatuses?.[0]?.containerID, appId, 'the pod\'s own container was not restarted');
    assert.equal(withDebugger.status?.containerStatuses?.[0]?.restartCount, 0);
    assert.equal(withDebugger.status?.phase, 'Running');
    assert.equal(ready(withDebugger)?.status, 'True', 'an ephemeral container does not count for readiness');
    // The wait ends on the whole command line the assertion looks for, not on a part of it.
    const targetShell = /sh -c trap "exit 0" TERM; while true; do sleep 1; done/;
    const log = await stack.waitFor('the debugger\'s log with what it saw as pid 1', async () => {
      const text = await logOf('target', 'debugger');
      return text.includes('polo') && targetShell.test(text) ? text : undefined;
    });
    assert.match(log, targetShell, 'pid 1 is the target container\'s shell: its process namespace is shared');

    // A second one, with the whole pod as upstream's UpdateEphemeralContainers sends it: it runs once and exits.
    const current = await getPod('target');
    current.spec?.ephemeralContainers?.push({ name: 'debugger2', image: IMAGE, imagePullPolicy: 'IfNotPresent', terminationMessagePolicy: 'File', command: ['sh', '-c', 'echo once'] });
    await cp.admin.request(`${podsPath}/target/ephemeralcontainers`, { method: 'PUT', body: current });
    const both = await waitForApiPod('target', 'with the second ephemeral container terminated', (p) => p.status?.ephemeralContainerStatuses?.find((c) => c.name === 'debugger2')?.state?.terminated !== undefined, 30_000);
    assert.deepEqual(both.status?.ephemeralContainerStatuses?.map((c) => c.name).sort(), ['debugger', 'debugger2']);
    assert.equal(both.status?.ephemeralContainerStatuses?.find((c) => c.name === 'debugger2')?.state?.terminated?.exitCode, 0);
    // Never restarted: a few syncs later it still has one instance.
    await new Promise((r) => setTimeout(r, 3000));
    assert.equal((await containers('target', 'debugger2')).length, 1, 'an ephemeral container is never restarted');
    assert.equal((await containers('target', 'debugger')).length, 1);
    assert.equal((await getPod('target')).status?.containerStatuses?.[0]?.containerID, appId);
  });

  it('readiness gates: not Ready while a gate\'s condition is missing or False, Ready once every gate\'s is True', async () => {
    const gate1 = 'k8s.io/test-condition1';
    const gate2 = 'k8s.io/test-condition2';
    await create(apiPod('gated', { readinessGates: [{ conditionType: gate1 }, { conditionType: gate2 }] }));
    const started = await waitForApiPod('gated', 'Running', running);
    const notReady = ready(started);
    assert.equal(notReady?.status, 'False');
    assert.equal(notReady?.reason, 'ReadinessGatesNotReady');
    assert.match(notReady?.message ?? '', /corresponding condition of pod readiness gate "k8s.io\/test-condition1" does not exist/);
    const patchGate = (type: string, status: 'True' | 'False') =>
      cp.admin.request(`${podsPath}/gated/status`, { method: 'PATCH', contentType: PatchType.strategicMerge, body: { status: { conditions: [{ type, status }] } } });

    await patchGate(gate1, 'True');
    const oneGate = await waitForApiPod('gated', 'with the second gate named as missing', (p) => /test-condition2/.test(ready(p)?.message ?? '') && !/test-condition1/.test(ready(p)?.message ?? ''), 15_000);
    assert.equal(ready(oneGate)?.status, 'False');
    assert.equal(oneGate.status?.conditions?.find((c) => c.type === gate1)?.status, 'True', 'the kubelet\'s patches keep the condition it does not own');

    await patchGate(gate2, 'True');
    const both = await waitForApiPod('gated', 'Ready', (p) => ready(p)?.status === 'True', 15_000);
    assert.equal(both.status?.conditions?.find((c) => c.type === 'ContainersReady')?.status, 'True');

    await patchGate(gate1, 'False');
    const back = await waitForApiPod('gated', 'not Ready again', (p) => ready(p)?.status === 'False', 15_000);
    assert.equal(ready(back)?.reason, 'ReadinessGatesNotReady');
    assert.match(ready(back)?.message ?? '', /the status of pod readiness gate "k8s.io\/test-condition1" is not "True", but False/);
  });

  it('a Service created before a pod gives its container the service environment variables', async () => {
    const svc = await cp.admin.request<Service>(`/api/v1/namespaces/${NS}/services`, {
      method: 'POST',
      body: { apiVersion: 'v1', kind: 'Service', metadata: { name: 'fooservice' }, spec: { ports: [{ port: 8765, targetPort: 8080 }], selector: { name: 'none' } } },
    });
    const ip = svc.spec?.clusterIP ?? '';
    assert.match(ip, /^\d+\.\d+\.\d+\.\d+$/);
    const master = await cp.admin.request<Service>('/api/v1/namespaces/default/services/kubernetes');
    // As upstream's spec reads it (MatchContainerOutput): the log of a run-once pod once it Succeeded, its container exited and kept.
    await create(apiPod('env', { restartPolicy: 'Never', containers: [{ name: 'env3cont', image: IMAGE, imagePullPolicy: 'IfNotPresent', command: ['sh', '-c', 'env'] }] }));
    await waitForApiPod('env', 'Succeeded', (p) => p.status?.phase === 'Succeeded');
    await stack.waitFor('the finished pod\'s container exited', async () => ((await containers('env', 'env3cont')).some((c) => c.state === 'CONTAINER_EXITED') ? true : undefined));
    const log = await logOf('env', 'env3cont');
    for (const line of [
      `FOOSERVICE_SERVICE_HOST=${ip}`,
      'FOOSERVICE_SERVICE_PORT=8765',
      `FOOSERVICE_PORT=tcp://${ip}:8765`,
      'FOOSERVICE_PORT_8765_TCP_PORT=8765',
      'FOOSERVICE_PORT_8765_TCP_PROTO=tcp',
      `FOOSERVICE_PORT_8765_TCP=tcp://${ip}:8765`,
      `FOOSERVICE_PORT_8765_TCP_ADDR=${ip}`,
      `KUBERNETES_SERVICE_HOST=${master.spec?.clusterIP ?? ''}`,
    ]) {
      assert.ok(log.split('\n').includes(line), `${line} in the container's environment:\n${log}`);
    }
  });

  it('a running pod\'s labels updated: it keeps running; its activeDeadlineSeconds set: it fails with DeadlineExceeded', async () => {
    await create(apiPod('deadline', {}, { labels: { time: '1' } }));
    const first = await waitForApiPod('deadline', 'Running', running);
    const id = first.status?.containerStatuses?.[0]?.containerID;
    await cp.admin.request(`${podsPath}/deadline`, { method: 'PATCH', contentType: PatchType.merge, body: { metadata: { labels: { time: '2' } } } });
    const listed = await cp.admin.request<{ items: Pod[] }>(podsPath, { query: { labelSelector: 'time=2' } });
    assert.deepEqual(listed.items.map((p) => p.metadata?.name), ['deadline']);
    await new Promise((r) => setTimeout(r, 2000));
    const relabelled = await getPod('deadline');
    assert.ok(running(relabelled), 'still running');
    assert.equal(relabelled.status?.containerStatuses?.[0]?.containerID, id, 'not restarted by a label change');

    await cp.admin.request(`${podsPath}/deadline`, { method: 'PATCH', contentType: PatchType.merge, body: { spec: { activeDeadlineSeconds: 5 } } });
    const failed = await waitForApiPod('deadline', 'Failed with DeadlineExceeded', (p) => p.status?.phase === 'Failed', 30_000);
    assert.equal(failed.status?.reason, 'DeadlineExceeded');
  });
});
