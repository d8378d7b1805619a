/**
 * The kubelet's probe worker (pkg/kubelet/prober/worker.go): one per
 * (pod, container, probe type), probing its container every period and
 * keeping the result per container ID.
 *
 * Its life:
 *
 *   new --start()--> waiting the random offset (only while the prober is
 *   younger than one period, so probes after a restart do not fire in
 *   lockstep) --> probing every periodSeconds (a manual trigger probes at
 *   once and restarts the period) --> stopped, when told to (RemovePod,
 *   CleanupPods, StopLivenessAndStartup) or when its container will not run
 *   again (the pod is Succeeded or Failed; the container terminated under
 *   restartPolicy Never) or the pod is being deleted (liveness and startup).
 *
 * Each pass (doProbe) reads the latest pod status. A new container ID
 * starts fresh: the old result is dropped and the initial value set
 * (readiness Failure, liveness Success, startup Unknown) until probes say
 * otherwise. Unlike upstream, where the prober restarts with the kubelet and
 * its results are gone, a restarted prober finds its results in the
 * `probe-results` bucket: the first container ID a worker sees, when it is
 * the one the kept result is for, resumes from that result (and its hold)
 * instead of the initial value, so a prober restart makes no Ready pod
 * NotReady until its next probe (docs/adr/0008-probe-results-bucket.md). Nothing is probed during initialDelaySeconds after the
 * container started, liveness and readiness wait until the container has
 * started (its startup probe succeeded), and a startup probe stops once it
 * has. A result changes only after failureThreshold failures or
 * successThreshold successes in a row. After a liveness failure (or a
 * startup verdict) the worker holds until a new container appears; while a
 * liveness failure holds on a running container it is sent again every
 * period, as the kubelet keeps acting on it at each sync.
 */
import type { Clock, Timer } from '@app/clock';
import type { Container, ContainerStatus, Pod, PodStatus, Probe, ProbeResultValue, ProbeType } from '@app/contracts';
import { getContainerStatus, parseContainerID } from '@app/kube';
import type { ProbeHandler, ProbeHandlerResult, ProbeOutcome, ProbeTarget } from './handlers/index.js';

/** A results-manager update: a result changed (or a liveness failure repeats). */
export interface ProbeUpdate {
  probeType: ProbeType;
  podUid: string;
  containerName: string;
  /** Without the `containerd://` prefix. */
  containerId: string;
  result: ProbeResultValue;
  /** "Liveness probe failed: <output>" and the like; absent for initial values and plain successes. */
  message?: string;
  /** True when this re-sends a liveness failure that has not changed. */
  repeat: boolean;
  /** The probe's own terminationGracePeriodSeconds, for the kill a liveness or startup failure causes. */
  terminationGracePeriodSeconds?: number;
}

/** One probe that ran (for prober_probe_total and prober_probe_duration_seconds). */
export interface ProbeObservation {
  probeType: ProbeType;
  pod: Pod;
  container: Container;
  result: ProbeHandlerResult;
  durationSeconds: number;
}

/** A container event the prober records (recordContainerEvent). */
export interface ProbeEvent {
  pod: Pod;
  container: Container;
  eventType: 'Warning';
  /** ContainerUnhealthy or ContainerProbeWarning. */
  reason: 'Unhealthy' | 'ProbeWarning';
  message: string;
}

export interface ProbeWorkerDeps {
  clock: Clock;
  handler: ProbeHandler;
  /** The pod's latest v1 status (containerStatuses with containerID, state, started); undefined when not known yet. */
  getStatus(): PodStatus | undefined;
  /** A result changed for the current container, or a liveness failure repeats. */
  onResult(update: ProbeUpdate): void;
  /** A number in [0, 1) (Math.random by default): the first probe waits that share of a period. */
  random?: () => number;
  /** When the prober started (ms since the epoch); the offset applies only within one period of it. Default: always. */
  proberStartedAt?: number;
  /** The node's IP, when the status has no hostIP. */
  hostIP?: string;
  onProbe?(observation: ProbeObservation): void;
  onEvent?(event: ProbeEvent): void;
  /** The worker stopped, by stop() or by itself. */
  onStopped?(worker: ProbeWorker): void;
  /**
   * The result a previous prober kept for this worker, asked once, when the
   * worker first sees a container: adopted when it is for that container.
   */
  restored?(containerId: string): { result: ProbeResultValue; message?: string } | undefined;
}

