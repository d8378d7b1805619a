/**
 * The kubelet's pod condition ownership and pod helpers (pkg/kubelet/types,
 * `kubetypes`): pod_status.go PodConditionsByKubelet, PodConditionByKubelet
 * and PodConditionSharedByKubelet; pod_update.go HasRestartableInitContainer.
 *
 * Two sets, two uses:
 *  - owned (PodConditionByKubelet): generateAPIPodStatus drops these from the
 *    old status and generates them afresh; every other condition is kept;
 *  - owned or shared (adds DisruptionTarget, which the eviction managers set
 *    and the kubelet carries over): the status manager's
 *    isPodStatusByKubeletEqual compares these, and only these.
 */
import type { Pod } from '@app/contracts';
import { isRestartableInitContainer } from './pod-util.js';

/** The v1 pod condition types the kubelet deals in. */
export const PodConditionType = {
  PodScheduled: 'PodScheduled',
  PodReady: 'Ready',
  PodInitialized: 'Initialized',
  ContainersReady: 'ContainersReady',
  PodReadyToStartContainers: 'PodReadyToStartContainers',
  PodResizePending: 'PodResizePending',
  PodResizeInProgress: 'PodResizeInProgress',
  DisruptionTarget: 'DisruptionTarget',
} as const;

/**
 * PodConditionsByKubelet, with PodReadyToStartContainers (upstream adds it
 * while its feature gate is on, the default since v1.29).
 */
export const PodConditionsByKubelet: readonly string[] = [
  PodConditionType.PodScheduled,
  PodConditionType.PodReady,
  PodConditionType.PodInitialized,
  PodConditionType.ContainersReady,
  PodConditionType.PodResizeInProgress,
  PodConditionType.PodResizePending,
  PodConditionType.PodReadyToStartContainers,
];

/** PodConditionByKubelet: the kubelet owns and regenerates this condition type. */
export function podConditionByKubelet(conditionType: string): boolean {
  return PodConditionsByKubelet.includes(conditionType);
}

/** PodConditionSharedByKubelet: the kubelet shares this condition type with others (DisruptionTarget). */
export function podConditionSharedByKubelet(conditionType: string): boolean {
  return conditionType === PodConditionType.DisruptionTarget;
}

/** HasRestartableInitContainer: the pod has a sidecar. */
export function hasRestartableInitContainer(pod: Pod): boolean {
  return (pod.spec.initContainers ?? []).some(isRestartableInitContainer);
}
