/**
 * What a user reads in the status of a pod the kubelet will not run, on the
 * real containerd (issue 28, item 6):
 *  - a pod asking for an AppArmor profile on a node that cannot enforce
 *    AppArmor is rejected at admission, as v1.34 does (the AppArmor admit
 *    handler, pkg/kubelet/lifecycle/handlers.go; kubelet.go rejectPod):
 *    Failed, reason AppArmor, "Pod was rejected: Cannot enforce AppArmor:
 *    ...", a Warning event, and nothing made in containerd. On a host that
 *    does enforce AppArmor, the same pod runs.
 *  - a container whose config cannot be generated waits with
 *    CreateContainerConfigError and the error's own message: upstream's
 *    startContainer writes "Error: " in the Failed event only
 *    (kuberuntime_container.go), not in the status.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import { NodeStack } from './support/node-stack.js';

const IMAGE = 'localhost/kubelet-split/busybox:1.35';
/** libcontainer's apparmor.IsEnabled, as the kubelet reads the host. */
const hostEnforcesAppArmor = existsSync('/sys/kernel/security/apparmor') && existsSync('/sys/module/apparmor/parameters/enabled') && readFileSync('/sys/module/apparmor/parameters/enabled', 'utf8').startsWith('Y');

const pod = (name: string, container: string) => `apiVersion: v1
kind: Pod
metadata:
  name: ${name}
spec:
  hostNetwork: true
  terminationGracePeriodSeconds: 1
  containers:
    - name: main
      image: ${IMAGE}
      command: ["sleep", "3600"]
${container}`;

describe('pods the kubelet will not run: the status a user reads', { timeout: 180_000 }, () => {
  const stack = new NodeStack({ node: 'refusals-e2e', services: ['cri-gateway', 'pleg', 'sync-loop', 'status-manager', 'pod-worker', 'config-source'] });
  before(() => stack.start());
  after(() => stack.stop());

  it(`an AppArmor profile ${hostEnforcesAppArmor ? 'on a host that enforces AppArmor: the pod runs' : 'on a host without AppArmor: rejected at admission, Failed, nothing made in containerd'}`, async () => {
    stack.writeManifest('armored', pod('armored', '      securityContext:\n        appArmorProfile:\n          type: RuntimeDefault\n'));
    if (hostEnforcesAppArmor) {
      await stack.waitForPod('armored', 'Running', (s) => s.phase === 'Running', 60_000);
      return;
    }
    let sandboxesSeen = 0;
    let phases: string[] = [];
    try {
      const s = await stack.waitForPod(
        'armored',
        'Failed',
        (x) => {
          if (phases.at(-1) !== x.phase) phases = [...phases, x.phase ?? ''];
          return x.phase === 'Failed';
        },
        30_000,
      );
      assert.equal(s.reason, 'AppArmor');
      assert.equal(s.message, 'Pod was rejected: Cannot enforce AppArmor: AppArmor is not enabled on the host');
    } finally {
      sandboxesSeen = (await stack.sandboxes('armored')).length;
      const last = stack.served.filter((h) => h.pod === stack.podName('armored')).at(-1)?.status;
      console.log(`# AppArmor: phases served ${phases.join(' -> ')}; last: ${last?.phase ?? '?'} reason=${last?.reason ?? ''} message=${JSON.stringify(last?.message ?? '')}; sandboxes in containerd: ${sandboxesSeen}; events: ${stack.eventsOf('armored').map((e) => e.reason).join(',')}`);
    }
    await stack.waitFor('the AppArmor Warning event', () => (stack.eventsOf('armored').some((e) => e.eventType === 'Warning' && e.reason === 'AppArmor' && e.message === 'Cannot enforce AppArmor: AppArmor is not enabled on the host') ? true : undefined));
    // Still Failed, and still nothing in containerd, a few syncs later: a rejected pod is never retried.
    await new Promise((r) => setTimeout(r, 3000));
    const s = (await stack.podList()).items.find((p) => p.metadata?.name === stack.podName('armored'))?.status;
    assert.equal(s?.phase, 'Failed');
    assert.equal((await stack.sandboxes('armored')).length, 0, 'no sandbox was made');
    assert.ok(!stack.eventsOf('armored').some((e) => e.reason === 'Pulled' || e.reason === 'Created'), 'nothing was pulled or created');
  });

  it('a container refused by runAsNonRoot waits with CreateContainerConfigError and the error as upstream words it, "Error: " only in the event', async () => {
    stack.writeManifest('nonroot', pod('nonroot', '      securityContext:\n        runAsNonRoot: true\n'));
    let last = '';
    const s = await stack
      .waitForPod('nonroot', 'CreateContainerConfigError', (x) => {
        last = JSON.stringify(x.containerStatuses?.[0]?.state?.waiting ?? {});
        return x.containerStatuses?.[0]?.state?.waiting?.reason === 'CreateContainerConfigError';
      })
      .finally(() => console.log(`# CreateContainerConfigError: waiting ${last}`));
    const uid = (await stack.podList()).items.find((p) => p.metadata?.name === stack.podName('nonroot'))?.metadata?.uid ?? '';
    assert.equal(s.containerStatuses?.[0]?.state?.waiting?.message, `container has runAsNonRoot and image will run as root (pod: "${stack.podName('nonroot')}_default(${uid})", container: main)`);
    const failed = await stack.waitFor('the Failed event', () => stack.eventsOf('nonroot').find((e) => e.reason === 'Failed'));
    assert.equal(failed.message, `Error: ${s.containerStatuses?.[0]?.state?.waiting?.message ?? ''}`);
  });
});
