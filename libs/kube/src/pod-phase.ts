/**
 * A pod's phase from its container statuses: getPhase in
 * pkg/kubelet/kubelet_pods.go, which generateAPIPodStatus calls, with the
 * ContainerRestartRules gate off. A terminal phase (Succeeded, Failed) is
 * never left: generateAPIPodStatus keeps it, the status manager refuses to
 * leave it.
 */
import type { ContainerStatus, Pod, PodPhase } from '@app/contracts';
import { isRestartableInitContainer } from './pod-util.js';
import { isStaticPod } from './static-pod.js';

export function isPodPhaseTerminal(phase?: string): phase is 'Succeeded' | 'Failed' {
  return phase === 'Succeeded' || phase === 'Failed';
}

/** The pod's restart policy; validation admits only these three, and the API defaults to Always. */
function restartPolicyOf(pod: Pod): 'Always' | 'OnFailure' | 'Never' {
  const policy = pod.spec.restartPolicy;
  return policy === 'OnFailure' || policy === 'Never' ? policy : 'Always';
}

export interface PodPhaseOptions {
  /** The pod worker decided the pod is terminal: its containers will not be restarted. */
  podIsTerminal?: boolean;
  /** A regular container of the current sandbox has started (HasAnyActiveRegularContainerStarted). */
  podHasInitialized?: boolean;
}

/**
 * getPhase: the phase from the API container statuses (regular and init, as
 * generateAPIPodStatus passes them). Follows the kubelet with the
 * ContainerRestartRules gate off: an init container that failed fails the
 * pod only under restartPolicy Never.
 */
export function computePodPhase(pod: Pod, statuses: readonly ContainerStatus[], options: PodPhaseOptions = {}): PodPhase {
  const spec = pod.spec;
  const policy = restartPolicyOf(pod);
  const byName = new Map<string, ContainerStatus>();
  for (const s of statuses) if (!byName.has(s.name)) byName.set(s.name, s);

  let pendingRegularInit = 0;
  let pendingRestartableInit = 0;
  let failedInitialization = 0;
  for (const c of spec.initContainers ?? []) {
    if (isRestartableInitContainer(c)) continue;
    const s = byName.get(c.name);
    const state = s?.state;
    if (!s || !state) {
      pendingRegularInit++;
    } else if (state.running) {
      pendingRegularInit++;
    } else if (state.terminated) {
      if (state.terminated.exitCode !== 0) failedInitialization++;
    } else if (state.waiting) {
      const last = s.lastState?.terminated;
      if (!last) pendingRegularInit++;
      else if (last.exitCode !== 0) failedInitialization++;
    } else {
      pendingRegularInit++;
    }
  }

  let unknown = 0;
  let running = 0;
  let waiting = 0;
  let stopped = 0;
  let succeeded = 0;
  for (const c of spec.initContainers ?? []) {
    if (!isRestartableInitContainer(c)) continue;
    const s = byName.get(c.name);
    const state = s?.state;
    if (!s) {
      unknown++;
    } else if (state?.running) {
      if (s.started !== true) pendingRestartableInit++;
      running++;
    } else if (state?.terminated) {
      // A stopped sidecar does not count towards the phase.
    } else if (state?.waiting) {
      if (!s.lastState?.terminated) {
        pendingRestartableInit++;
        waiting++;
      }
    } else {
      pendingRestartableInit++;
      unknown++;
    }
  }
  for (const c of spec.containers) {
    const s = byName.get(c.name);
    const state = s?.state;
    if (!s) {
      unknown++;
    } else if (state?.running) {
      running++;
    } else if (state?.terminated) {
      stopped++;
      if (state.terminated.exitCode === 0) succeeded++;
    } else if (state?.waiting) {
      if (s.lastState?.terminated) stopped++;
      else waiting++;
    } else {
      unknown++;
    }
  }

  if (failedInitialization > 0 && policy === 'Never') return 'Failed';
  // Sidecars still starting hold the pod in Pending only until the regular
  // containers have run: a sidecar restarting later does not.
  if (pendingRegularInit > 0 || (pendingRestartableInit > 0 && !options.podHasInitialized) || waiting > 0) return 'Pending';
  if (running > 0 && unknown === 0) return 'Running';
  if (running === 0 && stopped > 0 && unknown === 0) {
    // A terminal pod's containers will not be restarted, whatever the policy
    // (upstream does not yet give static pods a terminal phase: #116484).
    if (options.podIsTerminal && !isStaticPod(pod)) return stopped === succeeded ? 'Succeeded' : 'Failed';
    if (policy === 'Always') return 'Running';
    if (stopped === succeeded) return 'Succeeded';
    if (policy === 'Never') return 'Failed';
    // OnFailure, a container failed and is being restarted.
    return 'Running';
  }
  return 'Pending';
}