/** The Probe with API defaults for what is unset (SetDefaults_Probe; Go's 0 counts as unset). */
export interface ProbeTiming {
  initialDelaySeconds: number;
  periodSeconds: number;
  timeoutSeconds: number;
  successThreshold: number;
  failureThreshold: number;
}

export function probeTiming(p: Probe): ProbeTiming {
  const positive = (v: number | undefined, d: number) => (v !== undefined && v > 0 ? v : d);
  return {
    initialDelaySeconds: Math.max(0, p.initialDelaySeconds ?? 0),
    periodSeconds: positive(p.periodSeconds, 10),
    timeoutSeconds: positive(p.timeoutSeconds, 1),
    successThreshold: positive(p.successThreshold, 1),
    failureThreshold: positive(p.failureThreshold, 3),
  };
}

/** The probe of a type on a container, if it has one. */
export function probeOf(container: Container, probeType: ProbeType): Probe | undefined {
  switch (probeType) {
    case 'liveness':
      return container.livenessProbe;
    case 'readiness':
      return container.readinessProbe;
    case 'startup':
      return container.startupProbe;
  }
}

/** Upstream's probeType.String(): the word that starts event messages and the probe_type label. */
export function probeTypeName(probeType: ProbeType): 'Liveness' | 'Readiness' | 'Startup' {
  switch (probeType) {
    case 'liveness':
      return 'Liveness';
    case 'readiness':
      return 'Readiness';
    case 'startup':
      return 'Startup';
  }
}

/** The result a worker sets for a container it has not probed yet. */
export function initialResult(probeType: ProbeType): ProbeResultValue {
  switch (probeType) {
    case 'readiness':
      return 'Failure';
    case 'liveness':
      return 'Success';
    case 'startup':
      return 'Unknown';
  }
}

/** doProbe's lookup: the container's status among the regular containers, else the init containers, once it has a container ID. */
function probedContainerStatus(status: PodStatus, name: string): ContainerStatus | undefined {
  const regular = getContainerStatus(status.containerStatuses, name);
  if (regular?.containerID) return regular;
  const init = getContainerStatus(status.initContainerStatuses, name);
  return init?.containerID ? init : undefined;
}

/** The kubelet's maxProbeRetries: a probe that errors is run again at once, up to three times. */
export const MAX_PROBE_RETRIES = 3;

type WorkerState = 'new' | 'offset' | 'probing' | 'stopped';

export class ProbeWorker {
  readonly probe: Probe;
  readonly timing: ProbeTiming;
  readonly podUid: string;
  private state: WorkerState = 'new';
  private offsetTimer: Timer | undefined;
  private ticker: Timer | undefined;
  private inFlight = false;
  /** A tick or trigger came while a probe ran: probe again once it is done (Go's one-slot channels). */
  private runAgain = false;

  private current: { containerId: string; result: ProbeResultValue; message?: string } | undefined;
  private lastResult: 'Success' | 'Failure' | undefined;
  private resultRun = 0;
  private onHold = false;

  constructor(
    private readonly deps: ProbeWorkerDeps,
    readonly pod: Pod,
    readonly container: Container,
    readonly probeType: ProbeType,
  ) {
    const probe = probeOf(container, probeType);
    if (!probe) throw new Error(`container ${container.name} has no ${probeType} probe`);
    this.probe = probe;
    this.timing = probeTiming(probe);
    this.podUid = pod.metadata.uid ?? '';
  }

  get stopped(): boolean {
    return this.state === 'stopped';
  }

  /** The container the worker last saw, without the runtime prefix. */
  get containerId(): string | undefined {
    return this.current?.containerId;
  }

  /** The result kept for this container ID (only the worker's current container has one). */
  resultFor(containerId: string): ProbeResultValue | undefined {
    return this.current && this.current.containerId === parseContainerID(containerId).id ? this.current.result : undefined;
  }

  /** Starts the loop: the first probe after the random offset, then every period. */
  start(): void {
    if (this.state !== 'new') return;
    const periodMs = this.timing.periodSeconds * 1000;
    const startedAt = this.deps.proberStartedAt ?? this.deps.clock.now();
    const jitter = periodMs > this.deps.clock.now() - startedAt;
    const offsetMs = jitter ? Math.min(1, Math.max(0, (this.deps.random ?? Math.random)())) * periodMs : 0;
    this.state = 'offset';
    this.offsetTimer = this.deps.clock.setTimer(offsetMs, () => {
      this.offsetTimer = undefined;
      if (this.state !== 'offset') return;
      this.state = 'probing';
      this.restartTicker();
      this.wake();
    });
  }

