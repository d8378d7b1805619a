/**
 * What one sync of a pod must do to its sandbox and containers, computed from
 * the pod spec and the runtime's view of it, with no side effect: the
 * kubelet's kuberuntime_manager.go computePodActions and its helpers.
 *
 * Which upstream function each piece mirrors:
 *
 *  - computePodActions         kuberuntime_manager.go computePodActions (without
 *                              in-place resize, which this project does not have);
 *                              ephemeral containers are started once, never restarted
 *  - shouldRestartOnFailure    kuberuntime_manager.go shouldRestartOnFailure
 *  - containerChanged          kuberuntime_manager.go containerChanged (hash in container-hash.ts)
 *  - findNextInitContainerToRun  kuberuntime_container.go findNextInitContainerToRun (classic init path)
 *  - computeInitContainerActions kuberuntime_container.go computeInitContainerActions (sidecar path)
 *  - isInitContainerFailed, containerSucceeded: same names upstream
 *  - killContainersNotInSpec   not upstream: running containers whose name left the spec are
 *                              killed (an edited static pod keeps its UID here)
 *
 * Which init path: a pod with a restartable init container (a sidecar:
 * `restartPolicy: Always` on an init container) takes the sidecar path
 * (computeInitContainerActions, `initContainersToStart`); any other pod the
 * classic one (findNextInitContainerToRun, `nextInitContainerToStart`), as
 * upstream with the LegacySidecarContainers gate on. SyncPod must start
 * from the field the path fills, exactly as upstream's SyncPod step 6.
 *
 * From libs/kube: podSandboxChanged (kuberuntime/util/util.go),
 * shouldContainerBeRestarted (container/helpers.go), hasAnyRegularContainerCreated
 * (kuberuntime_container.go), isRestartableInitContainer (podutil).
 *
 * Probe results come in as a port: `undefined` is upstream's "not found"
 * (the probe has not run yet for that container ID).
 */
import type { Container, Pod } from '@app/contracts';
import {
  findContainerStatus,
  hasAnyRegularContainerCreated,
  hasRestartableInitContainer,
  isRestartableInitContainer,
  podSandboxChanged,
  shouldContainerBeRestarted,
  type RuntimeContainerStatus,
  type RuntimePodStatus,
} from '@app/kube';
import { hashContainer } from './container-hash.js';

/** containerKillReason: why a container is killed (the grace period depends on it, see grace-period.ts). */
export const ContainerKillReason = {
  startupProbe: 'StartupProbe',
  livenessProbe: 'LivenessProbe',
  failedPostStartHook: 'FailedPostStartHook',
  unknown: 'Unknown',
  /** Upstream leaves the reason empty for a changed definition. */
  none: '',
} as const;

/** containerToKillInfo */
export interface ContainerToKill {
  containerId: string;
  name: string;
  container?: Container;
  reason: string;
  message: string;
}

/** podActions */
export interface PodActions {
  /** Stop every container and sandbox of the pod (SyncPod step 2). */
  killPod: boolean;
  /** Create a new sandbox (after killing the pod and purging its init containers). */
  createSandbox: boolean;
  /**
   * The newest sandbox's id ('' if none), where the containers to start go
   * when no sandbox is created. Upstream leaves it '' when the network
   * namespace mode changed (so no SandboxChanged event): kill the pod from
   * `status.sandboxStatuses`, never from this id.
   */
  sandboxId: string;
  /** The attempt for the new sandbox when createSandbox; else the highest existing one. */
  attempt: number;
  /** Classic init path: the one init container to start now. */
  nextInitContainerToStart?: Container;
  /** Sidecar path: indexes into spec.initContainers to (re)start, in spec order. */
  initContainersToStart: number[];
  /** Indexes into spec.containers to (re)start, in spec order. */
  containersToStart: number[];
  /**
   * Indexes into spec.ephemeralContainers to start (EphemeralContainersToStart):
   * those the runtime has no instance of. Ephemeral containers are never
   * restarted, and may start before initialization is done.
   */
  ephemeralContainersToStart: number[];
  /** Containers to kill before anything starts, by container id. */
  containersToKill: Map<string, ContainerToKill>;
}

/** The liveness and startup results managers (prober/results), by container id. */
export interface ProbeResults {
  liveness(containerId: string): 'Success' | 'Failure' | undefined;
  startup(containerId: string): 'Success' | 'Failure' | undefined;
}

