/**
 * The eviction manager's rules that are not its loop: its admission of a new
 * pod under node pressure (pkg/kubelet/eviction/eviction_manager.go Admit),
 * the critical-pod test it shares with admission (pkg/kubelet/types
 * IsCriticalPod), and its reason. The loop itself (synchronize, ranking,
 * messages) is the sync loop's (apps/sync-loop/src/eviction/).
 */
import type { Pod, PodStatus, Toleration } from '@app/contracts';
import { getPodQOS } from './qos.js';
import { isMirrorPod, isStaticPod } from './static-pod.js';
import type { AdmitResult } from './admission.js';

/** helpers.go Reason: the status reason of an evicted pod, and of a pod refused under pressure. */
export const EVICTION_REASON = 'Evicted';

/** eviction/helpers.go PodIsEvicted: Failed, with the eviction's reason. */
export function podIsEvicted(status: PodStatus | undefined): boolean {
  return status?.phase === 'Failed' && status.reason === EVICTION_REASON;
}

/** scheduling.SystemCriticalPriority: priorities from here up are critical. */
export const SYSTEM_CRITICAL_PRIORITY = 2 * 1_000_000_000;

/** v1.TaintNodeMemoryPressure. */
export const TAINT_NODE_MEMORY_PRESSURE = 'node.kubernetes.io/memory-pressure';

/** types.IsCriticalPod: static and mirror pods, and pods at system-critical priority. */
export function isCriticalPod(pod: Pod): boolean {
  if (isStaticPod(pod) || isMirrorPod(pod)) return true;
  return pod.spec.priority !== undefined && pod.spec.priority >= SYSTEM_CRITICAL_PRIORITY;
}

/** corev1helpers ToleratesTaint for a taint without a value. */
function tolerates(t: Toleration, key: string, effect: string): boolean {
  if (t.effect && t.effect !== effect) return false;
  if (t.key && t.key !== key) return false;
  if (!t.key && t.operator !== 'Exists') return false;
  return t.operator === 'Exists' || !t.value;
}

/**
 * The eviction manager's Admit: with no node condition every pod is
 * admitted, and critical pods always; under memory pressure alone a pod that
 * is not BestEffort, or that tolerates the memory-pressure taint; under any
 * other condition none. The refusal's message names the conditions as Go
 * prints the list ("The node had condition: [MemoryPressure]. ").
 */
export function evictionAdmit(pod: Pod, nodeConditions: readonly string[]): AdmitResult {
  if (nodeConditions.length === 0 || isCriticalPod(pod)) return { admit: true };
  if (nodeConditions.length === 1 && nodeConditions[0] === 'MemoryPressure') {
    if (getPodQOS(pod) !== 'BestEffort') return { admit: true };
    if ((pod.spec.tolerations ?? []).some((t) => tolerates(t, TAINT_NODE_MEMORY_PRESSURE, 'NoSchedule'))) return { admit: true };
  }
  return { admit: false, reason: EVICTION_REASON, message: `The node had condition: [${nodeConditions.join(' ')}]. ` };
}
