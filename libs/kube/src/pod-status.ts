/**
 * The kubelet's pod status generation, as a pure function: the runtime's view
 * of a pod (kubecontainer.PodStatus), the pod's spec and previous status, the
 * probe results and the last sync errors go in; the v1 PodStatus the status
 * manager publishes comes out. Nothing here reads a clock, the runtime or the
 * network: `now` is passed in.
 *
 * Upstream, in pkg/kubelet:
 *
 *   generateAPIPodStatus (kubelet_pods.go)                         this file
 *     convertStatusToAPIStatus -> convertToAPIContainerStatuses    containerStatuses, initContainerStatuses,
 *                                                                  ephemeralContainerStatuses, podIPs
 *     getPhase                                                     pod-phase.ts; a terminal old phase is kept
 *     PodSyncHandlers.ShouldEvict (activeDeadlineSeconds)          podFailure
 *     probeManager.UpdatePodStatus (prober/prober_manager.go)       probe-status.ts: ready, started
 *     status.Generate*Condition (status/generate.go)               pod-conditions.ts
 *     qos.GetPodQOS (pkg/apis/core/v1/helper/qos)                  qos.ts
 *   statusManager.updateStatusInternal (status/status_manager.go)  lastTransitionTime (pod-conditions.ts), startTime
 *   statusManager.TerminatePod                                     terminate.ts
 *
 * Where this differs from upstream, the comment at the place says why.
 */
import type { Container, ContainerStateTerminated, ContainerStatus, Pod, PodCondition, PodStatus } from '@app/contracts';
import type { PodSandboxStatus } from '@app/cri';
import { rfc3339 } from './api-time.js';
import { parseContainerID, shouldContainerBeRestarted } from './container-helpers.js';
import { hasAnyRegularContainerCreated } from './kuberuntime.js';
import { PodConditionType, podConditionByKubelet } from './kubetypes.js';
import { condition, containersReadyCondition, podInitializedCondition, podReadyCondition, podReadyToStartContainersCondition, updateLastTransitionTimes } from './pod-conditions.js';
import { computePodPhase, isPodPhaseTerminal } from './pod-phase.js';
import { isRestartableInitContainer } from './pod-util.js';
import { applyProbeResults } from './probe-status.js';
import { getPodQOS } from './qos.js';
import type { RuntimeContainerStatus, RuntimeContainerUser, RuntimePodStatus } from './runtime-status.js';
import { ContainerStatusUnknown, UNKNOWN_AT_TERMINATION } from './terminate.js';

/** The kubelet's reasonCache entry: why the last SyncPod could not start a container. */
export interface ContainerWaitingReason {
  reason: string;
  message: string;
}

