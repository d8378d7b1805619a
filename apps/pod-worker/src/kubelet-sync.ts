/**
 * The kubelet's syncPod, syncTerminatingPod and syncTerminatedPod
 * (kubelet.go; seeds 9, 10, 11.1) for the pod worker: status generation
 * and the status manager, the pod's directories, the probe manager, and the
 * runtime manager.
 *
 * A status is generated from the runtime's pod (the pod cache), the previous
 * status as the status manager keeps it (statusManager.GetPodStatus: the
 * `pod-status` bucket) and the probe results (the prober's `probe-results`
 * bucket), all read at each sync: nothing a status depends on lives only in
 * this process, so a restarted replica, or the replica a shard moved to,
 * generates the status the previous one would have (a Ready pod stays
 * Ready), and a lost probe message is made up for at the next sync.
 */
import { Clock } from '@app/clock';
import type { EventRecorder, KillPodOptions, Pod, PodStatus, SyncPodType } from '@app/contracts';
import type { CriRuntime, StatusResponse } from '@app/cri';
import { KubeletLabels, generateAPIPodStatus, isStaticPod, pastActiveDeadline, isPodPhaseTerminal, terminatePodStatus, toRuntimePodStatus, type RuntimePodStatus } from '@app/kube';
import type { Logger } from '@app/observability';
import type { CacheResult } from '@app/pod-cache';
import { NETWORK_NOT_READY_ERROR_MSG, PodSyncer, type SyncPodResult } from './pod-workers.js';
import type { RuntimeManager, SyncError } from './kuberuntime/runtime-manager.js';
import { VolumeMountError } from './volumemanager/volumes.js';
import { PodDirectories, PodStatusProvider, PodWorkerOutbox, ProbeResultsReader, type ProbeResultsView } from './ports.js';
import type { PodContainerManager } from './cm/pod-container-manager.js';

/**
 * runtimeState.networkErrors as updateRuntimeUp sets it: the runtime's
 * NetworkReady condition, missing or false, is an error.
 */
export function networkErrors(status: StatusResponse): string | undefined {
  const net = status.status?.conditions.find((c) => c.type === 'NetworkReady');
  if (net?.status) return undefined;
  return `container runtime network not ready: ${net ? `NetworkReady=false reason:${net.reason} message:${net.message}` : 'NetworkReady missing'}`;
}

export const DEADLINE_EXCEEDED = { reason: 'DeadlineExceeded', message: 'Pod was active on the node longer than the specified deadline' };

/** What a status is generated from besides the runtime's pod. */
interface StatusInputs {
  /** The status manager's status of this instance of the pod, else the pod's own. */
  previous: PodStatus | undefined;
  probes: ProbeResultsView;
}

/** No probe results: for a terminating pod whose results could not be read. */
const NO_PROBE_RESULTS: ProbeResultsView = { liveness: () => undefined, readiness: () => undefined, startup: () => undefined };

/** What KubeletSync is built from: the kubelet's fields its syncPod, syncTerminatingPod and syncTerminatedPod use. */
export interface KubeletSyncDeps {
  runtime: RuntimeManager;
  cri: CriRuntime;
  dirs: PodDirectories;
  out: PodWorkerOutbox;
  probes: ProbeResultsReader;
  statuses: PodStatusProvider;
  clock: Clock;
  logger: Logger;
  hostIP: string;
  /** kubelet_pod_start_duration_seconds: from the kubelet first seeing the pod to its containers running. */
  observePodStart?: (seconds: number) => void;
  events?: EventRecorder;
  /** The pod cgroups (--cgroups-per-qos); none: the runtime's default cgroups. */
  pcm?: PodContainerManager;
}

export class KubeletSync extends PodSyncer {
  /** The kubelet's reasonCache: the last sync's error per container, by pod UID. */
  private readonly reasons = new Map<string, Map<string, SyncError>>();
  /** Pods whose start was measured (kubelet_pod_start_duration_seconds). */
  private readonly started = new Set<string>();

  constructor(private readonly deps: KubeletSyncDeps) {
    super();
  }

