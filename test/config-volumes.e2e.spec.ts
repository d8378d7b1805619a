/**
 * What a pod needs from the apiserver's objects, end to end: the real
 * stack (real NATS, real containerd) joined to a real kube-apiserver
 * (test/support/control-plane.ts, Node authorizer and NodeRestriction):
 * a configMap volume and a secret volume (a tmpfs) show their content in
 * the container; a change of the configMap reaches the running container
 * at its next sync; a missing configMap is a FailedMount and a
 * ContainerCreating wait, until it is created; env from a configMap and a
 * secret, a missing one CreateContainerConfigError until it exists; an unknown RuntimeClass is
 * a clear FailedCreatePodSandBox, and a known one's handler runs the pod;
 * the service account volume the apiserver injects (a projected token,
 * the cluster's CA and the namespace) holds a token the apiserver accepts
 * as the pod's service account.
 * Objects come to pod-worker from config-source (ADR 0014), which alone
 * holds the node's credentials.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { request } from 'node:https';
import type { V1Pod } from '@kubernetes/client-node';
import type { ConfigMap, Event, Pod, Secret } from 'kubernetes-types/core/v1.js';
import { isNotFound, PatchType } from '@app/apiserver';
import { startControlPlane, type ControlPlane } from './support/control-plane.js';
import { NodeStack } from './support/node-stack.js';

const NODE = 'cfgvol-e2e';
const NS = 'cfgvol';
const IMAGE = 'localhost/kubelet-split/busybox:1.35';
const SLEEPER = 'trap "exit 0" TERM; while true; do sleep 1; done';
/** The pod worker's resync: a changed object reaches a running pod within it (plus a sync's time). */
const SYNC_FREQUENCY_MS = 5000;

function apiPod(name: string, spec: Partial<NonNullable<Pod['spec']>>): Pod {
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name, namespace: NS },
    spec: {
      nodeName: NODE,
      hostNetwork: true,
      automountServiceAccountToken: false,
      terminationGracePeriodSeconds: 1,
      containers: [{ name: 'main', image: IMAGE, command: ['sh', '-c', SLEEPER] }],
      ...spec,
    },
  };
}

