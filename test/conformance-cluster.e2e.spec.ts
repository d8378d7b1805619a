/**
 * The CI's share of upstream's whole [Conformance] suite (issue 31): `npm
 * run conformance -- --suite conformance` as a user runs it, on a cluster of
 * two kubelet-split nodes (the fleet runner's, made conformant: kube-proxy,
 * CoreDNS, the apiserver reachable from pods through the `kubernetes`
 * Service; docs/adr/0039), on a subset that covers the areas a cluster adds
 * to a node: Services (ClusterIP, NodePort, the apiserver's), DNS,
 * Deployments, ReplicaSets, Jobs, DaemonSets, an admission webhook served by
 * a pod, kubectl logs and describe and apiserver proxying to pods, exec and
 * port-forward through the apiserver, projected service account tokens, a
 * volume subpath from a variable (subPathExpr),
 * pods talking across nodes, and preemption. Every spec of the subset must
 * be in ginkgo's report, and pass; the run must leave the machine's iptables
 * rules and sysctls as they were. The whole suite (424 specs, beside the
 * upstream kubelet's) is `npm run conformance -- --suite conformance`.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { runSubset } from './conformance/subset.js';

/** The subset: upstream's full spec texts, as `npm run conformance` lists them. */
export const CLUSTER_CI_SUBSET = [
  '[sig-network] Services should serve a basic endpoint from pods [Conformance]',
  '[sig-network] Services should be able to create a functioning NodePort service [Conformance]',
  '[sig-network] Services should provide secure master service [Conformance]',
  '[sig-network] DNS should provide DNS for the cluster [Conformance]',
  '[sig-network] DNS should provide DNS for services [Conformance]',
  '[sig-network] Proxy version v1 should proxy through a service and a pod [Conformance]',
  '[sig-network] Networking Granular Checks: Pods should function for node-pod communication: http [LinuxOnly] [NodeConformance] [Conformance]',
  '[sig-apps] Deployment RollingUpdateDeployment should delete old pods and create new ones [Conformance]',
  '[sig-apps] ReplicaSet should serve a basic image on each replica with a public image [Conformance]',
  '[sig-apps] Job should run a job to completion when tasks sometimes fail and are locally restarted [Conformance]',
  '[sig-apps] Daemon set [Serial] should run and stop simple daemon [Conformance]',
  '[sig-api-machinery] AdmissionWebhook [Privileged:ClusterAdmin] should be able to deny pod and configmap creation [Conformance]',
  '[sig-cli] Kubectl logs logs should be able to retrieve and filter logs [Conformance]',
  '[sig-cli] Kubectl client Kubectl describe should check if kubectl describe prints relevant information for rc and pods [Conformance]',
  '[sig-cli] Kubectl Port forwarding With a server listening on localhost should support forwarding over websockets',
  '[sig-node] Pods should support remote command execution over websockets [NodeConformance] [Conformance]',
  '[sig-auth] ServiceAccounts should mount projected service account token [Conformance]',
  '[sig-node] Variable Expansion should allow substituting values in a volume subpath [Conformance]',
  '[sig-scheduling] SchedulerPreemption [Serial] validates basic preemption works [Conformance]',
];

describe('npm run conformance -- --suite conformance on the CI subset (two kubelet-split nodes)', { timeout: 45 * 60_000 }, () => {
  it(`passes each of the ${CLUSTER_CI_SUBSET.length} specs, every one in the report, and leaves the machine's iptables rules and sysctls as they were`, async () => {
    const { code, output, summary, cleanUp } = await runSubset(CLUSTER_CI_SUBSET, ['--suite', 'conformance', '--nodes', '2', '--procs', '3']);
    assert.match(summary, /the machine's iptables rules \(iptables-save, both families\) and the watched sysctls were as before it/, `the run left the machine changed:\n${summary}`);
    assert.equal(code, 0, `npm run conformance exited ${code}:\n${output.slice(-3000)}`);
    // Kept when an assertion failed, for looking into it.
    cleanUp();
  });
});
