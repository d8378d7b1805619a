/**
 * What the status manager sends to the apiserver for one pod, as pure
 * functions: pkg/kubelet/status/status_manager.go mergePodStatus (the
 * kubelet's status merged into the API's), pkg/util/pod PatchPodStatus's
 * patch (a strategic-merge patch of the status with metadata.uid as a
 * precondition), and the mirror-pod test of the pod manager
 * (IsMirrorPodOf). The sync that uses them is api-status-sync.ts.
 */
import { POD_STATUS_MERGE_KEYS, createTwoWayMergePatch } from '@app/apiserver';
import type { Pod, PodCondition, PodStatus } from '@app/contracts';
import { ConfigHashAnnotation, ConfigMirrorAnnotation, PodConditionType, isPodPhaseTerminal, podConditionByKubelet, podConditionSharedByKubelet, rfc3339 } from '@app/kube';

/**
 * mergePodStatus: the status to write, from the API's (`oldStatus`) and the
 * kubelet's (`newStatus`).
 *  - Conditions the kubelet does not own are kept from the API's
 *    (DisruptionTarget, readiness gates' conditions, others'); the ones it
 *    owns come from the kubelet's. The kubelet's DisruptionTarget is only
 *    sent with the terminal phase, once no container can still run.
 *  - resourceClaimStatuses and extendedResourceClaimStatus are not the
 *    kubelet's: kept from the API's.
 *  - A pod becomes terminal only when none of its containers can still run
 *    (`couldHaveRunningContainers` false): until then the API's phase,
 *    reason and message are kept.
 *  - A terminal phase in the API is never left (upstream's
 *    generateAPIPodStatus keeps it; here the last writer keeps it too, so
 *    that no older view can undo it).
 *  - A terminal phase is sent with Ready and ContainersReady False.
 * Neither argument is changed.
 */
export function mergePodStatus(oldStatus: PodStatus, newStatus: PodStatus, couldHaveRunningContainers: boolean, now: number): PodStatus {
  const merged = structuredClone(newStatus);
  const conditions: PodCondition[] = (oldStatus.conditions ?? []).filter((c) => !podConditionByKubelet(c.type)).map((c) => structuredClone(c));
  const transitioningToTerminalPhase = !isPodPhaseTerminal(oldStatus.phase) && isPodPhaseTerminal(newStatus.phase);
  for (const c of merged.conditions ?? []) {
    if (podConditionByKubelet(c.type)) {
      conditions.push(c);
    } else if (podConditionSharedByKubelet(c.type) && c.type === PodConditionType.DisruptionTarget && transitioningToTerminalPhase && !couldHaveRunningContainers) {
      const before = oldStatus.conditions?.find((o) => o.type === c.type);
      c.lastTransitionTime = before && before.status === c.status && before.lastTransitionTime ? before.lastTransitionTime : rfc3339(now);
      replaceOrAppend(conditions, c);
    }
  }
  merged.conditions = conditions;
  if (oldStatus.resourceClaimStatuses) merged.resourceClaimStatuses = structuredClone(oldStatus.resourceClaimStatuses);
  else delete merged.resourceClaimStatuses;
  const extended = (oldStatus as { extendedResourceClaimStatus?: unknown }).extendedResourceClaimStatus;
  if (extended !== undefined) (merged as { extendedResourceClaimStatus?: unknown }).extendedResourceClaimStatus = structuredClone(extended);

  const keepOldPhase = (transitioningToTerminalPhase && couldHaveRunningContainers) || (isPodPhaseTerminal(oldStatus.phase) && merged.phase !== oldStatus.phase);
  if (keepOldPhase) {
    setOrDelete(merged, 'phase', oldStatus.phase);
    setOrDelete(merged, 'reason', oldStatus.reason);
    setOrDelete(merged, 'message', oldStatus.message);
  }

  if (isPodPhaseTerminal(merged.phase)) {
    const readyTrue = (type: string) => merged.conditions?.some((c) => c.type === type && c.status === 'True');
    if (readyTrue(PodConditionType.PodReady) || readyTrue(PodConditionType.ContainersReady)) {
      const reason = merged.phase === 'Failed' ? 'PodFailed' : 'PodCompleted';
      for (const type of [PodConditionType.ContainersReady, PodConditionType.PodReady]) updatePodCondition(merged, { type, status: 'False', reason }, now);
    }
  }
  return merged;
}

