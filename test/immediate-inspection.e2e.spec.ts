/**
 * The pod worker's immediate inspection end to end (docs/adr/0017): with the
 * PLEG's relist an hour apart, a static pod still becomes Running and Ready,
 * and its removal still finishes (the pod gone from GET /pods, nothing of it
 * left in containerd), each within seconds: every sync that changes the pod
 * in the runtime has the PLEG inspect it at once. Without that the pod would
 * wait for the next relist, an hour away.
 *
 * The PLEG starts last, so that its one relist (at its start) is newer than
 * the pod workers' start and releases their first sync (GetNewerThan).
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { NodeStack } from './support/node-stack.js';

const IMAGE = 'localhost/kubelet-split/busybox:1.35';
const NODE = 'inspect-e2e';

describe('with the relist an hour apart, the pod worker\'s inspections carry a pod through its life', { timeout: 180_000 }, () => {
  const stack = new NodeStack({
    node: NODE,
    services: ['cri-gateway', 'status-manager', 'prober', 'pod-worker', 'sync-loop', 'config-source', 'pleg'],
    env: { pleg: { RELIST_PERIOD: '1h', RELIST_THRESHOLD: '2h' } },
  });
  before(() => stack.start());
  after(() => stack.stop());

  it('a static pod becomes Running and Ready, and its removal finishes, without a relist', async () => {
    stack.writeManifest('quick', `apiVersion: v1\nkind: Pod\nmetadata:\n  name: quick\nspec:\n  hostNetwork: true\n  terminationGracePeriodSeconds: 1\n  containers:\n    - name: main\n      image: ${IMAGE}\n      command: ["sh", "-c", "trap 'exit 0' TERM; while true; do sleep 1; done"]\n`);
    const status = await stack.waitForPod('quick', 'Running and Ready', (s) => s.phase === 'Running' && (s.conditions ?? []).some((c) => c.type === 'Ready' && c.status === 'True'), 20_000);
    assert.ok(status.containerStatuses?.[0]?.state?.running, 'the container runs');
    assert.equal(status.containerStatuses?.[0]?.ready, true);
    const running = (await stack.containers('quick')).filter((c) => c.state === 'CONTAINER_RUNNING');
    assert.equal(running.length, 1, 'containerd runs the container');

    stack.removeManifest('quick');
    await stack.waitFor('quick gone from /pods', async () => ((await stack.podList()).items.some((p) => p.metadata?.name === stack.podName('quick')) ? undefined : true), 20_000);
    await stack.waitFor('quick gone from containerd', async () => ((await stack.sandboxes('quick')).length === 0 && (await stack.containers('quick')).length === 0 ? true : undefined), 20_000);
    const terminal = stack.history.filter((h) => h.pod === stack.podName('quick') && h.verb === 'TerminatePod');
    assert.equal(terminal.length, 1, 'the terminated pod\'s final status was sent');
    assert.equal(terminal[0]?.status.containerStatuses?.[0]?.state?.terminated?.exitCode, 0, 'with the exit code the runtime gave it');
  });
});
