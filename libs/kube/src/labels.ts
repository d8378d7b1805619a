/**
 * The labels the kubelet puts on CRI sandboxes and containers
 * (pkg/kubelet/types/labels.go), by which a runtime pod is found again.
 */
export const KubeletLabels = {
  podName: 'io.kubernetes.pod.name',
  podNamespace: 'io.kubernetes.pod.namespace',
  podUid: 'io.kubernetes.pod.uid',
  containerName: 'io.kubernetes.container.name',
  /**
   * kubelet-split's own: the node whose stack made the sandbox or container.
   * The PLEG and the sync loop's housekeeping only look at their node's, so
   * two stacks on one containerd (a test run beside a dev stack) never touch
   * each other's pods.
   */
  node: 'kubelet-split.io/node',
} as const;
