/**
 * Grace periods, in seconds, as the kubelet computes them.
 *
 *  - podTerminationGracePeriod mirrors pod_workers.go
 *    calculateEffectiveGracePeriod: the grace period of a terminating pod,
 *    which the pod worker hands to killPod as its override (UpdatePod sets
 *    KillPodOptions.PodTerminationGracePeriodSecondsOverride to it).
 *  - killContainerGracePeriod mirrors kuberuntime_container.go killContainer
 *    with setTerminationGracePeriod: the timeout given to CRI StopContainer.
 *  - preStopHookTimeoutSeconds is the budget killContainer gives the preStop
 *    hook (executePreStopHook's gracePeriod).
 *  - remainingGracePeriodSeconds is what is left after the hook: the most a
 *    sidecar waits for its turn (termination-order.ts).
 *
 * Unset `spec.terminationGracePeriodSeconds` counts as 30, the API server's
 * default (DefaultTerminationGracePeriodSeconds; applyPodDefaults sets it for
 * static pods). Upstream never sees it unset except on a spec rebuilt from
 * container labels, where it falls back to the 2s minimum instead.
 */
import type { Container, Pod } from '@app/contracts';

/** minimumGracePeriodInSeconds (kuberuntime_manager.go): "a minimal shutdown window for avoiding unnecessary SIGKILLs". */
export const MINIMUM_GRACE_PERIOD_SECONDS = 2;
/** v1.DefaultTerminationGracePeriodSeconds. */
export const DEFAULT_TERMINATION_GRACE_PERIOD_SECONDS = 30;

export interface KillReasonInput {
  pod: Pod;
  /** The container being killed; its probe decides the probe-level grace period. */
  container?: Container;
  /** Why: a failed liveness or startup probe may carry its own grace period (containerKillReason). */
  reason?: 'liveness' | 'startup' | 'other';
  /** killContainer's gracePeriodOverride: the pod worker's effective grace period when the pod terminates, 1 for orphans, eviction's. */
  gracePeriodOverride?: number;
  /** How long the preStop hook took (whole seconds, truncated); pass it only when the hook ran. */
  preStopDurationSeconds?: number;
  /** How long a sidecar waited for its turn (terminationOrdering.waitForTurn, seconds); pass it only when it waited. */
  waitedForTurnSeconds?: number;
}

/** The grace period to kill a container with: the timeout of CRI StopContainer. */
export function killContainerGracePeriod(input: KillReasonInput): number {
  // killContainer: `if gracePeriod < minimumGracePeriodInSeconds { gracePeriod = minimumGracePeriodInSeconds }`,
  // after the override too: even an override of 0 or 1 stops with 2s.
  return Math.max(remainingGracePeriodSeconds(input), MINIMUM_GRACE_PERIOD_SECONDS);
}

/**
 * What is left of the grace period after the preStop hook (and a sidecar's
 * wait for its turn), before the 2s minimum: what a sidecar may wait for its
 * turn at most (killContainer's `ordering.waitForTurn(containerName, gracePeriod)`).
 */
export function remainingGracePeriodSeconds(input: KillReasonInput): number {
  let grace = preStopHookTimeoutSeconds(input);
  // killContainer: `if containerSpec.Lifecycle.PreStop != nil && gracePeriod > 0 { gracePeriod -= executePreStopHook(...) }`
  if (input.preStopDurationSeconds !== undefined && grace > 0) grace -= input.preStopDurationSeconds;
  // `if ordering != nil && gracePeriod > 0 { gracePeriod -= int64(ordering.waitForTurn(containerName, gracePeriod)) }`
  if (input.waitedForTurnSeconds !== undefined && grace > 0) grace -= Math.trunc(input.waitedForTurnSeconds);
  return grace;
}

/**
 * The grace period before the preStop hook runs, which is the hook's
 * timeout; 0 or less means killContainer skips the hook (`gracePeriod > 0`).
 */
export function preStopHookTimeoutSeconds(input: KillReasonInput): number {
  // killContainer: `if gracePeriodOverride != nil { gracePeriod = *gracePeriodOverride }`: replaces, whatever its size.
  if (input.gracePeriodOverride !== undefined) return input.gracePeriodOverride;
  return setTerminationGracePeriod(input.pod, input.container, input.reason ?? 'other');
}

/**
 * setTerminationGracePeriod: the pod's deletion grace period wins outright
 * (a probe's own grace period does not shorten a deletion); otherwise a kill
 * for a failed liveness or startup probe uses that probe's
 * terminationGracePeriodSeconds when set, and everything else the pod's.
 */
function setTerminationGracePeriod(pod: Pod, container: Container | undefined, reason: 'liveness' | 'startup' | 'other'): number {
  // `case pod.DeletionGracePeriodSeconds != nil: return *pod.DeletionGracePeriodSeconds`
  const deletion = pod.metadata.deletionGracePeriodSeconds;
  if (deletion !== undefined && deletion !== null) return deletion;
  // `case reasonStartupProbe: if isProbeTerminationGracePeriodSecondsSet(... StartupProbe ...)`
  const probe = reason === 'startup' ? container?.startupProbe : reason === 'liveness' ? container?.livenessProbe : undefined;
  const probeGrace = probe?.terminationGracePeriodSeconds;
  if (probeGrace !== undefined && probeGrace !== null) return probeGrace;
  // `return *pod.Spec.TerminationGracePeriodSeconds`
  return podSpecGracePeriod(pod);
}

/**
 * calculateEffectiveGracePeriod: the grace period of a pod being terminated.
 * `previous` is the value already in force (podSyncStatus.gracePeriod) for a
 * pod that is terminating already: a grace period only ever shortens.
 */
export function podTerminationGracePeriod(pod: Pod, override?: number, previous?: number): number {
  let grace = previous ?? 0;
  let overridden = false;
  // "this value is bedrock truth - the apiserver owns telling us this value"
  const deletion = pod.metadata.deletionGracePeriodSeconds;
  if (deletion !== undefined && deletion !== null && (grace === 0 || deletion < grace)) {
    grace = deletion;
    overridden = true;
  }
  // "we allow other parts of the kubelet (namely eviction) to request this pod be terminated faster"
  if (override !== undefined && (grace === 0 || override < grace)) {
    grace = override;
    overridden = true;
  }
  // "make a best effort to default this value to the pod's desired intent": not when an override asked for 0.
  if (!overridden && grace === 0) grace = podSpecGracePeriod(pod);
  // "no matter what, we always supply a grace period of 1"
  return Math.max(grace, 1);
}

/** Maps a ContainerToKill reason (pod-actions.ts) to the grace-period reason. */
export function graceReasonOf(killReason: string): 'liveness' | 'startup' | 'other' {
  if (killReason === 'LivenessProbe') return 'liveness';
  if (killReason === 'StartupProbe') return 'startup';
  return 'other';
}

function podSpecGracePeriod(pod: Pod): number {
  return pod.spec.terminationGracePeriodSeconds ?? DEFAULT_TERMINATION_GRACE_PERIOD_SECONDS;
}