  /**
   * generateAPIPodStatus, with the kubelet's pod sync handlers: a pod past
   * its activeDeadlineSeconds is Failed with DeadlineExceeded in every status
   * generated for it, the terminating and terminated ones too.
   */
  private generateStatus(pod: Pod, runtime: RuntimePodStatus, { previous, probes }: StatusInputs, extra: { podIsTerminal?: boolean } = {}): PodStatus {
    const uid = pod.metadata.uid ?? '';
    const podFailure = this.pastActiveDeadline(pod, previous) ? DEADLINE_EXCEEDED : undefined;
    const reasons = this.reasons.get(uid);
    const known = (r: 'Success' | 'Failure' | undefined) => (r === undefined ? undefined : r === 'Success');
    return generateAPIPodStatus({
      pod: { ...pod, ...(previous ? { status: previous } : {}) },
      // The apiserver's conditions (pod.Status.Conditions): a readiness gate's is set there by someone else; and its phase,
      // which someone else may have made terminal (generateAPIPodStatus' "API phase was terminal").
      ...(isStaticPod(pod) ? {} : { sourceConditions: pod.status?.conditions ?? [], sourceStatus: pod.status ?? {} }),
      runtime,
      now: this.deps.clock.now(),
      hostIP: this.deps.hostIP,
      readiness: (id) => known(probes.readiness(id)),
      startup: (id) => known(probes.startup(id)),
      waitingReasons: (name) => reasons?.get(name),
      ...extra,
      ...(podFailure ? { podFailure } : {}),
    });
  }

  /**
   * The previous status (statusManager.GetPodStatus) and the probe results.
   * In syncPod, a status of a finished instance (TerminatePod) is not the
   * previous one: a static pod re-added under its UID starts afresh.
   */
  private async statusInputs(pod: Pod, phase: 'sync' | 'terminating'): Promise<StatusInputs> {
    const [kept, probes] = await Promise.all([this.deps.statuses.getPodStatus(pod.metadata.uid ?? ''), this.deps.probes.forPod(pod)]);
    const previous = kept && !(phase === 'sync' && kept.podIsFinished) ? kept.status : pod.status;
    return { previous, probes };
  }

  /** statusInputs for a pod being killed: a read that fails must not hold the kill back, so the pod's own status and no results stand in. */
  private async terminatingStatusInputs(pod: Pod): Promise<StatusInputs> {
    try {
      return await this.statusInputs(pod, 'terminating');
    } catch (err) {
      this.deps.logger.warn({ uid: pod.metadata.uid, err }, 'cannot read the pod\'s status or probe results; generating its status without them');
      return { previous: pod.status, probes: NO_PROBE_RESULTS };
    }
  }

  /**
   * syncPod (seed 11.1). `terminal` when the pod must terminate now.
   * `signal`: the pod worker cancels the sync (a kill came). It stops the
   * sync only before the runtime's SyncPod: that runs to its end, as
   * upstream's with context.WithoutCancel (an image pull, a postStart hook).
   */
  async syncPod(_updateType: SyncPodType, pod: Pod, cache: CacheResult, signal?: AbortSignal): Promise<SyncPodResult> {
    const uid = pod.metadata.uid ?? '';
    const runtime = toRuntimePodStatus(uid, cache.entry);

    // activeDeadlineSeconds: the pod fails (generateStatus), and terminates.
    const inputs = await this.statusInputs(pod, 'sync');
    const status = this.generateStatus(pod, runtime, inputs);
    this.deps.out.status('SetPodStatus', pod, { status });
    this.measureStart(pod, status, inputs.previous);
    if (isPodPhaseTerminal(status.phase)) {
      this.deps.logger.info({ uid, phase: status.phase, reason: status.reason }, 'pod is terminal; terminating');
      return { terminal: true };
    }

    // v1.34 has no canRunPod: what the node cannot run (AppArmor) was rejected at admission, in the sync loop.

    // Pod-network pods wait for the runtime's network: NetworkNotReady, retried in about a second (nextSyncAfter).
    if (!pod.spec.hostNetwork) {
      const networkError = networkErrors(await this.deps.cri.runtime('Status', { verbose: false }));
      if (networkError) {
        const message = `${NETWORK_NOT_READY_ERROR_MSG}: ${networkError}`;
        this.deps.events?.event(pod, 'Warning', 'NetworkNotReady', message);
        throw new Error(message);
      }
    }
    if (this.deps.pcm && (await this.ensurePodCgroup(pod, status, runtime)) === 'killed') return { terminal: false };
    // WaitForAttachAndMount: no container (init included) starts before every volume is set up.
    try {
      // A configMap or secret volume whose refresh failed keeps its content and does not hold the pod back.
      for (const f of (await this.deps.dirs.ensure(pod)) ?? []) this.deps.events?.event(pod, 'Warning', 'FailedMount', f.message);
    } catch (err) {
      if (err instanceof VolumeMountError) for (const f of err.failures) this.deps.events?.event(pod, 'Warning', 'FailedMount', f.message);
      throw err;
    }
    this.deps.out.prober('AddPod', pod);
    // Upstream's WaitForAttachAndMount is the last step that honours the pod worker's ctx.
    signal?.throwIfAborted();

    const result = await this.deps.runtime.syncPod(pod, runtime, inputs.probes);
    const reasons = new Map(result.errors);
    if (result.podError) {
      for (const c of [...pod.spec.containers, ...(pod.spec.initContainers ?? [])]) if (!reasons.has(c.name)) reasons.set(c.name, result.podError);
    }
    this.reasons.set(uid, reasons);
    if (result.podError) throw new Error(result.podError.message);
    const hard = [...result.errors.values()].filter((e) => e.reason !== 'CrashLoopBackOff' && e.reason !== 'ImagePullBackOff');
    if (hard.length > 0) throw new Error(hard.map((e) => `${e.reason}: ${e.message}`).join('; '));
    const waits = [...result.errors.values()].flatMap((e) => (e.retryAfterMs !== undefined ? [e.retryAfterMs] : []));
    return { terminal: false, ...(waits.length > 0 ? { requeueAfterMs: Math.max(100, Math.min(...waits)) } : {}) };
  }

