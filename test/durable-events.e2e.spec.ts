/**
 * Issue 28 item 9, on the real stack joined to the real control plane: the
 * node's events reach the apiserver through KUBELET_EVENTS and a durable
 * consumer, so none is lost while no status manager leads, and each is
 * posted once, as the correlator says.
 *
 *  - The status group SIGKILLed (no status manager at all), an API pod
 *    created meanwhile: its kubelet events (Pulled, Created, Started, as
 *    the pod worker records them on NATS while no one listens) are in the
 *    apiserver once a status manager is started again, each once, count 1.
 *  - A container OOMKilled, the status group SIGKILLed the moment its
 *    OOMKilled status is saved in `pod-status` (the test watches the
 *    bucket): once a status manager runs again, the apiserver has one
 *    Warning OOMKilled event on the pod, not none and not two.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { Kvm } from '@nats-io/kv';
import type { Event, Pod, VersionedPodStatusRecord } from '@app/contracts';
import { exited, type ServiceProcess } from '../deploy/local/stack.js';
import { startControlPlane, type ControlPlane } from './support/control-plane.js';
import { NodeStack } from './support/node-stack.js';

const NODE = 'node-durable-events';
const NS = 'durable-events';
const IMAGE = 'localhost/kubelet-split/busybox:1.35';

function apiPod(name: string, container: Pod['spec']['containers'][number], restartPolicy: 'Always' | 'Never' = 'Always'): Pod {
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name, namespace: NS },
    // hostNetwork: the events here are the pod worker's and the status manager's, none of the pod network's.
    spec: { nodeName: NODE, hostNetwork: true, automountServiceAccountToken: false, enableServiceLinks: false, terminationGracePeriodSeconds: 1, restartPolicy, containers: [container] },
  };
}

describe('the node\'s events to the apiserver, none lost while no status manager leads, each once', { timeout: 300_000 }, () => {
  let cp: ControlPlane;
  let stack: NodeStack;
  let instance = 0;

  const apiEvents = async (pod: string): Promise<Event[]> =>
    (await cp.admin.request<{ items: Event[] }>(`/api/v1/namespaces/${NS}/events?fieldSelector=${encodeURIComponent(`involvedObject.name=${pod}`)}`)).items;
  const statusManager = (): ServiceProcess | undefined => [...stack.procs.entries()].find(([k, p]) => k.startsWith('status-manager#') && p.process.exitCode === null && p.process.signalCode === null)?.[1];
  const running = async (pod: string) =>
    (await stack.cri.runtime('ListContainers', { filter: { labelSelector: { 'io.kubernetes.pod.name': pod, 'io.kubernetes.pod.namespace': NS } } })).containers.some((c) => c.state === 'CONTAINER_RUNNING');

  /** SIGKILLs the status group's one process (its modules share it) and forgets its modules. */
  async function killStatusGroup(): Promise<void> {
    const sp = statusManager();
    assert.ok(sp, 'a status manager runs');
    sp.process.kill('SIGKILL');
    await exited(sp.process);
    for (const [k, p] of [...stack.procs.entries()]) if (p.process === sp.process) stack.procs.delete(k);
  }
  const startStatusGroup = () => stack.startService('status-manager', String(++instance));

  /** Each reason of the pod's events in the apiserver with its count, sorted: `Started x1`. */
  const counted = (events: Event[]) => events.map((e) => `${e.reason ?? ''} x${e.count ?? 1}`).sort();

  before(async () => {
    cp = await startControlPlane({ nodes: [NODE] });
    stack = new NodeStack({ node: NODE, services: ['cri-gateway', 'pleg', 'sync-loop', 'status-manager', 'pod-worker', 'config-source'], kubeconfig: cp.kubeconfig(NODE), target: 'group' });
    await stack.start();
    await cp.createNamespace(NS);
  });

  after(async () => {
    try {
      if (cp) for (const name of ['gap', 'hog']) await cp.admin.request(`/api/v1/namespaces/${NS}/pods/${name}`, { method: 'DELETE', query: { gracePeriodSeconds: '0' } }).catch(() => undefined);
      await stack?.stop();
    } finally {
      await cp?.stop();
    }
  });

  it('events recorded while no status manager runs are in the apiserver once one runs again, each once', async (t) => {
    await killStatusGroup();
    const killedAt = performance.now();
    await cp.admin.request(`/api/v1/namespaces/${NS}/pods`, { method: 'POST', body: apiPod('gap', { name: 'app', image: IMAGE, imagePullPolicy: 'IfNotPresent', command: ['sleep', '3600'] }) });
    await stack.waitFor('gap running in containerd', async () => ((await running('gap')) ? true : undefined), 60_000);
    // What the pod worker recorded about the pod, as NATS carried it while no status manager listened.
    const heard = await stack.waitFor('the Started event on NATS', () => {
      const e = stack.events.filter((x) => x.involvedObject.name === 'gap');
      return e.some((x) => x.reason === 'Started') ? e : undefined;
    });
    const inApiWhileDown = await apiEvents('gap');
    await startStatusGroup();
    const restartedAt = performance.now();
    const want = heard.map((e) => `${e.reason} x1`).sort();
    const got = await stack.waitFor('the events in the apiserver', async () => {
      const e = await apiEvents('gap');
      return e.length >= want.length ? e : undefined;
    }, 60_000).catch(async () => apiEvents('gap'));
    const postedMs = performance.now() - restartedAt;
    // A few seconds more: nothing posted twice.
    await new Promise((r) => setTimeout(r, 3000));
    const final = await apiEvents('gap');
    t.diagnostic(`recorded on NATS while no status manager ran (${Math.round(restartedAt - killedAt)} ms): ${want.join(', ')}; in the apiserver then: ${inApiWhileDown.length}; ${Math.round(postedMs)} ms after a status manager started: ${counted(got).join(', ') || 'none'}; 3 s later: ${counted(final).join(', ') || 'none'}`);
    // Each event heard while no one ran is one Event, count 1 (what the correlator says of distinct events): the same
    // reason, message and time (the Event's is to the second), not a later event of the same reason.
    const same = (e: Event, h: (typeof heard)[number]) => e.reason === h.reason && e.message === h.message && e.firstTimestamp === `${h.timestamp.slice(0, 19)}Z`;
    const matched = heard.map((h) => final.filter((e) => same(e, h)));
    t.diagnostic(`of the events heard while no status manager ran, in the apiserver: ${matched.map((m, i) => `${heard[i]?.reason ?? '?'} ${m.length} (${m.map((e) => `x${e.count ?? 1}`).join(', ')})`).join('; ')}`);
    assert.deepEqual(matched.map((m) => m.map((e) => `${e.reason ?? ''} x${e.count ?? 1}`)), heard.map((h) => [`${h.reason} x1`]));
  });

  it('the status manager SIGKILLed the moment a container\'s OOMKilled status is saved: one OOMKilled event in the apiserver once one runs again', async (t) => {
    const kv = await new Kvm(stack.nc).open('pod-status');
    const watch = await kv.watch({ key: `${NODE}.>` });
    let killedOn: string | undefined;
    const killing = (async () => {
      for await (const e of watch) {
        if (e.operation !== 'PUT') continue;
        const r = e.json<VersionedPodStatusRecord>();
        if (r.podName !== 'hog' || r.status.containerStatuses?.[0]?.state?.terminated?.reason !== 'OOMKilled') continue;
        killedOn = `version ${r.version}`;
        await killStatusGroup();
        return;
      }
    })();
    await cp.admin.request(`/api/v1/namespaces/${NS}/pods`, {
      method: 'POST',
      body: apiPod('hog', { name: 'hog', image: IMAGE, imagePullPolicy: 'IfNotPresent', command: ['sh', '-c', 'head -c 64m /dev/zero | tail'], resources: { limits: { memory: '16Mi' } } }, 'Never'),
    });
    await stack.waitFor('the OOMKilled status saved and the status manager killed', () => (killedOn ? true : undefined), 90_000);
    await killing;
    watch.stop();
    const inApiAtKill = (await apiEvents('hog')).filter((e) => e.reason === 'OOMKilled').length;
    await startStatusGroup();
    const restartedAt = performance.now();
    const oom = await stack.waitFor('the OOMKilled event in the apiserver', async () => {
      const e = (await apiEvents('hog')).filter((x) => x.reason === 'OOMKilled');
      return e.length > 0 ? e : undefined;
    }, 60_000).catch(() => [] as Event[]);
    const postedMs = performance.now() - restartedAt;
    await new Promise((r) => setTimeout(r, 3000));
    const final = (await apiEvents('hog')).filter((e) => e.reason === 'OOMKilled');
    t.diagnostic(`killed on the OOMKilled status (${killedOn ?? '?'}); OOMKilled events in the apiserver at the kill: ${inApiAtKill}; ${oom.length > 0 ? `${Math.round(postedMs)} ms` : 'not within 60 s'} after a status manager started: ${oom.length}; 3 s later: ${counted(final).join(', ') || 'none'}`);
    assert.deepEqual(counted(final), ['OOMKilled x1']);
    assert.equal(final[0]?.type, 'Warning');
    assert.match(final[0]?.message ?? '', /^Container hog was killed: it ran out of memory \(OOMKilled, exit code 137\)$/);
  });
});
