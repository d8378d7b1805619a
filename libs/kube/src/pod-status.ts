/**
 * The kubelet's pod status generation, as a pure function: the runtime's view
 * of a pod (kubecontainer.PodStatus), the pod's spec and previous status, the
 * probe results and the last sync errors go in; the v1 PodStatus the status
 * manager publishes comes out. Nothing here reads a clock, the runtime or the
 * network: `now` is passed in.
 *
 * Upstream, in pkg/kubelet:
 *
 *   generateAPIPodStatus (kubelet_pods.go)
 *     convertStatusToAPIStatus -> convertToAPIContainerStatuses    containerStatuses, initContainerStatuses, podIPs, qosClass
 *     getPhase                                                     phase; a terminal old phase is kept
 *     PodSyncHandlers.ShouldEvict (activeDeadlineSeconds)          podFailure
 *     probeManager.UpdatePodStatus (prober/prober_manager.go)       ready, started
 *     status.Generate*Condition (status/generate.go)               conditions
 *   statusManager.updateStatusInternal (status/status_manager.go)  lastTransitionTime, startTime
 *   statusManager.TerminatePod                                     terminatePodStatus
 *
 * Where this differs from upstream, the comment at the place says why.
 */
import type { Container, ContainerState, ContainerStateTerminated, ContainerStatus, Pod, PodCondition, PodPhase, PodSpec, PodStatus } from '@app/contracts';
import type { PodSandboxStatus } from '@app/cri';
import { parseQuantityNanos } from './quantity.js';
import type { RuntimeContainerStatus, RuntimePodStatus } from './runtime-status.js';
import { isStaticPod } from './static-pod.js';

/** The kubelet's reasonCache entry: why the last SyncPod could not start a container. */
export interface ContainerWaitingReason {
  reason: string;
  message: string;
}

export interface StatusInputs {
  /** Spec and metadata; pod.status is the previous status (oldPodStatus: the status manager's, else the API's). */
  pod: Pod;
  runtime: RuntimePodStatus;
  /** ms since the epoch. */
  now: number;
  hostIP?: string;
  /**
   * Readiness and startup probe results by the runtime's container ID (without
   * the `containerd://` prefix), true for Success; undefined when the probe
   * has not reported. A container without a readiness probe is ready once
   * running; without a startup probe, started once running.
   */
  readiness: (containerId: string) => boolean | undefined;
  startup: (containerId: string) => boolean | undefined;
  /**
   * The last sync errors by container name (ErrImagePull, ImagePullBackOff,
   * ErrImageNeverPull, CreateContainerError, RunContainerError,
   * CrashLoopBackOff, PostStartHookError, ...) with their messages.
   */
  waitingReasons: (containerName: string) => ContainerWaitingReason | undefined;
  /** The pod worker decided the pod is terminal or being terminated. */
  podIsTerminal?: boolean;
  /**
   * Set when syncPod failed the pod itself (activeDeadlineSeconds: reason
   * DeadlineExceeded, message "Pod was active on the node longer than the
   * specified deadline").
   */
  podFailure?: { reason: string; message: string };
}

export type PodQOSClass = 'Guaranteed' | 'Burstable' | 'BestEffort';

/** kubecontainer.ContainerID's type: the runtime behind the CRI socket. */
const RUNTIME_TYPE = 'containerd';

// Container state reasons (kubelet_pods.go, kubecontainer).
const PodInitializing = 'PodInitializing';
const ContainerCreating = 'ContainerCreating';
const ContainerStatusUnknown = 'ContainerStatusUnknown';
const UNKNOWN_AT_TERMINATION = 'The container could not be located when the pod was terminated';
const UNKNOWN_AFTER_RUNNING = 'The container could not be located when the pod was deleted.  The container used to be Running';
const INIT_INFERRED_COMPLETE = 'Unable to get init container status from container runtime and pod has been initialized, treat it as exited normally';

// Condition reasons (status/generate.go). UnknownContainerStatuses is not
// one of them: it answers a nil status list, and we always have one per spec
// container.
const PodCompleted = 'PodCompleted';
const PodFailedReason = 'PodFailed';
const ContainersNotReady = 'ContainersNotReady';
const ContainersNotInitialized = 'ContainersNotInitialized';
const ReadinessGatesNotReady = 'ReadinessGatesNotReady';