  /**
   * syncTerminatingPod (seed 10): stop probes, kill everything, make sure
   * nothing still runs. Not cancellable: as upstream's (`_ context.Context`,
   * a background context), a kill in flight runs to its end with its grace period, and
   * a shorter one arriving meanwhile does not start it over (each preStop
   * hook runs once); a kill that fails is retried with the shorter one.
   */
  async syncTerminatingPod(pod: Pod, cache: CacheResult, gracePeriod: number, kill: KillPodOptions | undefined, runningPodOnly: boolean, _signal?: AbortSignal): Promise<void> {
    const uid = pod.metadata.uid ?? '';
    this.deps.out.prober('StopLivenessAndStartup', pod);
    const runtime = toRuntimePodStatus(uid, cache.entry);
    // killPodOptions' PodStatusFunc (the eviction manager's Failed / Evicted) is applied to the status set before the kill;
    // the terminated status keeps it (a phase's reason and message stay while the phase holds).
    if (!runningPodOnly) this.deps.out.status('SetPodStatus', pod, { status: withKillStatus(this.generateStatus(pod, runtime, await this.terminatingStatusInputs(pod), { podIsTerminal: true }), kill, this.deps.clock.now()) });
    // The pod's own grace period, or a shorter one asked for.
    const override = kill?.gracePeriodOverride !== undefined || pod.metadata.deletionGracePeriodSeconds !== undefined ? gracePeriod : undefined;
    await this.deps.runtime.killPod(pod, runtime, override, kill);
    const stillRunning = await this.deps.cri.runtime('ListContainers', { filter: { labelSelector: { [KubeletLabels.podUid]: uid }, state: { state: 'CONTAINER_RUNNING' } } });
    if (stillRunning.containers.length > 0) throw new Error(`pod ${uid} still has running containers: ${stillRunning.containers.map((c) => c.id.slice(0, 12)).join(', ')}`);
    this.deps.out.prober('RemovePod', pod);
  }

  /**
   * syncTerminatedPod (seed 9; kubelet.go SyncTerminatedPod): the final
   * status, the pod's volumes torn down and its cgroup removed, and then,
   * last, TerminatePod. The status manager may delete the API pod once
   * TerminatePod reached it (canBeDeleted: podIsFinished), so nothing of the
   * pod's cleanup may come after it. As upstream, the final generated status
   * is set first (SetPodStatus) and TerminatePod then marks what is still not
   * terminated: the status manager's TerminatePod starts from the status it
   * holds, which without the SetPodStatus would be the one from before the
   * kill (every container running, so all would read 137
   * ContainerStatusUnknown).
   *
   * The pod's exited containers and its last sandbox (stopped by
   * syncTerminatingPod's killPod) stay: upstream leaves them to the container
   * GC ("we want to make sure logs are available until the pod is physically
   * deleted"), which removes them once the pod is deleted (sync-loop's
   * gc/container-gc.ts); until then its container statuses and logs are the
   * runtime's.
   */
  async syncTerminatedPod(pod: Pod, cache: CacheResult, runningPodOnly: boolean, kill?: KillPodOptions): Promise<void> {
    const uid = pod.metadata.uid ?? '';
    let final: PodStatus | undefined;
    if (!runningPodOnly) {
      const runtime = toRuntimePodStatus(uid, cache.entry);
      final = withKillStatus(this.generateStatus(pod, runtime, await this.terminatingStatusInputs(pod), { podIsTerminal: true }), kill, this.deps.clock.now());
      this.deps.out.status('SetPodStatus', pod, { status: final });
    }
    await this.deps.dirs.remove(pod);
    await this.deps.pcm?.destroy(pod);
    this.reasons.delete(uid);
    this.started.delete(uid);
    if (final) this.deps.out.status('TerminatePod', pod, { status: terminatePodStatus(pod, final, this.deps.clock.now()) });
  }