/** computePodActions: the actions that bring the runtime's pod to the spec. */
export function computePodActions(pod: Pod, status: RuntimePodStatus, probes: ProbeResults): PodActions {
  const sandbox = podSandboxChanged(pod, status);
  const changes: PodActions = {
    killPod: sandbox.changed,
    createSandbox: sandbox.changed,
    sandboxId: sandbox.sandboxId,
    attempt: sandbox.attempt,
    initContainersToStart: [],
    containersToStart: [],
    ephemeralContainersToStart: [],
    containersToKill: new Map(),
  };
  const sidecarPath = hasRestartableInitContainer(pod);
  const initContainers = pod.spec.initContainers ?? [];

  // A new sandbox means everything is killed and created again, init containers first.
  if (sandbox.changed) {
    // "if all containers are done and should not be started, there is no need to create a new
    // sandbox"; attempt 0 with no container status means no container was ever created: retry.
    if (!shouldRestartOnFailure(pod) && sandbox.attempt !== 0 && status.containerStatuses.length !== 0) {
      changes.createSandbox = false;
      return changes;
    }
    const containersToStart: number[] = [];
    pod.spec.containers.forEach((c, idx) => {
      if (pod.spec.restartPolicy === 'OnFailure' && containerSucceeded(c, status)) return;
      containersToStart.push(idx);
    });
    // Initialization done and nothing to start: kill the pod, do not create a sandbox.
    if (containersToStart.length === 0) {
      const hasInitialized = sidecarPath ? hasAnyRegularContainerCreated(pod, status) : findNextInitContainerToRun(pod, status).done;
      if (hasInitialized) {
        changes.createSandbox = false;
        return changes;
      }
    }
    const first = initContainers[0];
    if (first) {
      if (sidecarPath) changes.initContainersToStart = [0];
      else changes.nextInitContainerToStart = first;
      return changes;
    }
    changes.containersToStart = containersToStart;
    return changes;
  }

  killContainersNotInSpec(pod, status, changes);

  // "Ephemeral containers may be started even if initialization is not yet complete."
  (pod.spec.ephemeralContainers ?? []).forEach((c, idx) => {
    // "Ephemeral Containers are never restarted"
    if (!findContainerStatus(status, c.name)) changes.ephemeralContainersToStart.push(idx);
  });

  if (!sidecarPath) {
    const { last, next, done } = findNextInitContainerToRun(pod, status);
    if (!done) {
      if (next) {
        const initFailed = last !== undefined && isInitContainerFailed(last);
        if (initFailed && !shouldRestartOnFailure(pod)) {
          changes.killPod = true;
        } else {
          // "Always try to stop containers in unknown state first."
          if (last?.state === 'unknown') {
            changes.containersToKill.set(last.id, {
              containerId: last.id,
              name: next.name,
              container: next,
              message: `Init container is in "${last.state}" state, try killing it before restart`,
              reason: ContainerKillReason.unknown,
            });
          }
          changes.nextInitContainerToStart = next;
        }
      }
      // Initialization failed or still in progress: main containers wait.
      return changes;
    }
  } else {
    const hasInitialized = computeInitContainerActions(pod, status, probes, changes);
    if (changes.killPod || !hasInitialized) return changes;
  }

  // Running containers to keep.
  let keepCount = 0;
  pod.spec.containers.forEach((container, idx) => {
    const cs = findContainerStatus(status, container.name);
    if (!cs || cs.state !== 'running') {
      if (shouldContainerBeRestarted(container, pod, status)) {
        changes.containersToStart.push(idx);
        if (cs?.state === 'unknown') {
          // "we don't know whether it is actually running or not, always try killing it before
          // restart to avoid having 2 running instances of the same container"
          changes.containersToKill.set(cs.id, {
            containerId: cs.id,
            name: cs.name,
            container,
            message: `Container is in "${cs.state}" state, try killing it before restart`,
            reason: ContainerKillReason.unknown,
          });
        }
      }
      return;
    }
    // Running: kill it when its definition changed or a probe failed, else keep it.
    let restart = shouldRestartOnFailure(pod);
    let message: string;
    let reason: string = ContainerKillReason.none;
    if (containerChanged(container, cs)) {
      message = `Container ${container.name} definition changed`;
      // "Restart regardless of the restart policy because the container spec changed."
      restart = true;
    } else if (probes.liveness(cs.id) === 'Failure') {
      message = `Container ${container.name} failed liveness probe`;
      reason = ContainerKillReason.livenessProbe;
    } else if (probes.startup(cs.id) === 'Failure') {
      message = `Container ${container.name} failed startup probe`;
      reason = ContainerKillReason.startupProbe;
    } else {
      keepCount++;
      return;
    }
    if (restart) {
      message = `${message}, will be restarted`;
      changes.containersToStart.push(idx);
    }
    changes.containersToKill.set(cs.id, { containerId: cs.id, name: cs.name, container, message, reason });
  });

  if (keepCount === 0 && changes.containersToStart.length === 0) {
    changes.killPod = true;
    // "To prevent the restartable init containers to keep pod alive, we should not restart them."
    if (sidecarPath) changes.initContainersToStart = [];
  }
  return changes;
}

