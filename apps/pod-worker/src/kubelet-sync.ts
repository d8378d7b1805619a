/**
 * The kubelet's syncPod, syncTerminatingPod and syncTerminatedPod
 * (kubelet.go; seeds 9, 10, 11.1) for the pod worker: status generation
 * and the status manager, the pod's directories, the probe manager, and the
 * runtime manager.
 */
import { Clock } from '@app/clock';
import type { KillPodOptions, Pod, PodStatus, SyncPodType } from '@app/contracts';
import type { CriRuntime } from '@app/cri';
import { KubeletLabels, generateAPIPodStatus, pastActiveDeadline, isPodPhaseTerminal, terminatePodStatus, toRuntimePodStatus, type RuntimePodStatus } from '@app/kube';
import type { Logger } from '@app/observability';
import type { CacheResult } from '@app/pod-cache';
import { canRunPod, type NodeSecurity } from './can-run-pod.js';
import { PodSyncer, type SyncPodResult } from './pod-workers.js';
import type { RuntimeManager, SyncError } from './runtime-manager.js';
import { PodDirectories, PodWorkerOutbox, ProbeResultsView } from './ports.js';

/** syncPod's rewrite of a status when canRunPod says no: Pending, the reason, waiting containers Blocked. */
export function blockedStatus(status: PodStatus, reason: string, message: string): PodStatus {
  const block = (cs: PodStatus['containerStatuses']) => cs?.map((c) => (c.state?.waiting ? { ...c, state: { waiting: { ...c.state.waiting, reason: 'Blocked' } } } : c));
  return {
    ...status,
    phase: isPodPhaseTerminal(status.phase) ? status.phase : 'Pending',
    reason,
    message,
    ...(status.containerStatuses ? { containerStatuses: block(status.containerStatuses) } : {}),
    ...(status.initContainerStatuses ? { initContainerStatuses: block(status.initContainerStatuses) } : {}),
  };
}

export const DEADLINE_EXCEEDED = { reason: 'DeadlineExceeded', message: 'Pod was active on the node longer than the specified deadline' };

export class KubeletSync extends PodSyncer {
  /** The kubelet's reasonCache: the last sync's error per container, by pod UID. */
  private readonly reasons = new Map<string, Map<string, SyncError>>();
  /** The last status generated per pod, as the previous status of the next one. */
  private readonly lastStatus = new Map<string, PodStatus>();
  /** Pods whose start was measured (kubelet_pod_start_duration_seconds). */
  private readonly started = new Set<string>();

  constructor(
    private readonly runtime: RuntimeManager,
    private readonly cri: CriRuntime,
    private readonly dirs: PodDirectories,
    private readonly out: PodWorkerOutbox,
    private readonly probes: ProbeResultsView,
    private readonly clock: Clock,
    private readonly logger: Logger,
    private readonly hostIP: string,
    /** kubelet_pod_start_duration_seconds: from the kubelet first seeing the pod to its containers running. */
    private readonly observePodStart?: (seconds: number) => void,
    private readonly security: NodeSecurity = { appArmorEnabled: false },
  ) {
    super();
  }

  /**
   * generateAPIPodStatus, with the kubelet's pod sync handlers: a pod past
   * its activeDeadlineSeconds is Failed with DeadlineExceeded in every status
   * generated for it, the terminating and terminated ones too.
   */
  private generateStatus(pod: Pod, runtime: RuntimePodStatus, extra: { podIsTerminal?: boolean } = {}): PodStatus {
    const uid = pod.metadata.uid ?? '';
    const podFailure = this.pastActiveDeadline(pod) ? DEADLINE_EXCEEDED : undefined;
    const previous = this.lastStatus.get(uid) ?? pod.status;
    const reasons = this.reasons.get(uid);
    const status = generateAPIPodStatus({
      pod: { ...pod, ...(previous ? { status: previous } : {}) },
      runtime,
      now: this.clock.now(),
      hostIP: this.hostIP,
      readiness: (id) => (this.probes.readiness(id) === undefined ? undefined : this.probes.readiness(id) === 'Success'),
      startup: (id) => (this.probes.startup(id) === undefined ? undefined : this.probes.startup(id) === 'Success'),
      waitingReasons: (name) => reasons?.get(name),
      ...extra,
      ...(podFailure ? { podFailure } : {}),
    });
    this.lastStatus.set(uid, status);
    return status;
  }