export interface StatusInputs {
  /** Spec and metadata; pod.status is the previous status (oldPodStatus: the status manager's, else the API's). */
  pod: Pod;
  /**
   * The conditions of the pod as its source last gave it (upstream's
   * pod.Status.Conditions, the apiserver's for an API pod): those the kubelet
   * does not own (a readiness gate's, set by a controller with a status
   * patch) are kept from here, and DisruptionTarget from the previous status.
   * Absent: all of them from the previous status.
   */
  sourceConditions?: readonly PodCondition[];
  /**
   * The phase, reason and message of the pod as its source last gave it
   * (upstream's pod.Status, the apiserver's for an API pod): a terminal
   * phase there, set by someone else, is the pod's phase from then on
   * ("API phase was terminal", "pods are not allowed to transition out of
   * terminal phases"). Absent (a static pod): the previous status alone.
   */
  sourceStatus?: Pick<PodStatus, 'phase' | 'reason' | 'message'>;
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

/** kubecontainer.ContainerID's type: the runtime behind the CRI socket. */
const RUNTIME_TYPE = 'containerd';

// Container state reasons (kubelet_pods.go, kubecontainer).
const PodInitializing = 'PodInitializing';
const ContainerCreating = 'ContainerCreating';
const UNKNOWN_AFTER_RUNNING = 'The container could not be located when the pod was deleted.  The container used to be Running';
const INIT_INFERRED_COMPLETE = 'Unable to get init container status from container runtime and pod has been initialized, treat it as exited normally';

function nsToMs(ns: string | undefined): number {
  if (!ns || !/^\d+$/.test(ns)) return 0;
  return Number(BigInt(ns) / 1_000_000n);
}

/** The runtime status with containers and sandboxes newest first, whatever order the cache gave. */
function newestFirst(runtime: RuntimePodStatus): RuntimePodStatus {
  const containerStatuses = [...runtime.containerStatuses].sort((a, b) => b.createdAt - a.createdAt);
  const sandboxStatuses = [...runtime.sandboxStatuses].sort((a, b) => nsToMs(b.createdAt) - nsToMs(a.createdAt));
  return { ...runtime, containerStatuses, sandboxStatuses };
}

// ---------------------------------------------------------------------------
// Container statuses (convertToAPIContainerStatuses)
// ---------------------------------------------------------------------------

interface ConvertContext {
  pod: Pod;
  /** The runtime's pod, containers and sandboxes newest first. */
  runtime: RuntimePodStatus;
  /** runtime.containerStatuses. */
  containers: RuntimeContainerStatus[];
  hasInitContainers: boolean;
  waitingReasons: (containerName: string) => ContainerWaitingReason | undefined;
}

function containerIDOf(cs: RuntimeContainerStatus): string {
  return `${RUNTIME_TYPE}://${cs.id}`;
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

/** ContainerStatus.user (v1.31, newer than the API types here). */
export interface ApiContainerUser {
  linux?: { uid: number; gid: number; supplementalGroups?: number[] };
}

function apiContainerUser(u: RuntimeContainerUser): ApiContainerUser {
  const l = u.linux;
  return l ? { linux: { uid: l.uid, gid: l.gid, ...(l.supplementalGroups.length > 0 ? { supplementalGroups: l.supplementalGroups } : {}) } } : {};
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
  // convertContainerStatusUser (SupplementalGroupsPolicy, on by default in v1.34): what the runtime says the
  // process runs as, groups included; a runtime that says nothing (containerd 1.6) leaves it out.
  if (cs.user) (status as ContainerStatus & { user?: ApiContainerUser }).user = apiContainerUser(cs.user);
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
 * The termination of the instance before `newest` as the previous status
 * gave it, when the runtime no longer has that instance: cleanUpContainersInPod
 * keeps only the newest dead one, and with the runtime's events the cache
 * shows the removal within milliseconds, so a crash-looping container would
 * otherwise lose its lastState until the next back-off. Only a termination
 * the previous status says is of the instance just before (the same newest
 * instance's lastState, or the termination of the instance whose restart
 * count is one less); none when that is not known.
 */
function terminationBefore(newest: ContainerStatus, old: ContainerStatus | undefined): ContainerStateTerminated | undefined {
  if (!old?.containerID) return undefined;
  if (old.containerID === newest.containerID) return old.lastState?.terminated;
  if (old.restartCount !== newest.restartCount - 1) return undefined;
  const ended = old.state?.terminated ?? old.lastState?.terminated;
  return ended?.containerID === old.containerID ? ended : undefined;
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
      // A terminated container stays as it was until the runtime says otherwise,
      // but is not ready (upstream keeps the old flag, and UpdatePodStatus
      // leaves the ready of a container that has not started as it finds it).
      status = { ...structuredClone(old), ready: false };
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
      if (instances === 1) {
        const known = terminationBefore(converted, oldStatuses.get(cs.name));
        if (known) converted.lastState = { terminated: structuredClone(known) };
      }
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
      if (!newest && hasAnyRegularContainerCreated(pod, ctx.runtime) && !isRestartableInitContainer(c) && status.state?.waiting) {
        status.state = { terminated: { exitCode: 0, reason: 'Completed', message: INIT_INFERRED_COMPLETE } };
        continue;
      }
    }
    if (!shouldContainerBeRestarted(c, pod, ctx.runtime)) continue;
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
 * The probe overlay (probe-status.ts) from the pod worker's results.
 * isContainerStarted: a container that was started under the same ID in the
 * previous status stays started (the gate-off path upstream, which keeps the
 * old Started across a kubelet restart; upstream copies it by name, we also
 * require the same container ID so a new instance is not started by
 * inheritance). Without a result, a container is started when it has no
 * startup probe and ready when it has no readiness probe.
 */
function updatePodStatusFromProbes(pod: Pod, status: { containerStatuses: ContainerStatus[]; initContainerStatuses: ContainerStatus[] }, old: PodStatus, probes: ProbeResults): void {
  const oldByName = new Map([...(old.containerStatuses ?? []), ...(old.initContainerStatuses ?? [])].map((s) => [s.name, s]));
  const specs = new Map([...pod.spec.containers, ...(pod.spec.initContainers ?? [])].map((c) => [c.name, c]));
  const runtimeId = (s: ContainerStatus): string | undefined => (s.containerID ? parseContainerID(s.containerID).id : undefined);
  applyProbeResults(status, pod.spec.initContainers, {
    isContainerStarted: (s) => {
      if (!s.state?.running) return false;
      const id = runtimeId(s);
      const result = id === undefined ? undefined : probes.startup(id);
      if (result !== undefined) return result;
      const before = oldByName.get(s.name);
      if (before?.started === true && before.containerID === s.containerID) return true;
      return specs.get(s.name)?.startupProbe === undefined;
    },
    isContainerReady: (s) => {
      if (!s.state?.running) return false;
      const id = runtimeId(s);
      if (id !== undefined && probes.readiness(id) === true) return true;
      return specs.get(s.name)?.readinessProbe === undefined;
    },
  });
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
  const runtime = newestFirst(inputs.runtime);
  const { containerStatuses: containers, sandboxStatuses: sandboxes } = runtime;
  const initSpecs = pod.spec.initContainers ?? [];
  const ctx: ConvertContext = { pod, runtime, containers, hasInitContainers: initSpecs.length > 0, waitingReasons: inputs.waitingReasons };
  const containerStatuses = convertContainerStatuses(ctx, pod.spec.containers, old.containerStatuses, false);
  const initContainerStatuses = convertContainerStatuses(ctx, initSpecs, old.initContainerStatuses, true);
  // Ephemeral containers: converted as regular ones, never ready, left out of the phase and the conditions.
  const ephemeralSpecs = (pod.spec.ephemeralContainers ?? []).map(({ targetContainerName: _target, ...common }): Container => common);
  const ephemeralContainerStatuses = convertContainerStatuses(ctx, ephemeralSpecs, old.ephemeralContainerStatuses, false);
  // Upstream sets ready and started after the phase; sidecars' started feeds
  // the phase, so we set them first and the phase sees this sync's results
  // rather than the previous status'.
  updatePodStatusFromProbes(pod, { containerStatuses, initContainerStatuses }, old, inputs);

  let phase = computePodPhase(pod, [...containerStatuses, ...initContainerStatuses], {
    podIsTerminal: inputs.podIsTerminal ?? false,
    podHasInitialized: hasAnyActiveRegularContainerStarted(pod, containers, sandboxes),
  });
  // The three-way merge of the previous status, the source's and the generated one: a terminal phase is never left.
  const source = inputs.sourceStatus ?? {};
  if (!isPodPhaseTerminal(phase)) {
    if (isPodPhaseTerminal(old.phase)) phase = old.phase;
    else if (isPodPhaseTerminal(source.phase)) phase = source.phase;
  }
  let reason: string | undefined;
  let message: string | undefined;
  if (phase === old.phase) {
    // The reason and message belong to the phase: keep them while it holds (else the source's).
    reason = old.reason || source.reason;
    message = old.message || source.message;
  }
  if (inputs.podFailure) {
    phase = 'Failed';
    reason = inputs.podFailure.reason;
    message = inputs.podFailure.message;
  }
  if (isPodPhaseTerminal(old.phase) && phase !== old.phase) phase = old.phase;
  // The apiserver shows a terminal phase: no transition out of it, nor to the other one.
  if (isPodPhaseTerminal(source.phase) && phase !== source.phase) phase = source.phase;

  // "Preserves conditions not controlled by kubelet", from the source's pod; the DisruptionTarget an
  // eviction set is the previous status' (it is set once, by us, and the source may not show it yet).
  const conditions: PodCondition[] = (inputs.sourceConditions ?? old.conditions ?? []).filter((c) => !podConditionByKubelet(c.type)).map((c) => ({ ...c }));
  const disruption = inputs.sourceConditions ? old.conditions?.find((c) => c.type === PodConditionType.DisruptionTarget) : undefined;
  if (disruption) {
    const i = conditions.findIndex((c) => c.type === disruption.type);
    if (i >= 0) conditions[i] = { ...disruption };
    else conditions.push({ ...disruption });
  }
  const allStatuses = [...initContainerStatuses, ...containerStatuses];
  conditions.push(podReadyToStartContainersCondition(pod, runtime));
  conditions.push(podInitializedCondition(pod, allStatuses, phase));
  conditions.push(podReadyCondition(pod.spec, conditions, allStatuses, phase));
  conditions.push(containersReadyCondition(pod.spec, allStatuses, phase));
  conditions.push(condition(PodConditionType.PodScheduled, 'True'));
  updateLastTransitionTimes(conditions, old.conditions, now);

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
    ...(ephemeralSpecs.length > 0 ? { ephemeralContainerStatuses } : {}),
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