describe('configMap and secret volumes and RuntimeClasses from a real kube-apiserver', { timeout: 600_000 }, () => {
  let cp: ControlPlane;
  let stack: NodeStack;
  const ns = `/api/v1/namespaces/${NS}`;
  const create = <T>(collection: string, obj: T) => cp.admin.request<T>(`${ns}/${collection}`, { method: 'POST', body: obj });
  const served = async (name: string): Promise<V1Pod | undefined> => (await stack.podList()).items.find((p) => p.metadata?.namespace === NS && p.metadata.name === name);
  const waitServed = (name: string, what: string, pred: (p: V1Pod) => boolean, timeoutMs = 60_000) =>
    stack.waitFor(`${name} ${what}`, async () => {
      const p = await served(name);
      return p && pred(p) ? p : undefined;
    }, timeoutMs);
  const running = (p: V1Pod) => p.status?.phase === 'Running' && (p.status.containerStatuses ?? []).every((c) => c.state?.running !== undefined);
  /** Runs `cmd` in the pod's main container; its stdout. */
  const exec = async (pod: V1Pod, cmd: string): Promise<string> => {
    const containerId = (pod.status?.containerStatuses?.[0]?.containerID ?? '').replace('containerd://', '');
    const res = await stack.cri.runtime('ExecSync', { containerId, cmd: ['sh', '-c', cmd], timeout: '10' });
    return Buffer.from(res.stdout, 'base64').toString();
  };
  const apiEvents = async (name: string) => (await cp.admin.request<{ items: Event[] }>(`${ns}/events`, { query: { fieldSelector: `involvedObject.name=${name}` } })).items;
  const natsEvents = (name: string) => stack.events.filter((e) => e.involvedObject.name === name);

  before(async () => {
    cp = await startControlPlane({ nodes: [NODE] });
    await cp.createNamespace(NS);
    stack = new NodeStack({
      node: NODE,
      services: ['cri-gateway', 'pleg', 'sync-loop', 'status-manager', 'pod-worker', 'config-source'],
      kubeconfig: cp.kubeconfig(NODE),
      env: { 'pod-worker': { SYNC_FREQUENCY: `${SYNC_FREQUENCY_MS / 1000}s`, POD_SYNC_BACKOFF: '2s' } },
    });
    await stack.start();
  });

  after(async () => {
    try {
      if (cp && stack?.nc) {
        const left = await cp.admin.request<{ items: Pod[] }>(`${ns}/pods`).catch(() => ({ items: [] as Pod[] }));
        for (const p of left.items) {
          await cp.admin.request(`${ns}/pods/${p.metadata?.name ?? ''}`, { method: 'DELETE', query: { gracePeriodSeconds: 0 } }).catch((err: unknown) => {
            if (!isNotFound(err)) throw err;
          });
        }
      }
      await stack?.stop();
    } finally {
      await cp?.stop();
    }
  });

  it('a configMap volume and a secret volume show their content in the container; the secret is on a tmpfs', async () => {
    await create<ConfigMap>('configmaps', { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'settings' }, data: { greeting: 'hello', 'app.conf': 'level=info' } });
    await create<Secret>('secrets', { apiVersion: 'v1', kind: 'Secret', metadata: { name: 'creds' }, type: 'Opaque', data: { password: Buffer.from('s3cret').toString('base64') } });
    await create('pods', apiPod('reader', {
      containers: [{ name: 'main', image: IMAGE, command: ['sh', '-c', SLEEPER], volumeMounts: [{ name: 'cfg', mountPath: '/cfg' }, { name: 'sec', mountPath: '/sec', readOnly: true }] }],
      volumes: [
        { name: 'cfg', configMap: { name: 'settings', items: [{ key: 'greeting', path: 'greeting' }, { key: 'app.conf', path: 'etc/app.conf', mode: 0o600 }] } },
        { name: 'sec', secret: { secretName: 'creds', defaultMode: 0o400 } },
      ],
    }));
    const pod = await waitServed('reader', 'Running', running, 90_000);
    assert.equal(await exec(pod, 'cat /cfg/greeting'), 'hello');
    assert.equal(await exec(pod, 'cat /cfg/etc/app.conf'), 'level=info');
    assert.equal(await exec(pod, 'stat -L -c %a /cfg/etc/app.conf /cfg/greeting'), '600\n644\n');
    assert.equal(await exec(pod, 'cat /sec/password'), 's3cret');
    assert.equal(await exec(pod, 'stat -L -c %a /sec/password'), '400\n');
    assert.match(await exec(pod, 'grep " /sec " /proc/mounts'), /^tmpfs \/sec tmpfs /, 'the secret volume is a tmpfs');
    assert.equal(await exec(pod, 'ls -a /cfg | grep -c "^..data$"'), '1\n', 'the AtomicWriter layout (..data)');
  });

  it('a change of the configMap reaches the running container at its next sync', async () => {
    await cp.admin.request(`${ns}/configmaps/settings`, { method: 'PATCH', contentType: PatchType.merge, body: { data: { greeting: 'bye' } } });
    const t0 = Date.now();
    const pod = await waitServed('reader', 'Running', running);
    await stack.waitFor('the new greeting in the container', async () => ((await exec(pod, 'cat /cfg/greeting')) === 'bye' ? true : undefined), SYNC_FREQUENCY_MS * 4 + 10_000);
    const ms = Date.now() - t0;
    process.stdout.write(`# configMap change seen in the container after ${ms} ms (SYNC_FREQUENCY ${SYNC_FREQUENCY_MS} ms)\n`);
    assert.equal((await waitServed('reader', 'Running', running)).status?.containerStatuses?.[0]?.restartCount, 0, 'updated in place, not restarted');
  });

  it('a missing configMap is a FailedMount and a ContainerCreating wait, never an empty volume; creating it lets the pod start', async () => {
    await create('pods', apiPod('waiter', {
      containers: [{ name: 'main', image: IMAGE, command: ['sh', '-c', SLEEPER], volumeMounts: [{ name: 'late', mountPath: '/late' }] }],
      volumes: [{ name: 'late', configMap: { name: 'late' } }],
    }));
    const message = 'MountVolume.SetUp failed for volume "late" : configmap "late" not found';
    await stack.waitFor('the FailedMount event of waiter', () => (natsEvents('waiter').some((e) => e.reason === 'FailedMount' && e.eventType === 'Warning' && e.message === message) ? true : undefined), 60_000);
    const waiting = await waitServed('waiter', 'waiting ContainerCreating', (p) => p.status?.containerStatuses?.[0]?.state?.waiting?.reason === 'ContainerCreating');
    assert.equal(waiting.status?.phase, 'Pending');
    // The one with the message the NATS event above had (another FailedMount of the pod, say of a first list that
    // failed, would be an event of its own in the apiserver).
    const apiEvent = await stack.waitFor('the FailedMount event in the apiserver', async () => (await apiEvents('waiter')).find((e) => e.reason === 'FailedMount' && e.message === message), 30_000);
    assert.equal(apiEvent.message, message);
    assert.equal(apiEvent.type, 'Warning');
    assert.deepEqual(await stack.cri.runtime('ListContainers', { filter: { labelSelector: { 'io.kubernetes.pod.name': 'waiter', 'io.kubernetes.pod.namespace': NS } } }).then((r) => r.containers), [], 'no container was created');

    await create<ConfigMap>('configmaps', { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'late' }, data: { ready: 'yes' } });
    const pod = await waitServed('waiter', 'Running once its configMap exists', running, 60_000);
    assert.equal(await exec(pod, 'cat /late/ready'), 'yes');
  });

  it('env from a configMap and a secret is the container\'s environment; a missing secret is CreateContainerConfigError until it exists', async () => {
    await create('pods', apiPod('envy', {
      containers: [{ name: 'main', image: IMAGE, command: ['sh', '-c', SLEEPER], envFrom: [{ configMapRef: { name: 'settings' }, prefix: 'CFG_' }], env: [{ name: 'PW', valueFrom: { secretKeyRef: { name: 'creds', key: 'password' } } }] }],
    }));
    const envy = await waitServed('envy', 'Running', running, 60_000);
    assert.equal(await exec(envy, 'echo "$CFG_greeting $PW"'), 'bye s3cret\n');

    await create('pods', apiPod('envless', {
      containers: [{ name: 'main', image: IMAGE, command: ['sh', '-c', SLEEPER], env: [{ name: 'TOKEN', valueFrom: { secretKeyRef: { name: 'later', key: 'token' } } }] }],
    }));
    const waiting = await waitServed('envless', 'waiting CreateContainerConfigError', (p) => p.status?.containerStatuses?.[0]?.state?.waiting?.reason === 'CreateContainerConfigError');
    assert.equal(waiting.status?.containerStatuses?.[0]?.state?.waiting?.message, 'secret "later" not found', 'the status carries the error itself, as upstream\'s ("Error: " is only in the Failed event)');
    await create<Secret>('secrets', { apiVersion: 'v1', kind: 'Secret', metadata: { name: 'later' }, data: { token: Buffer.from('t0k').toString('base64') } });
    const started = await waitServed('envless', 'Running once its secret exists', running, 60_000);
    assert.equal(await exec(started, 'echo "$TOKEN"'), 't0k\n');
  });

  it('a RuntimeClass gone before the sandbox is made is a clear FailedCreatePodSandBox and no sandbox; a handler containerd lacks is refused by containerd; a RuntimeClass\'s handler runs the pod', async () => {
    // The apiserver's RuntimeClass admission refuses a pod naming a RuntimeClass that does not exist
    // ("pod rejected: RuntimeClass ... not found"); the kubelet's own check is for one deleted after
    // that. The pod is held at its volumes (a missing configMap) while its RuntimeClass is deleted.
    const runtimeClasses = '/apis/node.k8s.io/v1/runtimeclasses';
    const runtimeClass = (name: string, handler: string) => cp.admin.request(runtimeClasses, { method: 'POST', body: { apiVersion: 'node.k8s.io/v1', kind: 'RuntimeClass', metadata: { name }, handler } });
    await runtimeClass('fleeting', 'runc');
    await create('pods', apiPod('exotic', {
      runtimeClassName: 'fleeting',
      containers: [{ name: 'main', image: IMAGE, command: ['sh', '-c', SLEEPER], volumeMounts: [{ name: 'hold', mountPath: '/hold' }] }],
      volumes: [{ name: 'hold', configMap: { name: 'hold' } }],
    }));
    await stack.waitFor('exotic held at its volumes', () => (natsEvents('exotic').some((e) => e.reason === 'FailedMount') ? true : undefined), 60_000);
    await cp.admin.request(`${runtimeClasses}/fleeting`, { method: 'DELETE' });
    await create<ConfigMap>('configmaps', { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'hold' }, data: { x: 'y' } });
    const message = 'Failed to create pod sandbox: runtimeclass.node.k8s.io "fleeting" not found';
    await stack.waitFor('the FailedCreatePodSandBox event of exotic', () => (natsEvents('exotic').some((e) => e.reason === 'FailedCreatePodSandBox' && e.eventType === 'Warning' && e.message === message) ? true : undefined), 60_000);
    const p = await waitServed('exotic', 'Pending', (x) => x.status?.phase === 'Pending' && x.status.containerStatuses?.[0]?.state?.waiting !== undefined);
    assert.equal(p.status?.containerStatuses?.[0]?.state?.running, undefined);
    const sandboxes = await stack.cri.runtime('ListPodSandbox', { filter: { labelSelector: { 'io.kubernetes.pod.name': 'exotic', 'io.kubernetes.pod.namespace': NS } } });
    assert.deepEqual(sandboxes.items, [], 'no sandbox was made');

    await runtimeClass('bogus', 'no-such-handler');
    await create('pods', apiPod('bogus', { runtimeClassName: 'bogus' }));
    const namesHandler = /^Failed to create pod sandbox: .*no-such-handler/;
    const refused = await stack.waitFor('the FailedCreatePodSandBox event of bogus naming its handler', () => natsEvents('bogus').find((e) => e.reason === 'FailedCreatePodSandBox' && namesHandler.test(e.message)), 60_000);
    assert.match(refused.message, namesHandler, 'containerd names the handler it does not know');

    await runtimeClass('plain', 'runc');
    await create('pods', apiPod('classy', { runtimeClassName: 'plain' }));
    await waitServed('classy', 'Running', running, 60_000);
    const sb = await stack.cri.runtime('ListPodSandbox', { filter: { labelSelector: { 'io.kubernetes.pod.name': 'classy', 'io.kubernetes.pod.namespace': NS } } });
    assert.equal(sb.items[0]?.runtimeHandler, 'runc', 'the sandbox runs with the RuntimeClass\'s handler');
  });

  it('the service account volume the apiserver injects holds a token bound to the pod that the apiserver accepts, the CA and the namespace', async () => {
    // The controller-manager would publish kube-root-ca.crt in every namespace; this control plane has none.
    const ca = readFileSync(cp.caFile, 'utf8');
    await create<ConfigMap>('configmaps', { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'kube-root-ca.crt' }, data: { 'ca.crt': ca } });
    const pod = apiPod('sa-reader', {});
    delete pod.spec?.automountServiceAccountToken;
    const created = await create<Pod>('pods', pod);
    const injected = created.spec?.volumes?.find((v) => v.projected?.sources?.some((x) => x.serviceAccountToken));
    assert.ok(injected, 'the ServiceAccount admission injected the kube-api-access volume');
    const running_ = await waitServed('sa-reader', 'Running', running, 60_000);
    const dir = '/var/run/secrets/kubernetes.io/serviceaccount';
    assert.equal(await exec(running_, `cat ${dir}/namespace`), NS);
    assert.equal(await exec(running_, `cat ${dir}/ca.crt`), ca);
    const token = await exec(running_, `cat ${dir}/token`);
    assert.equal(token.split('.').length, 3, 'a JWT');
    const review = await selfSubjectReview(token);
    assert.equal(review.status.userInfo.username, `system:serviceaccount:${NS}:default`);
    assert.deepEqual(review.status.userInfo.extra?.['authentication.kubernetes.io/pod-name'], ['sa-reader']);
    assert.deepEqual(review.status.userInfo.extra?.['authentication.kubernetes.io/pod-uid'], [created.metadata?.uid]);
  });

  /** Who the apiserver says a token is (SelfSubjectReview, authentication.k8s.io/v1). */
  function selfSubjectReview(token: string): Promise<{ status: { userInfo: { username: string; extra?: Record<string, string[]> } } }> {
    const body = JSON.stringify({ apiVersion: 'authentication.k8s.io/v1', kind: 'SelfSubjectReview' });
    return new Promise((resolve, reject) => {
      const req = request(`${cp.url}/apis/authentication.k8s.io/v1/selfsubjectreviews`, { method: 'POST', ca: readFileSync(cp.caFile), headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' } }, (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (c: string) => (text += c));
        res.on('end', () => (res.statusCode === 201 || res.statusCode === 200 ? resolve(JSON.parse(text) as never) : reject(new Error(`SelfSubjectReview: HTTP ${res.statusCode ?? 0}: ${text}`))));
      });
      req.on('error', reject);
      req.end(body);
    });
  }
});