const PodScheduled = 'PodScheduled';
const PodReady = 'Ready';
const PodInitialized = 'Initialized';
const ContainersReady = 'ContainersReady';
const PodReadyToStartContainers = 'PodReadyToStartContainers';

/** kubetypes.PodConditionsByKubelet: regenerated on every sync; any other condition of the old status is kept. */
const KUBELET_CONDITIONS: ReadonlySet<string> = new Set([PodScheduled, PodReady, PodInitialized, ContainersReady, PodReadyToStartContainers, 'PodResizePending', 'PodResizeInProgress']);

/** The conditions updateStatusInternal stamps with a lastTransitionTime. */
const TRANSITION_STAMPED: readonly string[] = [ContainersReady, PodReady, PodInitialized, PodReadyToStartContainers, PodScheduled, 'DisruptionTarget'];

/** RFC 3339 at second precision, as metav1.Time marshals (sub-seconds truncated). */
function rfc3339(ms: number): string {
  return new Date(Math.floor(ms / 1000) * 1000).toISOString().replace('.000Z', 'Z');
}

function nsToMs(ns: string | undefined): number {
  if (!ns || !/^\d+$/.test(ns)) return 0;
  return Number(BigInt(ns) / 1_000_000n);
}

export function isPodPhaseTerminal(phase?: string): phase is 'Succeeded' | 'Failed' {
  return phase === 'Succeeded' || phase === 'Failed';
}

/** podutil.IsRestartableInitContainer: a sidecar. */
function isRestartableInitContainer(c: Container): boolean {
  return c.restartPolicy === 'Always';
}

/** The pod's restart policy; validation admits only these three, and the API defaults to Always. */
function restartPolicyOf(pod: Pod): 'Always' | 'OnFailure' | 'Never' {
  const policy = pod.spec.restartPolicy;
  return policy === 'OnFailure' || policy === 'Never' ? policy : 'Always';
}

/** The runtime status with containers and sandboxes newest first, whatever order the cache gave. */
function newestFirst(runtime: RuntimePodStatus): { containers: RuntimeContainerStatus[]; sandboxes: PodSandboxStatus[] } {
  const containers = [...runtime.containerStatuses].sort((a, b) => b.createdAt - a.createdAt);
  const sandboxes = [...runtime.sandboxStatuses].sort((a, b) => nsToMs(b.createdAt) - nsToMs(a.createdAt));
  return { containers, sandboxes };
}

// ---------------------------------------------------------------------------
// Container statuses (convertToAPIContainerStatuses)
// ---------------------------------------------------------------------------

interface ConvertContext {
  pod: Pod;
  /** Newest first. */
  containers: RuntimeContainerStatus[];
  hasInitContainers: boolean;
  waitingReasons: (containerName: string) => ContainerWaitingReason | undefined;
}

function containerIDOf(cs: RuntimeContainerStatus): string {
  return `${RUNTIME_TYPE}://${cs.id}`;
}

/** The runtime's container ID in a `<type>://<id>` string. */
function runtimeIdOf(containerID: string | undefined): string | undefined {
  if (!containerID) return undefined;
  const at = containerID.indexOf('://');
  return at < 0 ? containerID : containerID.slice(at + 3);
}

function terminatedFrom(cs: RuntimeContainerStatus): ContainerStateTerminated {
  return {
    exitCode: cs.exitCode,
    ...(cs.reason ? { reason: cs.reason } : {}),
    ...(cs.message ? { message: cs.message } : {}),
    ...(cs.startedAt > 0 ? { startedAt: rfc3339(cs.startedAt) } : {}),
    ...(cs.finishedAt > 0 ? { finishedAt: rfc3339(cs.finishedAt) } : {}),
    containerID: containerIDOf(cs),
  };
}