/** shouldRestartOnFailure: every restart policy but Never (an unset one is Always). */
export function shouldRestartOnFailure(pod: Pod): boolean {
  return pod.spec.restartPolicy !== 'Never';
}

/** containerChanged: the hash the container was created with is not the spec's. */
export function containerChanged(container: Container, cs: RuntimeContainerStatus): boolean {
  return cs.hash !== hashContainer(container);
}

/** isInitContainerFailed: exited non-zero, OOM-killed, or in an unknown state. */
export function isInitContainerFailed(cs: RuntimeContainerStatus): boolean {
  if (cs.reason === 'OOMKilled') return true;
  if (cs.state === 'exited' && cs.exitCode !== 0) return true;
  return cs.state === 'unknown';
}

/**
 * findNextInitContainerToRun (classic init path): the last failed init
 * container's status (with `next` pointing at it), or the next init
 * container to start, or done when initialization is complete.
 */
export function findNextInitContainerToRun(pod: Pod, status: RuntimePodStatus): { last?: RuntimeContainerStatus; next?: Container; done: boolean } {
  const inits = pod.spec.initContainers ?? [];
  if (inits.length === 0) return { done: true };
  // A running main container means initialization finished once, even if the init containers were removed since.
  if (pod.spec.containers.some((c) => findContainerStatus(status, c.name)?.state === 'running')) return { done: true };

  const backwards = [...inits.entries()].reverse();
  // A failed one: it is next (again), and its status says whether it may be.
  for (const [, container] of backwards) {
    const cs = findContainerStatus(status, container.name);
    if (cs && isInitContainerFailed(cs)) return { last: cs, next: container, done: false };
  }
  for (const [i, container] of backwards) {
    const cs = findContainerStatus(status, container.name);
    if (!cs) continue;
    if (cs.state === 'running') return { done: false };
    if (cs.state === 'exited') {
      const following = inits[i + 1];
      // All init containers up to i succeeded: the next one, or done after the last.
      return following ? { next: following, done: false } : { done: true };
    }
  }
  return { next: inits[0], done: false };
}

/**
 * Not upstream: a running (or unknown, so maybe running) container whose name
 * is in none of the container lists (ephemeral ones included) is killed. Upstream needs no such rule: the
 * API server forbids renaming a container of an existing pod, and an edited
 * static pod gets a new UID. Here an edited manifest keeps its UID
 * (docs/adr/0004-static-pods.md), so a renamed or removed container would
 * otherwise run until the pod is deleted. Exited ones are left to the
 * container garbage collector, as upstream leaves its dead containers.
 */
function killContainersNotInSpec(pod: Pod, status: RuntimePodStatus, changes: PodActions): void {
  const names = new Set([...pod.spec.containers, ...(pod.spec.initContainers ?? []), ...(pod.spec.ephemeralContainers ?? [])].map((c) => c.name));
  for (const cs of status.containerStatuses) {
    if (names.has(cs.name) || (cs.state !== 'running' && cs.state !== 'unknown')) continue;
    changes.containersToKill.set(cs.id, {
      containerId: cs.id,
      name: cs.name,
      message: `Container ${cs.name} is no longer in the pod spec`,
      reason: ContainerKillReason.none,
    });
  }
}

/** containerSucceeded: its newest instance exited 0. */
function containerSucceeded(c: Container, status: RuntimePodStatus): boolean {
  const cs = findContainerStatus(status, c.name);
  return cs?.state === 'exited' && cs.exitCode === 0;
}

/**
 * computeInitContainerActions (sidecar path): fills initContainersToStart and
 * containersToKill for the init containers, and returns whether the pod is
 * initialized (every classic init container succeeded and every sidecar is
 * started). The actions:
 *  - start the first init container that has not run;
 *  - restart sidecars that are not running, failed their startup or
 *    liveness probe, changed definition, or are in an unknown state;
 *  - restart a failed classic init container, or kill the pod when the
 *    restart policy is Never.
 * A sidecar counts as started once running and, if it has a startup probe,
 * once that probe succeeded: the next init container (or the main ones)
 * waits for it. Its liveness result never gates what comes after it. A
 * sidecar without a startup probe that ran and exited counts as started too
 * (not upstream: see the `exited` case), so that one crashing soon after
 * each start never holds the main containers back.
 *
 * The init containers are walked newest-to-oldest, because completed ones may
 * have been removed from the runtime: the last one with a status tells how
 * far initialization got.
 */