/** podutil.UpdatePodCondition: the condition replaced; its lastTransitionTime kept while its status holds. */
function updatePodCondition(status: PodStatus, c: PodCondition, now: number): void {
  const conditions = (status.conditions ??= []);
  const i = conditions.findIndex((x) => x.type === c.type);
  const before = conditions[i];
  const lastTransitionTime = before && before.status === c.status && before.lastTransitionTime ? before.lastTransitionTime : rfc3339(now);
  const next: PodCondition = { ...c, lastTransitionTime, lastProbeTime: before?.lastProbeTime ?? null };
  if (i >= 0) conditions[i] = next;
  else conditions.push(next);
}

function replaceOrAppend(conditions: PodCondition[], c: PodCondition): void {
  const i = conditions.findIndex((x) => x.type === c.type);
  if (i >= 0) conditions[i] = c;
  else conditions.push(c);
}

function setOrDelete<K extends 'phase' | 'reason' | 'message'>(status: PodStatus, key: K, value: PodStatus[K]): void {
  if (value === undefined || value === null) delete status[key];
  else status[key] = value;
}

/**
 * Fields that are pointers in Go: an empty `running: {}` is a running
 * container and `started: false` is not "unknown", so they are kept when
 * zero; every other zero value is what Go leaves out (or the apiserver
 * reads as zero), so it is left out too.
 */
const POINTER_FIELDS: ReadonlySet<string> = new Set(['running', 'waiting', 'terminated', 'started', 'allocatedResources', 'resources', 'user', 'stopSignal']);

/**
 * A status in the form the apiserver gives it back: zero values left out
 * (omitempty), times at second precision already (normalizeStatus), so that
 * comparing ours with the API's sees only real differences.
 */
export function apiJson(value: unknown, field?: string): unknown {
  if (value === null || value === undefined) return undefined;
  const pointer = field !== undefined && POINTER_FIELDS.has(field);
  if (Array.isArray(value)) {
    const items = value.map((v) => apiJson(v)).filter((v) => v !== undefined);
    return items.length === 0 ? undefined : items;
  }
  if (typeof value === 'object') {
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(value)) {
      const c = apiJson(v, k);
      if (c !== undefined) out[k] = c;
    }
    return Object.keys(out).length === 0 && !pointer ? undefined : out;
  }
  if (!pointer && (value === '' || value === 0 || value === false)) return undefined;
  return value;
}

/**
 * preparePatchBytesForPodStatus: the strategic-merge patch of the status
 * subresource from the API's status to `newStatus`, with `metadata.uid`
 * (the apiserver refuses it with 409 Conflict when the pod of that name
 * is another one now); `unchanged` when it would change nothing but the
 * precondition.
 */
export function preparePodStatusPatch(uid: string, oldStatus: PodStatus, newStatus: PodStatus): { patch: Record<string, unknown>; unchanged: boolean } {
  const original = { status: apiJson(oldStatus) ?? {} };
  const modified = { metadata: { uid }, status: apiJson(newStatus) ?? {} };
  const patch = createTwoWayMergePatch(original, modified, POD_STATUS_MERGE_KEYS);
  return { patch, unchanged: Object.keys(patch).length === 1 && patch['metadata'] !== undefined };
}

/** kubepod.IsMirrorPodOf: `mirror` is the apiserver's mirror of the static pod `pod` (same name and namespace, its config hash). */
export function isMirrorPodOf(mirror: Pod, pod: Pod): boolean {
  const hash = pod.metadata.annotations?.[ConfigHashAnnotation];
  return (
    mirror.metadata.name === pod.metadata.name &&
    mirror.metadata.namespace === pod.metadata.namespace &&
    hash !== undefined &&
    mirror.metadata.annotations?.[ConfigMirrorAnnotation] === hash
  );
}
