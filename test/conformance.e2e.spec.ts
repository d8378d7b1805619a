/**
 * The CI's share of the upstream node conformance suite: `npm run
 * conformance` as a user runs it (test/conformance/conformance.ts), on a
 * subset of the [NodeConformance] specs that covers each area the issue
 * names (pods, probes, init containers, lifecycle hooks, volumes, logs and
 * exec, termination messages, the downward API, pod networking), against
 * kubelet-split joined to a real control plane, on a containerd and a bridge
 * of its own. Every spec of the subset must be in ginkgo's report, and pass.
 * The full suite (166 specs, side by side with the upstream kubelet) is
 * `npm run conformance` itself; it takes about half an hour.
 *
 * The first run on a machine builds e2e.test, the ginkgo CLI, kube-scheduler,
 * kube-controller-manager, agnhost and nonewprivs (deploy/conformance/build.sh,
 * about 7 minutes with a cold Go cache) and the suite's images (fetching
 * three Debian packages once): the bound below allows for that.
 *
 * KS_CONFORMANCE_DEPLOY picks the node under test: `launcher` (the default:
 * the services as the launcher runs them), `compose` (`--deploy compose`: the
 * compose stack, its images built locally; a Docker engine of its own,
 * deploy/compose/dockerd.sh), or `launcher,compose` for both, one after the other.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { runSubset } from './conformance/subset.js';

/** The subset: upstream's full spec texts (ginkgo's, as `npm run conformance` lists them). */
export const CI_SUBSET = [
  '[sig-node] Pods should get a host IP [NodeConformance] [Conformance]',
  '[sig-node] Pods should be submitted and removed [NodeConformance] [Conformance]',
  '[sig-node] Pods should support remote command execution over websockets [NodeConformance] [Conformance]',
  '[sig-node] Pods should support retrieving logs from the container over websockets [NodeConformance] [Conformance]',
  '[sig-node] Kubelet when scheduling a busybox command in a pod should print the output to logs [NodeConformance] [Conformance]',
  '[sig-node] Probing container should be restarted with a exec "cat /tmp/health" liveness probe [NodeConformance] [Conformance]',
  '[sig-node] Probing container with readiness probe that fails should never be ready and never restart [NodeConformance] [Conformance]',
  '[sig-node] InitContainer [NodeConformance] should invoke init containers on a RestartNever pod [Conformance]',
  '[sig-node] InitContainer [NodeConformance] should not start app containers and fail the pod if init containers fail on a RestartNever pod [Conformance]',
  '[sig-node] Container Lifecycle Hook when create a pod with lifecycle hook should execute poststart exec hook properly [NodeConformance] [Conformance]',
  '[sig-node] Container Lifecycle Hook when create a pod with lifecycle hook should execute prestop http hook properly [NodeConformance] [Conformance]',
  '[sig-node] Container Runtime blackbox test on terminated container should report termination message if TerminationMessagePath is set [NodeConformance]',
  '[sig-node] Downward API should provide pod name, namespace and IP address as env vars [NodeConformance] [Conformance]',
  '[sig-storage] EmptyDir volumes should support (root,0644,tmpfs) [LinuxOnly] [NodeConformance] [Conformance]',
  '[sig-storage] ConfigMap should be consumable from pods in volume with mappings [NodeConformance] [Conformance]',
  '[sig-storage] Secrets should be consumable from pods in volume with defaultMode set [LinuxOnly] [NodeConformance] [Conformance]',
  '[sig-network] Networking Granular Checks: Pods should function for intra-pod communication: http [NodeConformance] [Conformance]',
];

const DEPLOYS = (process.env['KS_CONFORMANCE_DEPLOY'] || 'launcher').split(',').map((d) => d.trim());
for (const d of DEPLOYS) if (d !== 'launcher' && d !== 'compose') throw new Error(`KS_CONFORMANCE_DEPLOY: "${d}" is neither launcher nor compose`);

for (const deploy of DEPLOYS) describe(`npm run conformance${deploy === 'compose' ? ' -- --deploy compose' : ''} on the CI subset`, { timeout: 40 * 60_000 }, () => {
  it(`passes each of the ${CI_SUBSET.length} specs, every one of them in the report`, async () => {
    const { code, cleanUp } = await runSubset(CI_SUBSET, ['--deploy', deploy, '--procs', '2']);
    assert.equal(code, 0, `npm run conformance exited ${code}`);
    // Kept when an assertion failed, for looking into it.
    cleanUp();
  });
});