/** convertContainerStatus: one runtime instance as an API status. */
function convertRuntimeContainer(cs: RuntimeContainerStatus, spec: Container, old: ContainerStatus | undefined): ContainerStatus {
  const status: ContainerStatus = {
    name: cs.name,
    state: {},
    lastState: {},
    ready: false,
    restartCount: cs.restartCount,
    // Upstream reports the runtime's image name here; we keep the spec's, so
    // the status names the image the user asked for (the runtime may have
    // normalised it, e.g. docker.io/library/...).
    image: spec.image ?? cs.image,
    imageID: cs.imageRef,
    containerID: containerIDOf(cs),
  };
  switch (cs.state) {
    case 'running':
      status.state = { running: cs.startedAt > 0 ? { startedAt: rfc3339(cs.startedAt) } : {} };
      break;
    case 'created':
      // Created but not started: "waiting to be running".
      status.state = { waiting: {} };
      break;
    case 'exited':
      status.state = { terminated: terminatedFrom(cs) };
      break;
    case 'unknown':
      if (old?.state?.running) {
        // It ran and is gone: report it terminated rather than waiting, so a
        // run-once pod is not taken for one that never ran.
        status.state = { terminated: { exitCode: 137, reason: ContainerStatusUnknown, message: UNKNOWN_AT_TERMINATION } };
        status.restartCount = old.restartCount + 1;
      } else {
        status.state = { waiting: {} };
      }
      break;
  }
  return status;
}

/**
 * kubecontainer.ShouldContainerBeRestarted. A sidecar (restartable init
 * container) is restarted whatever the pod's policy, as the runtime manager
 * does (and as podutil.ContainerShouldRestart decides with the
 * ContainerRestartRules gate); upstream's gate-off path applies the pod's
 * policy to it here, which would hide a crash-looping sidecar's back-off in a
 * Never pod.
 */
function shouldContainerBeRestarted(c: Container, pod: Pod, newest: RuntimeContainerStatus | undefined): boolean {
  if (pod.metadata.deletionTimestamp) return false;
  if (!newest) return true;
  if (newest.state === 'running') return false;
  if (newest.state === 'unknown' || newest.state === 'created') return true;
  if (isRestartableInitContainer(c)) return true;
  switch (restartPolicyOf(pod)) {
    case 'Never':
      return false;
    case 'OnFailure':
      return newest.exitCode !== 0;
    case 'Always':
      return true;
  }
}

/** kuberuntime.HasAnyRegularContainerCreated */
function hasAnyRegularContainerCreated(pod: Pod, containers: RuntimeContainerStatus[]): boolean {
  return pod.spec.containers.some((c) => {
    const s = containers.find((cs) => cs.name === c.name);
    return s !== undefined && s.state !== 'unknown';
  });
}

/**
 * convertToAPIContainerStatuses: one status per spec container, in spec
 * order. Upstream sorts regular containers by name; we keep the spec's order
 * for both lists, as the callers index them by position beside the spec.
 */