  /**
   * SyncPod's pod cgroup step. A pod whose containers run (not its first
   * sync) but whose cgroup is gone is killed: its containers run outside the
   * tree the node accounts for (kubelet.go's podKilled). The cgroup is then
   * made, with the pod's limits, before anything is started in it; not for
   * a killed pod that never restarts. A killed pod's next sync (its
   * containers' deaths) starts it afresh in the new cgroup.
   */
  private async ensurePodCgroup(pod: Pod, status: PodStatus, runtime: RuntimePodStatus): Promise<'killed' | 'ok'> {
    const pcm = this.deps.pcm;
    if (!pcm) return 'ok';
    const uid = pod.metadata.uid ?? '';
    const firstSync = !(status.containerStatuses ?? []).some((c) => c.state?.running !== undefined);
    let podKilled = false;
    if (!firstSync && !(await pcm.exists(pod))) {
      this.deps.logger.warn({ uid, cgroup: pcm.getPodContainerName(pod).literal }, 'pod cgroup does not exist while its containers run; killing the pod');
      try {
        await this.deps.runtime.killPod(pod, runtime, undefined);
        podKilled = true;
      } catch (err) {
        this.deps.logger.error({ uid, err }, 'killPod failed for a pod whose cgroup vanished');
      }
    }
    if (!(podKilled && pod.spec.restartPolicy === 'Never') && !(await pcm.exists(pod))) {
      try {
        await pcm.ensureExists(pod);
      } catch (err) {
        const message = `unable to ensure pod container exists: ${(err as Error).message}`;
        this.deps.events?.event(pod, 'Warning', 'FailedToCreatePodContainer', message);
        throw new Error(`failed to ensure that the pod: ${uid} cgroups exist and are correctly applied: ${(err as Error).message}`);
      }
    }
    return podKilled ? 'killed' : 'ok';
  }

  /** `previous` already running: the start was measured before (by this replica or the one before it). */
  private measureStart(pod: Pod, status: PodStatus, previous: PodStatus | undefined): void {
    const uid = pod.metadata.uid ?? '';
    const running = (s: PodStatus | undefined) => s?.phase === 'Running' && (s.containerStatuses ?? []).every((c) => c.state?.running !== undefined);
    if (this.started.has(uid) || !running(status)) return;
    this.started.add(uid);
    if (running(previous)) return;
    const seen = Date.parse(pod.metadata.annotations?.['kubernetes.io/config.seen'] ?? pod.metadata.creationTimestamp ?? '');
    if (Number.isFinite(seen)) this.deps.observePodStart?.(Math.max(0, this.deps.clock.now() - seen) / 1000);
  }

  private pastActiveDeadline(pod: Pod, previous: PodStatus | undefined): boolean {
    if (previous?.reason === DEADLINE_EXCEEDED.reason) return true; // once failed for it, always
    return pastActiveDeadline(pod, previous?.startTime ?? pod.status?.startTime, this.deps.clock.now());
  }
}

/**
 * killPodOptions' PodStatusFunc (eviction_manager.go evictPod): phase Failed,
 * its reason and message, and the DisruptionTarget condition, on the status
 * generated while the pod terminates.
 */
export function withKillStatus(status: PodStatus, kill: KillPodOptions | undefined, now: number): PodStatus {
  const fn = kill?.podStatus;
  if (!fn) return status;
  const out: PodStatus = { ...status, phase: fn.phase, reason: fn.reason, message: fn.message };
  // Set once: a status generated later keeps it (DisruptionTarget is not the kubelet's own) with its transition time.
  if (fn.disruptionTarget && !(status.conditions ?? []).some((c) => c.type === 'DisruptionTarget' && c.status === 'True')) {
    const at = new Date(now).toISOString().replace(/\.\d{3}Z$/, 'Z');
    const others = (status.conditions ?? []).filter((c) => c.type !== 'DisruptionTarget');
    out.conditions = [...others, { type: 'DisruptionTarget', status: 'True', reason: fn.disruptionTarget.reason, message: fn.disruptionTarget.message, lastProbeTime: null, lastTransitionTime: at }];
  }
  return out;
}
