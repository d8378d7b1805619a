/**
 * The pod conditions the kubelet generates (pkg/kubelet/status/generate.go):
 * PodReadyToStartContainers, Initialized, ContainersReady and Ready, with
 * their reasons and messages as upstream words them; and the
 * lastTransitionTime bookkeeping of status_manager.go updateStatusInternal.
 * Which conditions the kubelet owns is kubetypes.ts's.
 *
 * containersReadyCondition and podReadyCondition serve the status manager
 * too, which recomputes them when a readiness result comes in
 * (SetContainerReadiness).
 */
import type { Container, ContainerStatus, Pod, PodCondition, PodPhase, PodSpec, PodStatus } from '@app/contracts';
import { rfc3339 } from './api-time.js';
import { podSandboxChanged } from './kuberuntime.js';
import { PodConditionType } from './kubetypes.js';
import { findContainerStatusByID, getContainerStatus, isRestartableInitContainer } from './pod-util.js';
import type { RuntimePodStatus } from './runtime-status.js';

const { PodScheduled, PodReady, PodInitialized, ContainersReady, PodReadyToStartContainers, DisruptionTarget } = PodConditionType;

// Condition reasons (status/generate.go). UnknownContainerStatuses is not
// one of them: it answers a nil status list, and we always have one per spec
// container.
const PodCompleted = 'PodCompleted';
const PodFailedReason = 'PodFailed';
const ContainersNotReady = 'ContainersNotReady';
const ContainersNotInitialized = 'ContainersNotInitialized';
const ReadinessGatesNotReady = 'ReadinessGatesNotReady';

/** Go's %s of a []string: [a b]. */
const goList = (names: readonly string[]): string => `[${names.join(' ')}]`;

export function condition(type: string, status: PodCondition['status'], reason?: string, message?: string): PodCondition {
  return { type, status, ...(reason ? { reason } : {}), ...(message ? { message } : {}) };
}

/** GeneratePodReadyToStartContainersCondition: the sandbox exists and needs no replacing (PodSandboxChanged). */
export function podReadyToStartContainersCondition(pod: Pod, podStatus: RuntimePodStatus): PodCondition {
  return condition(PodReadyToStartContainers, podSandboxChanged(pod, podStatus).changed ? 'False' : 'True');
}

/** GeneratePodInitializedCondition */
export function podInitializedCondition(pod: Pod, statuses: readonly ContainerStatus[], phase: PodPhase): PodCondition {
  const unknown: string[] = [];
  const incomplete: string[] = [];
  for (const c of pod.spec.initContainers ?? []) {
    const s = getContainerStatus(statuses, c.name);
    if (!s) {
      unknown.push(c.name);
      continue;
    }
    const initialized = isRestartableInitContainer(c) ? s.started === true : s.ready;
    if (!initialized) incomplete.push(c.name);
  }
  if (phase === 'Succeeded' && unknown.length === 0) return condition(PodInitialized, 'True', PodCompleted);
  // A regular container that ran means the pod was initialized, even if a
  // sidecar is restarting now.
  if (hasAnyRegularContainerStarted(pod, statuses)) return condition(PodInitialized, 'True');
  const messages: string[] = [];
  if (unknown.length > 0) messages.push(`containers with unknown status: ${goList(unknown)}`);
  if (incomplete.length > 0) messages.push(`containers with incomplete status: ${goList(incomplete)}`);
  if (messages.length > 0) return condition(PodInitialized, 'False', ContainersNotInitialized, messages.join(', '));
  return condition(PodInitialized, 'True');
}

/** kubecontainer.HasAnyRegularContainerStarted */
function hasAnyRegularContainerStarted(pod: Pod, statuses: readonly ContainerStatus[]): boolean {
  const names = new Set(pod.spec.containers.map((c) => c.name));
  return statuses.some((s) => names.has(s.name) && (s.state?.running !== undefined || s.state?.terminated !== undefined));
}

