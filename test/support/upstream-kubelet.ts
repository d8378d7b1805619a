/**
 * The upstream kubelet v1.34.4 as this project runs it beside kubelet-split
 * (the bench, `npm run conformance --kubelet upstream`), through
 * deploy/upstream-kubelet/run.sh in a private mount namespace with a containerd of its
 * own: what every such KubeletConfiguration holds for this kind of machine.
 */

/**
 * The machine's settings: cgroupfs with no QoS tree and no node allocatable
 * enforcement (kubelet-split's own pod cgroups are elsewhere), swap and
 * cgroup v1 allowed, no iptables chains and no oom_score_adj of its own (the
 * sandbox has no CAP_SYS_RESOURCE).
 */
export const UPSTREAM_KUBELET_MACHINE_SETTINGS = {
  apiVersion: 'kubelet.config.k8s.io/v1beta1',
  kind: 'KubeletConfiguration',
  cgroupDriver: 'cgroupfs',
  cgroupsPerQOS: false,
  enforceNodeAllocatable: [],
  failSwapOn: false,
  failCgroupV1: false,
  makeIPTablesUtilChains: false,
  oomScoreAdj: 0,
} as const;

/** A KubeletConfiguration as run.sh reads it (DIR/kubelet-config.yaml): JSON is YAML, no YAML writer needed. */
export function kubeletConfigYaml(settings: Record<string, unknown>): string {
  return `${JSON.stringify({ ...UPSTREAM_KUBELET_MACHINE_SETTINGS, ...settings }, null, 2)}\n`;
}