  /** Stops the worker; a probe in flight finishes but its result is dropped. Safe to call twice. */
  stop(): void {
    if (this.state === 'stopped') return;
    this.state = 'stopped';
    this.offsetTimer?.cancel();
    this.ticker?.cancel();
    this.offsetTimer = undefined;
    this.ticker = undefined;
    this.deps.onStopped?.(this);
  }

  /** The manual trigger: probe now and count the next period from now (after the first probe; before it, nothing). */
  trigger(): void {
    switch (this.state) {
      case 'new':
      case 'offset':
        // The first probe is coming anyway (upstream would buffer the trigger and probe twice in a row).
        return;
      case 'probing':
        this.restartTicker();
        this.wake();
        return;
      case 'stopped':
        return;
    }
  }

  private restartTicker(): void {
    this.ticker?.cancel();
    const periodMs = this.timing.periodSeconds * 1000;
    const tick = () => {
      if (this.state !== 'probing') return;
      this.ticker = this.deps.clock.setTimer(periodMs, tick);
      this.wake();
    };
    this.ticker = this.deps.clock.setTimer(periodMs, tick);
  }

  private wake(): void {
    if (this.state !== 'probing') return;
    if (this.inFlight) {
      this.runAgain = true;
      return;
    }
    void this.runOnce();
  }

  private async runOnce(): Promise<void> {
    this.inFlight = true;
    let keepGoing = true;
    try {
      keepGoing = await this.doProbe();
    } catch {
      // HandleCrash: a panicking probe keeps the worker going.
      keepGoing = true;
    } finally {
      this.inFlight = false;
    }
    if (this.state === 'stopped') return;
    if (!keepGoing) {
      this.stop();
      return;
    }
    if (this.runAgain) {
      this.runAgain = false;
      this.wake();
    }
  }

  /** One pass; false when the worker should stop. */
  private async doProbe(): Promise<boolean> {
    const { clock } = this.deps;
    const startTime = clock.now();
    const status = this.deps.getStatus();
    // Either the pod has not been created yet, or it was already deleted.
    if (!status) return true;
    if (status.phase === 'Failed' || status.phase === 'Succeeded') return false;

    const c = probedContainerStatus(status, this.container.name);
    // The container has not been created yet, or was deleted.
    if (!c?.containerID) return true;

    const containerId = parseContainerID(c.containerID).id;
    if (this.current?.containerId !== containerId) {
      const kept = this.current === undefined ? this.deps.restored?.(containerId) : undefined;
      // A new container: start fresh, and resume probing.
      this.current = undefined;
      this.lastResult = undefined;
      this.resultRun = 0;
      this.onHold = false;
      if (kept) this.resume(containerId, kept);
      else this.set(containerId, initialResult(this.probeType));
    }

    if (this.onHold) {
      if (this.probeType === 'liveness' && this.current?.result === 'Failure' && c.state?.running) this.emit(this.current, true);
      return true;
    }

    if (!c.state?.running) {
      this.set(containerId, 'Failure', `container ${this.container.name} is not running`);
      // Stop if the container will not be restarted.
      return !c.state?.terminated || this.pod.spec.restartPolicy !== 'Never';
    }

    // Graceful shutdown: liveness and startup end quietly with a success.
    if (this.pod.metadata.deletionTimestamp && (this.probeType === 'liveness' || this.probeType === 'startup')) {
      this.set(containerId, 'Success');
      return false;
    }

    const startedAt = c.state.running.startedAt ? Date.parse(c.state.running.startedAt) : NaN;
    if (Number.isFinite(startedAt) && Math.trunc((clock.now() - startedAt) / 1000) < this.timing.initialDelaySeconds) return true;

    if (c.started === true) {
      // The startup probe is done once the container has started.
      if (this.probeType === 'startup') return true;
    } else if (this.probeType !== 'startup') {
      // Liveness and readiness wait until the container has started.
      return true;
    }

    const outcome = await this.runProbe(status, containerId);
    if (this.state === 'stopped') return false;
    // A probe that could not run: its result is thrown away.
    if (outcome.result === 'Unknown') return true;
    const result = outcome.result;

    this.deps.onProbe?.({ probeType: this.probeType, pod: this.pod, container: this.container, result, durationSeconds: (clock.now() - startTime) / 1000 });

    if (this.lastResult === result) this.resultRun++;
    else {
      this.lastResult = result;
      this.resultRun = 1;
    }
    if ((result === 'Failure' && this.resultRun < this.timing.failureThreshold) || (result === 'Success' && this.resultRun < this.timing.successThreshold)) {
      // Below the threshold: the result stays as it was.
      return true;
    }

    this.set(containerId, result, this.message(result, outcome));

    if ((this.probeType === 'liveness' && result === 'Failure') || this.probeType === 'startup') {
      // A liveness failure restarts the container, a startup verdict is final for this
      // container: wait for a new container ID before probing again.
      this.onHold = true;
      this.resultRun = 0;
    }
    return true;
  }