function convertContainerStatuses(ctx: ConvertContext, specs: readonly Container[], previous: readonly ContainerStatus[] | undefined, isInit: boolean): ContainerStatus[] {
  const { pod, containers } = ctx;
  const oldStatuses = new Map((previous ?? []).map((s) => [s.name, s]));
  const defaultReason = ctx.hasInitContainers ? PodInitializing : ContainerCreating;
  const specByName = new Map(specs.map((c) => [c.name, c]));
  const statuses = new Map<string, ContainerStatus>();

  for (const c of specs) {
    const old = oldStatuses.get(c.name);
    let status: ContainerStatus = { name: c.name, state: { waiting: { reason: defaultReason } }, lastState: {}, ready: false, restartCount: 0, image: c.image ?? '', imageID: '' };
    if (old?.state?.terminated) {
      // A terminated container stays as it was until the runtime says otherwise.
      status = structuredClone(old);
    } else if (old) {
      status.restartCount = old.restartCount;
      status.lastState = structuredClone(old.lastState ?? {});
    }
    statuses.set(c.name, status);

    // A container that was running and that the runtime no longer has: it
    // terminated, though we cannot know how. Say so in lastState, so the pod
    // does not fall back to Pending.
    const inRuntime = containers.some((cs) => cs.name === c.name);
    if (!inRuntime && old?.state?.running && !old.state.terminated && status.state?.waiting?.reason === defaultReason && !status.lastState?.terminated) {
      status.lastState = { terminated: { exitCode: 137, reason: ContainerStatusUnknown, message: UNKNOWN_AFTER_RUNNING } };
      if (!pod.metadata.deletionTimestamp) status.restartCount += 1;
    }
  }

  // The newest instance of a name is its state, the one before its lastState.
  const seen = new Map<string, number>();
  for (const cs of containers) {
    const spec = specByName.get(cs.name);
    if (!spec) continue;
    const n = seen.get(cs.name) ?? 0;
    if (n >= 2) continue;
    seen.set(cs.name, n + 1);
    const converted = convertRuntimeContainer(cs, spec, oldStatuses.get(cs.name));
    if (n === 0) {
      // The restart count is the kubelet's annotation on the newest instance;
      // when that is missing (a container made by something else, or an
      // older kubelet), the dead instances still present are a lower bound.
      const instances = containers.filter((other) => other.name === cs.name).length;
      converted.restartCount = Math.max(converted.restartCount, instances - 1);
      statuses.set(cs.name, converted);
    } else {
      const current = statuses.get(cs.name);
      if (current) current.lastState = converted.state ?? {};
    }
  }

  // A container the next SyncPod will (re)start is waiting, for the reason
  // the last SyncPod gave.
  for (const c of specs) {
    const status = statuses.get(c.name);
    if (!status) continue;
    const newest = containers.find((cs) => cs.name === c.name);
    if (isInit) {
      // An init container that succeeded is not run again.
      if (newest?.state === 'exited' && newest.exitCode === 0) continue;
      // Its instance was removed, but the regular containers exist: it must
      // have completed.
      if (!newest && hasAnyRegularContainerCreated(pod, containers) && !isRestartableInitContainer(c) && status.state?.waiting) {
        status.state = { terminated: { exitCode: 0, reason: 'Completed', message: INIT_INFERRED_COMPLETE } };
        continue;
      }
    }
    if (!shouldContainerBeRestarted(c, pod, newest)) continue;
    const reason = ctx.waitingReasons(c.name);
    if (!reason) continue;
    if (status.state?.terminated) status.lastState = status.state;
    status.state = { waiting: { reason: reason.reason, ...(reason.message ? { message: reason.message } : {}) } };
  }

  return specs.flatMap((c) => statuses.get(c.name) ?? []);
}

// ---------------------------------------------------------------------------
// Probe results (prober.Manager.UpdatePodStatus)
// ---------------------------------------------------------------------------

interface ProbeResults {
  readiness: (containerId: string) => boolean | undefined;
  startup: (containerId: string) => boolean | undefined;
}

/**
 * isContainerStarted. A container that was started under the same ID in the
 * previous status stays started (the gate-off path upstream, which keeps the
 * old Started across a kubelet restart; upstream copies it by name, we also
 * require the same container ID so a new instance is not started by
 * inheritance).
 */
function isContainerStarted(status: ContainerStatus, spec: Container, old: ContainerStatus | undefined, probes: ProbeResults): boolean {
  if (!status.state?.running) return false;
  const id = runtimeIdOf(status.containerID);
  const result = id === undefined ? undefined : probes.startup(id);
  if (result !== undefined) return result;
  if (old?.started === true && old.containerID === status.containerID) return true;
  return spec.startupProbe === undefined;
}

function isContainerReady(status: ContainerStatus, spec: Container, probes: ProbeResults): boolean {
  if (!status.state?.running) return false;
  const id = runtimeIdOf(status.containerID);
  if (id !== undefined && probes.readiness(id) === true) return true;
  return spec.readinessProbe === undefined;
}

function applyProbeResults(pod: Pod, status: { containerStatuses: ContainerStatus[]; initContainerStatuses: ContainerStatus[] }, old: PodStatus, probes: ProbeResults): void {
  const oldByName = new Map([...(old.containerStatuses ?? []), ...(old.initContainerStatuses ?? [])].map((s) => [s.name, s]));
  const specs = new Map(pod.spec.containers.map((c) => [c.name, c]));
  for (const s of status.containerStatuses) {
    const spec = specs.get(s.name);
    if (!spec) continue;
    s.started = isContainerStarted(s, spec, oldByName.get(s.name), probes);
    s.ready = s.started && isContainerReady(s, spec, probes);
  }
  const initSpecs = new Map((pod.spec.initContainers ?? []).map((c) => [c.name, c]));
  for (const s of status.initContainerStatuses) {
    const spec = initSpecs.get(s.name);
    if (!spec) continue;
    s.started = isContainerStarted(s, spec, oldByName.get(s.name), probes);
    if (isRestartableInitContainer(spec)) s.ready = s.started && isContainerReady(s, spec, probes);
    // A regular init container is ready once it has exited successfully.
    else s.ready = s.state?.terminated?.exitCode === 0;
  }
}

