/**
 * The labels the kubelet puts on CRI sandboxes and containers
 * (pkg/kubelet/types/labels.go), by which a runtime pod is found again.
 */
export const KubeletLabels = {
  podName: 'io.kubernetes.pod.name',
  podNamespace: 'io.kubernetes.pod.namespace',
  podUid: 'io.kubernetes.pod.uid',
  containerName: 'io.kubernetes.container.name',
} as const;