  /** prober.probe: the action with retries on errors, and the events it records. */
  private async runProbe(status: PodStatus, containerId: string): Promise<ProbeOutcome> {
    const target: ProbeTarget = {
      pod: this.pod,
      container: this.container,
      containerId,
      podIP: status.podIP || status.podIPs?.[0]?.ip || (this.pod.spec.hostNetwork ? (status.hostIP ?? this.deps.hostIP ?? '') : ''),
      hostIP: status.hostIP ?? this.deps.hostIP ?? '',
    };
    const timeoutMs = this.timing.timeoutSeconds * 1000;
    let outcome: ProbeOutcome = { result: 'Unknown', output: '' };
    for (let i = 0; i < MAX_PROBE_RETRIES; i++) {
      outcome = await this.deps.handler.run(this.probe, target, timeoutMs);
      if (outcome.result !== 'Unknown' || this.state === 'stopped') break;
    }
    const name = probeTypeName(this.probeType);
    if (outcome.result === 'Unknown') this.event('Unhealthy', `${name} probe errored and resulted in unknown state: ${outcome.output}`);
    else if (outcome.result === 'Failure') this.event('Unhealthy', `${name} probe failed: ${outcome.output}`);
    else if (outcome.warning) this.event('ProbeWarning', `${name} probe warning: ${outcome.output}`);
    return outcome;
  }

  private message(result: 'Success' | 'Failure', outcome: ProbeOutcome): string | undefined {
    const name = probeTypeName(this.probeType);
    if (result === 'Failure') return `${name} probe failed: ${outcome.output}`;
    return outcome.warning ? `${name} probe warning: ${outcome.output}` : undefined;
  }

  private event(reason: ProbeEvent['reason'], message: string): void {
    if (this.state === 'stopped') return;
    this.deps.onEvent?.({ pod: this.pod, container: this.container, eventType: 'Warning', reason, message });
  }

  /**
   * A restarted prober's worker takes over the kept result of its container
   * as if it had set it: no update (the readers have it already), and the
   * hold that result put the old worker on (a liveness failure waiting for
   * the restart, a startup verdict).
   */
  private resume(containerId: string, kept: { result: ProbeResultValue; message?: string }): void {
    this.current = { containerId, result: kept.result, ...(kept.message !== undefined ? { message: kept.message } : {}) };
    this.onHold = (this.probeType === 'liveness' && kept.result === 'Failure') || (this.probeType === 'startup' && kept.result !== 'Unknown');
  }

  /** results.Manager.Set: an update only when the result changes. */
  private set(containerId: string, result: ProbeResultValue, message?: string): void {
    if (this.current?.containerId === containerId && this.current.result === result) return;
    this.current = { containerId, result, ...(message !== undefined ? { message } : {}) };
    this.emit(this.current, false);
  }

  private emit(current: { containerId: string; result: ProbeResultValue; message?: string }, repeat: boolean): void {
    if (this.state === 'stopped') return;
    const grace = this.probe.terminationGracePeriodSeconds;
    this.deps.onResult({
      probeType: this.probeType,
      podUid: this.podUid,
      containerName: this.container.name,
      containerId: current.containerId,
      result: current.result,
      ...(current.message !== undefined ? { message: current.message } : {}),
      repeat,
      ...(grace !== undefined ? { terminationGracePeriodSeconds: grace } : {}),
    });
  }
}