// ---------------------------------------------------------------------------
// Phase (getPhase)
// ---------------------------------------------------------------------------

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

/**
 * HasAnyActiveRegularContainerStarted: a regular container exists in the
 * current sandbox. The cache has no sandbox ID per container, so a container
 * belongs to the newest sandbox when it was created after it.
 */
function hasAnyActiveRegularContainerStarted(pod: Pod, containers: RuntimeContainerStatus[], sandboxes: PodSandboxStatus[]): boolean {
  const newest = sandboxes[0];
  if (!newest) return false;
  const since = nsToMs(newest.createdAt);
  const names = new Set(pod.spec.containers.map((c) => c.name));
  return containers.some((cs) => names.has(cs.name) && cs.createdAt >= since);
}

// ---------------------------------------------------------------------------
// Conditions (status/generate.go)
// ---------------------------------------------------------------------------

/** Go's %s of a []string: [a b]. */
const goList = (names: readonly string[]): string => `[${names.join(' ')}]`;

function findStatus(statuses: readonly ContainerStatus[], name: string): ContainerStatus | undefined {
  return statuses.find((s) => s.name === name);
}

function condition(type: string, status: PodCondition['status'], reason?: string, message?: string): PodCondition {
  return { type, status, ...(reason ? { reason } : {}), ...(message ? { message } : {}) };
}

/** GeneratePodReadyToStartContainersCondition: the sandbox exists and needs no replacing (PodSandboxChanged). */
function podReadyToStartContainersCondition(pod: Pod, sandboxes: PodSandboxStatus[]): PodCondition {
  return condition(PodReadyToStartContainers, podSandboxChanged(pod, sandboxes) ? 'False' : 'True');
}

/** kuberuntime util.PodSandboxChanged, the yes-or-no part. */
function podSandboxChanged(pod: Pod, sandboxes: PodSandboxStatus[]): boolean {
  const newest = sandboxes[0];
  if (!newest) return true;
  if (sandboxes.filter((s) => s.state === 'SANDBOX_READY').length > 1) return true;
  if (newest.state !== 'SANDBOX_READY') return true;
  const wantNetwork = pod.spec.hostNetwork ? 'NODE' : 'POD';
  // Go reads a missing namespace option as POD (the enum's zero).
  if ((newest.linux?.namespaces?.options?.network ?? 'POD') !== wantNetwork) return true;
  if (!pod.spec.hostNetwork && newest.network && newest.network.ip === '') return true;
  return false;
}