/** GenerateContainersReadyCondition: regular containers and sidecars all ready (also the status manager's, on readiness updates). */
export function containersReadyCondition(spec: PodSpec, statuses: readonly ContainerStatus[], phase: PodStatus['phase']): PodCondition {
  if (statuses.length === 0) return condition(ContainersReady, 'False', 'UnknownContainerStatuses');
  const unknown: string[] = [];
  const unready: string[] = [];
  const check = (c: Container): void => {
    const s = getContainerStatus(statuses, c.name);
    if (!s) unknown.push(c.name);
    else if (!s.ready) unready.push(c.name);
  };
  for (const c of spec.initContainers ?? []) if (isRestartableInitContainer(c)) check(c);
  for (const c of spec.containers) check(c);

  if (phase === 'Succeeded' && unknown.length === 0) return condition(ContainersReady, 'False', PodCompleted);
  // A failed pod's containers may still be terminating: not ready.
  if (phase === 'Failed') return condition(ContainersReady, 'False', PodFailedReason);
  const messages: string[] = [];
  if (unknown.length > 0) messages.push(`containers with unknown status: ${goList(unknown)}`);
  if (unready.length > 0) messages.push(`containers with unready status: ${goList(unready)}`);
  if (messages.length > 0) return condition(ContainersReady, 'False', ContainersNotReady, messages.join(', '));
  return condition(ContainersReady, 'True');
}

/** GeneratePodReadyCondition: containers ready and every readiness gate's condition True. */
export function podReadyCondition(spec: PodSpec, conditions: readonly PodCondition[], statuses: readonly ContainerStatus[], phase: PodStatus['phase']): PodCondition {
  const containersReady = containersReadyCondition(spec, statuses, phase);
  if (containersReady.status !== 'True') return { ...containersReady, type: PodReady };
  const messages: string[] = [];
  for (const gate of spec.readinessGates ?? []) {
    const c = conditions.find((x) => x.type === gate.conditionType);
    if (!c) messages.push(`corresponding condition of pod readiness gate ${JSON.stringify(gate.conditionType)} does not exist.`);
    else if (c.status !== 'True') messages.push(`the status of pod readiness gate ${JSON.stringify(gate.conditionType)} is not "True", but ${c.status}`);
  }
  if (messages.length > 0) return condition(PodReady, 'False', ReadinessGatesNotReady, messages.join(', '));
  return condition(PodReady, 'True');
}

/** The conditions status_manager.go updateStatusInternal stamps with a lastTransitionTime (updateLastTransitionTime). */
const TRANSITION_STAMPED: readonly string[] = [ContainersReady, PodReady, PodInitialized, PodReadyToStartContainers, PodScheduled, DisruptionTarget];

/**
 * updateLastTransitionTime, for each condition type updateStatusInternal
 * stamps: the old condition's time while its status holds, else now.
 * Upstream keeps even a zero old time; we stamp one, so the field is never
 * empty.
 */
export function updateLastTransitionTimes(conditions: readonly PodCondition[] | undefined, old: readonly PodCondition[] | undefined, now: number): void {
  for (const c of conditions ?? []) {
    if (!TRANSITION_STAMPED.includes(c.type)) continue;
    const before = old?.find((o) => o.type === c.type);
    c.lastTransitionTime = before && before.status === c.status && before.lastTransitionTime ? before.lastTransitionTime : rfc3339(now);
  }
}

/**
 * SetContainerReadiness and SetContainerStartup (status_manager.go) on a copy
 * of `status`: the container's `ready` (a readiness result) or `started` (a
 * startup result) set, and for readiness the Ready and ContainersReady
 * conditions recomputed from it. Undefined when no container has the ID;
 * `status` itself when the flag says so already. The status manager applies
 * each result to what it holds; a reader of the `pod-status` bucket (the
 * kubelet server's `/pods`) applies the `probe-results` bucket the same way,
 * for the results no status manager has saved yet.
 */
export function withContainerProbeResult(status: PodStatus, spec: PodSpec, containerId: string, probeType: 'readiness' | 'startup', ok: boolean): PodStatus | undefined {
  const flag = probeType === 'readiness' ? 'ready' : 'started';
  const found = findContainerStatusByID(status, containerId);
  if (!found) return undefined;
  if (found[flag] === ok) return status;
  const next = structuredClone(status);
  const target = findContainerStatusByID(next, containerId);
  if (target) target[flag] = ok;
  if (probeType === 'startup') return next;
  const all = [...(next.initContainerStatuses ?? []), ...(next.containerStatuses ?? [])];
  replaceOrAppendCondition(next, podReadyCondition(spec, next.conditions ?? [], all, next.phase));
  replaceOrAppendCondition(next, containersReadyCondition(spec, all, next.phase));
  return next;
}

function replaceOrAppendCondition(status: PodStatus, c: PodCondition): void {
  const conditions = (status.conditions ??= []);
  const i = conditions.findIndex((x) => x.type === c.type);
  if (i >= 0) conditions[i] = c;
  else conditions.push(c);
}