function computeInitContainerActions(pod: Pod, status: RuntimePodStatus, probes: ProbeResults, changes: PodActions): boolean {
  const inits = pod.spec.initContainers ?? [];
  if (inits.length === 0) return true;

  // A created or running main container means the pod initialized once. An exited one does not:
  // after a node reboot every container is exited and the new sandbox must initialize again.
  let podHasInitialized = pod.spec.containers.some((c) => {
    const state = findContainerStatus(status, c.name)?.state;
    return state === 'created' || state === 'running';
  });
  // Whether the init containers before the current one (in the backwards walk: after it) are done.
  let isPreviouslyInitialized = podHasInitialized;
  const restartOnFailure = shouldRestartOnFailure(pod);
  const toStart: number[] = []; // collected backwards
  const last = inits.length - 1;
  const kill = (cs: RuntimeContainerStatus, container: Container, message: string, reason: string): void => {
    changes.containersToKill.set(cs.id, { containerId: cs.id, name: container.name, container, message, reason });
  };

  for (const [i, container] of [...inits.entries()].reverse()) {
    const restartable = isRestartableInitContainer(container);
    const cs = findContainerStatus(status, container.name);
    if (!cs) {
      // Its status is gone (removed); a sidecar of an initialized pod must run again.
      if (isPreviouslyInitialized && restartable) toStart.push(i);
      continue;
    }
    // After initialization only sidecars need to be kept running.
    if (isPreviouslyInitialized && !restartable) continue;

    switch (cs.state) {
      case 'created':
        // Created but never started: the runtime likely failed to start it; start it again.
        toStart.push(i);
        break;
      case 'running': {
        if (!restartable) break; // a classic init container: wait for it to finish
        if (container.startupProbe) {
          const startup = probes.startup(cs.id);
          if (startup === undefined) break; // the startup probe has not run yet: wait for it
          if (startup === 'Failure') {
            kill(cs, container, `Init container ${container.name} failed startup probe`, ContainerKillReason.startupProbe);
            toStart.push(i);
            break;
          }
        }
        // This sidecar is started.
        if (i === last) podHasInitialized = true;
        else if (!isPreviouslyInitialized) toStart.push(i + 1); // started for the first time: start the next one
        if (containerChanged(container, cs)) {
          kill(cs, container, `Init container ${container.name} definition changed`, ContainerKillReason.none);
          toStart.push(i);
          break;
        }
        if (container.livenessProbe && probes.liveness(cs.id) === 'Failure') {
          kill(cs, container, `Init container ${container.name} failed liveness probe`, ContainerKillReason.livenessProbe);
          toStart.push(i);
        }
        break;
      }
      case 'exited':
        if (restartable) {
          // Not upstream, which counts a sidecar as started only while it runs: one that crashes a
          // few seconds after each start may be exited in every sync, and what follows it would wait
          // for a sync to land inside its short runs (a race between the PLEG and its back-off, which
          // grows each time it is lost). One that did start (startedAt) and has no startup probe to
          // pass was started: what follows it goes on, and its own restart waits on its own back-off.
          if (cs.startedAt > 0 && !container.startupProbe) {
            if (i === last) podHasInitialized = true;
            else if (!isPreviouslyInitialized) toStart.push(i + 1);
          }
          // A sidecar that exited restarts, whatever the pod's restart policy.
          toStart.push(i);
        } else if (isInitContainerFailed(cs)) {
          if (!restartOnFailure) {
            changes.killPod = true;
            changes.initContainersToStart = [];
            return false;
          }
          toStart.push(i);
        } else if (i === last) {
          podHasInitialized = true;
        } else {
          toStart.push(i + 1);
        }
        break;
      case 'unknown':
        if (!restartable && !restartOnFailure) {
          changes.killPod = true;
          changes.initContainersToStart = [];
          return false;
        }
        kill(cs, container, `Init container is in "${cs.state}" state, try killing it before restart`, ContainerKillReason.unknown);
        toStart.push(i);
        break;
    }
    isPreviouslyInitialized = true;
  }
  // No init container has started yet: start the first.
  if (!isPreviouslyInitialized) toStart.push(0);
  changes.initContainersToStart = toStart.reverse();
  return podHasInitialized;
}