/** GeneratePodInitializedCondition */
function podInitializedCondition(pod: Pod, statuses: readonly ContainerStatus[], phase: PodPhase): PodCondition {
  const unknown: string[] = [];
  const incomplete: string[] = [];
  for (const c of pod.spec.initContainers ?? []) {
    const s = findStatus(statuses, c.name);
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
    const s = findStatus(statuses, c.name);
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

/** updateLastTransitionTime: kept while the status is unchanged, else now. */
function stampTransitionTimes(conditions: PodCondition[], old: readonly PodCondition[] | undefined, now: number): void {
  for (const c of conditions) {
    if (!TRANSITION_STAMPED.includes(c.type)) continue;
    const before = old?.find((o) => o.type === c.type);
    // Upstream keeps even a zero old time; we stamp one, so the field is never null.
    c.lastTransitionTime = before && before.status === c.status && before.lastTransitionTime ? before.lastTransitionTime : rfc3339(now);
  }
}

// ---------------------------------------------------------------------------
// QoS (pkg/apis/core/v1/helper/qos)
// ---------------------------------------------------------------------------

const QOS_RESOURCES = ['cpu', 'memory'] as const;

function positiveQuantity(value: string | undefined): bigint {
  if (value === undefined) return 0n;
  try {
    const n = parseQuantityNanos(value);
    return n > 0n ? n : 0n;
  } catch {
    // Validation refuses such a pod before it gets here; count it as unset.
    return 0n;
  }
}

/**
 * GetPodQOS. A missing request stands for the limit, resource by resource,
 * as the API server's defaulting makes it (applyPodDefaults does the same
 * for file pods): the same answer for a defaulted pod, and the right one for
 * a pod that skipped defaulting.
 */
export function getPodQOS(pod: Pod): PodQOSClass {
  const requests = new Map<string, bigint>();
  const limits = new Map<string, bigint>();
  let isGuaranteed = true;
  for (const c of [...pod.spec.containers, ...(pod.spec.initContainers ?? [])]) {
    const found = new Set<string>();
    for (const r of QOS_RESOURCES) {
      const limit = positiveQuantity(c.resources?.limits?.[r]);
      const request = positiveQuantity(c.resources?.requests?.[r] ?? c.resources?.limits?.[r]);
      if (request > 0n) requests.set(r, (requests.get(r) ?? 0n) + request);
      if (limit > 0n) {
        found.add(r);
        limits.set(r, (limits.get(r) ?? 0n) + limit);
      }
    }
    if (!found.has('cpu') || !found.has('memory')) isGuaranteed = false;
  }
  if (requests.size === 0 && limits.size === 0) return 'BestEffort';
  if (isGuaranteed) {
    for (const [r, req] of requests) {
      if (limits.get(r) !== req) {
        isGuaranteed = false;
        break;
      }
    }
  }
  return isGuaranteed && requests.size === limits.size ? 'Guaranteed' : 'Burstable';
}

// ---------------------------------------------------------------------------
// IPs
// ---------------------------------------------------------------------------

const isIPv6 = (ip: string): boolean => ip.includes(':');

/** sortPodIPs: the first IP of the node's family, then the first of the other. */
function sortPodIPs(ips: readonly string[], hostIP: string | undefined): string[] {
  const primaryV6 = hostIP !== undefined && isIPv6(hostIP);
  const primary = ips.find((ip) => ip !== '' && isIPv6(ip) === primaryV6);
  const secondary = ips.find((ip) => ip !== '' && isIPv6(ip) !== primaryV6);
  return [primary, secondary].filter((ip): ip is string => ip !== undefined);
}

// ---------------------------------------------------------------------------
// generateAPIPodStatus
// ---------------------------------------------------------------------------

/**
 * generateAPIPodStatus, with the status manager's lastTransitionTime and
 * startTime bookkeeping (updateStatusInternal) folded in, so the result is
 * the status to publish.
 */
export function generateAPIPodStatus(inputs: StatusInputs): PodStatus {
  const { pod, now } = inputs;
  const old: PodStatus = pod.status ?? {};
  const { containers, sandboxes } = newestFirst(inputs.runtime);
  const initSpecs = pod.spec.initContainers ?? [];
  const ctx: ConvertContext = { pod, containers, hasInitContainers: initSpecs.length > 0, waitingReasons: inputs.waitingReasons };
  const containerStatuses = convertContainerStatuses(ctx, pod.spec.containers, old.containerStatuses, false);
  const initContainerStatuses = convertContainerStatuses(ctx, initSpecs, old.initContainerStatuses, true);
  // Upstream sets ready and started after the phase; sidecars' started feeds
  // the phase, so we set them first and the phase sees this sync's results
  // rather than the previous status'.
  applyProbeResults(pod, { containerStatuses, initContainerStatuses }, old, inputs);

  let phase = computePodPhase(pod, [...containerStatuses, ...initContainerStatuses], {
    podIsTerminal: inputs.podIsTerminal ?? false,
    podHasInitialized: hasAnyActiveRegularContainerStarted(pod, containers, sandboxes),
  });
  // A terminal phase is never left.
  if (!isPodPhaseTerminal(phase) && isPodPhaseTerminal(old.phase)) phase = old.phase;
  let reason: string | undefined;
  let message: string | undefined;
  if (phase === old.phase) {
    // The reason and message belong to the phase: keep them while it holds.
    reason = old.reason;
    message = old.message;
  }
  if (inputs.podFailure) {
    phase = 'Failed';
    reason = inputs.podFailure.reason;
    message = inputs.podFailure.message;
  }
  if (isPodPhaseTerminal(old.phase) && phase !== old.phase) phase = old.phase;

  const conditions: PodCondition[] = (old.conditions ?? []).filter((c) => !KUBELET_CONDITIONS.has(c.type)).map((c) => ({ ...c }));
  const allStatuses = [...initContainerStatuses, ...containerStatuses];
  conditions.push(podReadyToStartContainersCondition(pod, sandboxes));
  conditions.push(podInitializedCondition(pod, allStatuses, phase));
  conditions.push(podReadyCondition(pod.spec, conditions, allStatuses, phase));
  conditions.push(containersReadyCondition(pod.spec, allStatuses, phase));
  conditions.push(condition(PodScheduled, 'True'));
  stampTransitionTimes(conditions, old.conditions, now);

  let podIPs = sortPodIPs(inputs.runtime.ips, inputs.hostIP);
  // Host-network pods have the node's address.
  if (pod.spec.hostNetwork && podIPs.length === 0 && inputs.hostIP) podIPs = [inputs.hostIP];

  return {
    phase,
    conditions,
    ...(message ? { message } : {}),
    ...(reason ? { reason } : {}),
    ...(inputs.hostIP ? { hostIP: inputs.hostIP, hostIPs: [{ ip: inputs.hostIP }] } : {}),
    ...(podIPs[0] !== undefined ? { podIP: podIPs[0], podIPs: podIPs.map((ip) => ({ ip })) } : {}),
    startTime: old.startTime ?? rfc3339(startTimeMs(sandboxes, now)),
    ...(initSpecs.length > 0 ? { initContainerStatuses } : {}),
    containerStatuses,
    qosClass: getPodQOS(pod),
  };
}

/**
 * The status manager stamps startTime on the first status it keeps. When
 * that status was lost (a restart of ours), the first sandbox's creation is
 * the closer answer, so the earlier of the two.
 */
function startTimeMs(sandboxes: readonly PodSandboxStatus[], now: number): number {
  let earliest = now;
  for (const s of sandboxes) {
    const ms = nsToMs(s.createdAt);
    if (ms > 0 && ms < earliest) earliest = ms;
  }
  return earliest;
}

// ---------------------------------------------------------------------------
// TerminatePod
// ---------------------------------------------------------------------------

function unknownAtTermination(): ContainerState {
  return { terminated: { exitCode: 137, reason: ContainerStatusUnknown, message: UNKNOWN_AT_TERMINATION } };
}

/**
 * hasPodInitialized: some regular container has left waiting, or the last
 * init container succeeded. Upstream reads the API pod's status; we read the
 * status being terminated, the newest we have (a static pod has no API
 * status).
 */
function hasPodInitialized(pod: Pod, status: PodStatus): boolean {
  if ((pod.spec.initContainers ?? []).length === 0) return true;
  for (const s of status.containerStatuses ?? []) {
    if (s.lastState?.terminated || !s.state?.waiting) return true;
  }
  const inits = status.initContainerStatuses ?? [];
  const last = inits[inits.length - 1];
  if (last) {
    if (last.lastState?.terminated?.exitCode === 0) return true;
    if (last.state?.terminated?.exitCode === 0) return true;
  }
  return false;
}

/** initializedContainers: the init statuses but the trailing ones that never started; at least the first. */
function initializedContainers(statuses: ContainerStatus[]): ContainerStatus[] {
  for (let i = statuses.length - 1; i >= 0; i--) {
    const s = statuses[i];
    if (s && (!s.state?.waiting || s.lastState?.terminated)) return statuses.slice(0, i + 1);
  }
  return statuses.slice(0, 1);
}

/**
 * TerminatePod: the final status of a pod whose containers are all gone.
 * Any container not known to have terminated is marked terminated with 137
 * (ContainerStatusUnknown): regular containers once the pod had initialized,
 * init containers up to the last one that started. A non-static pod still
 * Pending or Running becomes Failed (upstream does not yet give static pods
 * a terminal phase: #116484).
 */
export function terminatePodStatus(pod: Pod, status: PodStatus, now: number): PodStatus {
  const next = structuredClone(status);
  if (hasPodInitialized(pod, next)) {
    for (const s of next.containerStatuses ?? []) if (!s.state?.terminated) s.state = unknownAtTermination();
  }
  for (const s of initializedContainers(next.initContainerStatuses ?? [])) if (!s.state?.terminated) s.state = unknownAtTermination();
  if (!isStaticPod(pod) && !isPodPhaseTerminal(next.phase)) next.phase = 'Failed';
  // updateStatusInternal: the status it keeps always has these.
  for (const c of next.conditions ?? []) c.lastTransitionTime ??= rfc3339(now);
  next.startTime ??= rfc3339(now);
  return next;
}