  /** syncPod (seed 11.1). `terminal` when the pod must terminate now. `signal`: the pod worker cancels the sync (a kill came). */
  async syncPod(_updateType: SyncPodType, pod: Pod, cache: CacheResult, signal?: AbortSignal): Promise<SyncPodResult> {
    const uid = pod.metadata.uid ?? '';
    const runtime = toRuntimePodStatus(uid, cache.entry);

    // activeDeadlineSeconds: the pod fails (generateStatus), and terminates.
    const status = this.generateStatus(pod, runtime);
    this.out.status('SetPodStatus', pod, { status });
    this.measureStart(pod, status);
    if (isPodPhaseTerminal(status.phase)) {
      this.logger.info({ uid, phase: status.phase, reason: status.reason }, 'pod is terminal; terminating');
      return { terminal: true };
    }

    // canRunPod: a pod the node cannot run as asked is kept Pending, its containers Blocked, and killed.
    const runnable = canRunPod(pod, this.security);
    if (!runnable.admit) {
      const blocked = blockedStatus(status, runnable.reason ?? '', runnable.message ?? '');
      this.lastStatus.set(uid, blocked);
      this.out.status('SetPodStatus', pod, { status: blocked });
      await this.runtime.killPod(pod, runtime, undefined);
      throw new Error(`pod cannot be run: ${runnable.message ?? ''}`);
    }

    // Pod-network pods wait for the runtime's network (NetworkReady).
    if (!pod.spec.hostNetwork) {
      const st = await this.cri.runtime('Status', { verbose: false });
      const net = st.status?.conditions.find((c) => c.type === 'NetworkReady');
      if (net && !net.status) throw new Error(`network is not ready: ${net.reason}: ${net.message}`);
    }
    await this.dirs.ensure(pod);
    this.out.prober('AddPod', pod);

    const result = await this.runtime.syncPod(pod, runtime, this.probes, signal);
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

  /** syncTerminatingPod (seed 10): stop probes, kill everything, make sure nothing still runs. */
  async syncTerminatingPod(pod: Pod, cache: CacheResult, gracePeriod: number, kill: KillPodOptions | undefined, runningPodOnly: boolean, signal?: AbortSignal): Promise<void> {
    const uid = pod.metadata.uid ?? '';
    this.out.prober('StopLivenessAndStartup', pod);
    const runtime = toRuntimePodStatus(uid, cache.entry);
    if (!runningPodOnly) this.out.status('SetPodStatus', pod, { status: this.generateStatus(pod, runtime, { podIsTerminal: true }) });
    // The pod's own grace period, or a shorter one asked for.
    const override = kill?.gracePeriodOverride !== undefined || pod.metadata.deletionGracePeriodSeconds !== undefined ? gracePeriod : undefined;
    await this.runtime.killPod(pod, runtime, override, kill, signal);
    const stillRunning = await this.cri.runtime('ListContainers', { filter: { labelSelector: { [KubeletLabels.podUid]: uid }, state: { state: 'CONTAINER_RUNNING' } } });
    if (stillRunning.containers.length > 0) throw new Error(`pod ${uid} still has running containers: ${stillRunning.containers.map((c) => c.id.slice(0, 12)).join(', ')}`);
    this.out.prober('RemovePod', pod);
  }

  /** syncTerminatedPod (seed 9): the final status, and the sandboxes removed. */
  async syncTerminatedPod(pod: Pod, cache: CacheResult, runningPodOnly: boolean): Promise<void> {
    const uid = pod.metadata.uid ?? '';
    if (!runningPodOnly) {
      const runtime = toRuntimePodStatus(uid, cache.entry);
      const status = terminatePodStatus(pod, this.generateStatus(pod, runtime, { podIsTerminal: true }), this.clock.now());
      this.out.status('TerminatePod', pod, { status });
    }
    const sandboxes = await this.cri.runtime('ListPodSandbox', { filter: { labelSelector: { [KubeletLabels.podUid]: uid } } });
    for (const sb of sandboxes.items) {
      await this.cri.runtime('StopPodSandbox', { podSandboxId: sb.id });
      await this.cri.runtime('RemovePodSandbox', { podSandboxId: sb.id });
    }
    await this.dirs.remove(pod);
    this.reasons.delete(uid);
    this.lastStatus.delete(uid);
    this.started.delete(uid);
  }

  private measureStart(pod: Pod, status: PodStatus): void {
    const uid = pod.metadata.uid ?? '';
    if (this.started.has(uid) || status.phase !== 'Running') return;
    if (!(status.containerStatuses ?? []).every((c) => c.state?.running !== undefined)) return;
    this.started.add(uid);
    const seen = Date.parse(pod.metadata.annotations?.['kubernetes.io/config.seen'] ?? pod.metadata.creationTimestamp ?? '');
    if (Number.isFinite(seen)) this.observePodStart?.(Math.max(0, this.clock.now() - seen) / 1000);
  }

  private pastActiveDeadline(pod: Pod): boolean {
    const previous = this.lastStatus.get(pod.metadata.uid ?? '');
    if (previous?.reason === DEADLINE_EXCEEDED.reason) return true; // once failed for it, always
    return pastActiveDeadline(pod, previous?.startTime ?? pod.status?.startTime, this.clock.now());
  }
}
