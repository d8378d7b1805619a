/**
 * The kubelet's prober.Manager (pkg/kubelet/prober/prober_manager.go): a
 * probe worker for every (pod, container, probe type) a pod's containers
 * and sidecars (restartable init containers) declare, the results they keep
 * per container ID, and what those results mean for a container's `started`
 * and `ready` (UpdatePodStatus).
 *
 * Upstream's results managers keep a cache and send on their Updates()
 * channels. Here the cache is the `probe-results` bucket (ProbeResultStore,
 * one record per worker, the prober its only writer): each change is saved
 * there first, and only once saved announced as a ProbeResultMessage to the
 * ResultSink (`kubelet.<node>.probe.<type>.<uid>`), so a reader that gets
 * the message finds the record, and a reader that missed it (restarted,
 * or the message was lost) still finds the record. A failed save is
 * retried until a newer change replaces it. A record goes when its worker
 * stops (RemovePod, CleanupPods, StopLivenessAndStartup, the container will
 * not run again), as upstream's worker removes its result on exit, and is
 * overwritten when the container ID changes; it stays when the prober
 * itself stops, for the next prober to resume from (restore). The pod
 * statuses the workers read (upstream: the status manager's cache) are fed
 * in with updatePodStatus. A restarted prober adds again, at restore, every
 * pod a sync would add, with the status manager's kept status (upstream's
 * restarted kubelet adds every pod again), so it probes at once instead of
 * at each pod's next sync.
 */
import type { Clock } from '@app/clock';
import { MessageTypes, type Container, type ContainerStatus, type Pod, type PodRecord, type PodStatus, type ProbeResultMessage, type ProbeResultRecord, type ProbeResultValue, type ProbeType } from '@app/contracts';
import { applyProbeResults as updatePodStatusFromProbes, getContainerStatus, isPodPhaseTerminal, isRestartableInitContainer, parseContainerID } from '@app/kube';
import type { Logger } from '@app/observability';
import type { ProbeHandler } from './handlers/index.js';
import { ProbeEventSink, ProbedPodSource, ProberMetrics, ProbeResultStore, ResultSink, type KeptPodStatus, type ProbeMetricLabels } from './ports.js';
import { ProbeWorker, probeOf, probeTypeName, type ProbeEvent, type ProbeObservation, type ProbeUpdate } from './worker.js';

/**
 * The message as published: a ProbeResultMessage plus the probe's own
 * terminationGracePeriodSeconds when it has one (a field the v1 message
 * does not declare yet; readers that do not know it ignore it).
 */
export type ProbeResultPublication = ProbeResultMessage & { terminationGracePeriodSeconds?: number };

/**
 * prober.Manager. Updating a running worker's probe is not supported (as
 * upstream without MutableContainerProbes): a changed probe takes effect for
 * a pod added again after its workers stopped.
 */
export abstract class ProberManager {
  /**
   * Called once, at start, before the first AddPod. Reads the results a
   * previous prober left in the store (a worker resumes from its kept result
   * when it first sees the same container), then, given a ProbedPodSource,
   * adds every pod that a sync would add (podsToProbeAgain) with its kept
   * status, as AddPod and updatePodStatus would: probing resumes at once,
   * not at each pod's next sync. Rejects when a read fails.
   */
  abstract restore(): Promise<RestoreSummary>;
  /** AddPod: starts a worker for every probe of the pod's containers and sidecars that has none yet. */
  abstract addPod(pod: Pod): void;
  /** StopLivenessAndStartup: during termination, liveness and startup workers stop; readiness keeps going. */
  abstract stopLivenessAndStartup(pod: Pod): void;
  /** RemovePod: stops every worker of the pod and removes its results and status. */
  abstract removePod(pod: Pod): void;
  /** CleanupPods: stops the workers of every pod not in `desiredUids`, and removes every result kept for such a pod. */
  abstract cleanupPods(desiredUids: ReadonlySet<string>): void;
  /**
   * The pod's latest v1 status (from the status manager), which the workers
   * read. A started container whose readiness has not succeeded gets a
   * readiness probe at once, as UpdatePodStatus triggers one.
   */
  abstract updatePodStatus(uid: string, status: PodStatus): void;
  /** UpdatePodStatus: a copy of `status` with each container's `started` and `ready` set from the probe results. */
  abstract applyProbeResults(uid: string, status: PodStatus): PodStatus;
  /** Whether the container has started (its startup probe succeeded, or it has none) by the last fed status. */
  abstract isStarted(uid: string, containerName: string): boolean;
  /** Whether the container is ready (started, running and its readiness probe succeeded, or it has none). */
  abstract isReady(uid: string, containerName: string): boolean;
  /** The results managers' Get: the result kept for a container ID (with or without the runtime prefix). */
  abstract result(probeType: ProbeType, containerId: string): ProbeResultValue | undefined;
  abstract hasWorker(uid: string, containerName: string, probeType: ProbeType): boolean;
  abstract workerCount(): number;
  /** Stops every worker (service shutdown); their results stay in the store for the next prober. */
  abstract stopAll(): void;
}

/** What restore found. */
export interface RestoreSummary {
  /** Results kept by a previous prober. */
  results: number;
  /** Pods added again, with their kept status. */
  pods: number;
}

/** A pod a restarted prober probes again, with the status the status manager keeps for it. */
export interface PodToProbe {
  pod: Pod;
  status: PodStatus;
}

/**
 * The pods a sync would add to the prober (SyncPod's AddPod): desired,
 * admitted, no termination asked for, with a kept status that is neither
 * terminal (Succeeded, Failed) nor finished (TerminatePod). A pod being
 * terminated is left to its pod worker (whose RemovePod or CleanupPods
 * removes the kept results); one without a status yet has not been synced.
 */
export function podsToProbeAgain(desired: readonly PodRecord[], statuses: ReadonlyMap<string, KeptPodStatus>): PodToProbe[] {
  const out: PodToProbe[] = [];
  for (const r of desired) {
    const uid = r.pod.metadata.uid;
    if (!uid || !r.admitted || r.terminationRequested) continue;
    const kept = statuses.get(uid);
    if (!kept || kept.podIsFinished || isPodPhaseTerminal(kept.status.phase)) continue;
    out.push({ pod: r.pod, status: kept.status });
  }
  return out;
}

export interface ProberManagerDeps {
  clock: Clock;
  handler: ProbeHandler;
  sink: ResultSink;
  /** The `probe-results` bucket. */
  store: ProbeResultStore;
  /** The desired pods and their statuses, read at restore; without it the prober waits for AddPod. */
  pods?: ProbedPodSource;
  metrics?: ProberMetrics;
  events?: ProbeEventSink;
  /** [0, 1); Math.random by default. */
  random?: () => number;
  /** The node's IP, for hostNetwork pods whose status has no hostIP yet. */
  hostIP?: string;
  logger?: Logger;
}

/** The probe types in the order AddPod starts them. */
const PROBE_ORDER: readonly ProbeType[] = ['startup', 'readiness', 'liveness'];

const workerKey = (uid: string, containerName: string, probeType: ProbeType) => `${uid}/${containerName}/${probeType}`;

/** How long a failed save of a result waits before it is tried again. */
export const SAVE_RETRY_MS = 1000;

/** The containers that get probe workers: the regular ones, then the sidecars. */
function probedContainers(pod: Pod): Container[] {
  return [...pod.spec.containers, ...(pod.spec.initContainers ?? []).filter(isRestartableInitContainer)];
}

export function newProberManager(deps: ProberManagerDeps): ProberManager {
  return new DefaultProberManager(deps);
}

export class DefaultProberManager extends ProberManager {
  private readonly workers = new Map<string, ProbeWorker>();
  private readonly pods = new Map<string, Pod>();
  private readonly statuses = new Map<string, PodStatus>();
  /** Upstream's manager.start: the first probes are spread over a period only while the prober is this young. */
  private readonly startedAt: number;
  /** Results a previous prober kept, by worker key, until a worker takes its own over (or the pod goes). */
  private readonly restored = new Map<string, ProbeResultRecord>();
  /** The last record saved or being saved, by worker key: a failed save is retried while it is still the last. */
  private readonly latest = new Map<string, ProbeResultRecord>();
  /** The store's writes in order, per worker key. */
  private readonly writes = new Map<string, Promise<void>>();
  /** Shutting down: stopped workers keep their results. */
  private stopping = false;

  constructor(private readonly deps: ProberManagerDeps) {
    super();
    this.startedAt = deps.clock.now();
  }

  async restore(): Promise<RestoreSummary> {
    const records = await this.deps.store.load();
    for (const r of records) {
      const key = workerKey(r.podUid, r.containerName, r.probeType);
      if (!this.workers.has(key)) this.restored.set(key, r);
    }
    const source = this.deps.pods;
    if (!source) return { results: records.length, pods: 0 };
    const [desired, statuses] = await Promise.all([source.desiredPods(), source.podStatuses()]);
    const pods = podsToProbeAgain(desired, statuses);
    for (const { pod, status } of pods) {
      this.addPod(pod);
      this.updatePodStatus(pod.metadata.uid ?? '', status);
    }
    return { results: records.length, pods: pods.length };
  }

  addPod(pod: Pod): void {
    const uid = pod.metadata.uid;
    if (!uid) {
      this.deps.logger?.warn({ pod: pod.metadata.name }, 'AddPod: pod without a UID, not probed');
      return;
    }
    this.pods.set(uid, pod);
    for (const container of probedContainers(pod)) {
      for (const probeType of PROBE_ORDER) {
        if (!probeOf(container, probeType)) continue;
        const key = workerKey(uid, container.name, probeType);
        if (this.workers.has(key)) continue;
        const worker = new ProbeWorker(
          {
            clock: this.deps.clock,
            handler: this.deps.handler,
            getStatus: () => this.statusOf(uid),
            onResult: (u) => this.publish(u),
            random: this.deps.random ?? Math.random,
            proberStartedAt: this.startedAt,
            ...(this.deps.hostIP !== undefined ? { hostIP: this.deps.hostIP } : {}),
            onProbe: (o) => this.observe(o),
            onEvent: (e) => this.record(e),
            onStopped: (w) => this.workerStopped(key, w),
            restored: (containerId) => this.takeRestored(key, containerId),
          },
          pod,
          container,
          probeType,
        );
        this.workers.set(key, worker);
        worker.start();
      }
    }
  }

  stopLivenessAndStartup(pod: Pod): void {
    this.stopWorkers((w) => w.podUid === pod.metadata.uid && w.probeType !== 'readiness');
  }

  removePod(pod: Pod): void {
    const uid = pod.metadata.uid ?? '';
    this.stopWorkers((w) => w.podUid === uid);
    this.forgetRestored((r) => r.podUid === uid);
    this.pods.delete(uid);
    this.statuses.delete(uid);
  }

  cleanupPods(desiredUids: ReadonlySet<string>): void {
    this.stopWorkers((w) => !desiredUids.has(w.podUid));
    this.forgetRestored((r) => !desiredUids.has(r.podUid));
    for (const uid of [...this.pods.keys()]) if (!desiredUids.has(uid)) this.pods.delete(uid);
    for (const uid of [...this.statuses.keys()]) if (!desiredUids.has(uid)) this.statuses.delete(uid);
  }

  updatePodStatus(uid: string, status: PodStatus): void {
    this.statuses.set(uid, status);
    const spec = this.pods.get(uid);
    const probed = [...(status.containerStatuses ?? []), ...(status.initContainerStatuses ?? []).filter((s) => this.isSidecar(spec, s.name))];
    for (const cs of probed) {
      if (!cs.state?.running || !this.isContainerStarted(uid, cs)) continue;
      const readiness = this.workers.get(workerKey(uid, cs.name, 'readiness'));
      if (readiness && readiness.resultFor(cs.containerID ?? '') !== 'Success') readiness.trigger();
    }
  }

  applyProbeResults(uid: string, status: PodStatus): PodStatus {
    const out = structuredClone(status);
    updatePodStatusFromProbes(out, this.pods.get(uid)?.spec.initContainers, {
      isContainerStarted: (cs) => this.isContainerStarted(uid, cs),
      isContainerReady: (cs) => this.isContainerReady(uid, cs),
    });
    return out;
  }

  isStarted(uid: string, containerName: string): boolean {
    const cs = this.containerStatus(uid, containerName);
    return cs !== undefined && this.isContainerStarted(uid, cs);
  }

  isReady(uid: string, containerName: string): boolean {
    const cs = this.containerStatus(uid, containerName);
    return cs !== undefined && this.isContainerStarted(uid, cs) && this.isContainerReady(uid, cs);
  }

  result(probeType: ProbeType, containerId: string): ProbeResultValue | undefined {
    for (const w of this.workers.values()) {
      if (w.probeType !== probeType) continue;
      const r = w.resultFor(containerId);
      if (r !== undefined) return r;
    }
    return undefined;
  }

  hasWorker(uid: string, containerName: string, probeType: ProbeType): boolean {
    return this.workers.has(workerKey(uid, containerName, probeType));
  }

  workerCount(): number {
    return this.workers.size;
  }

  stopAll(): void {
    this.stopping = true;
    this.stopWorkers(() => true);
  }

  /** The status the workers read: the fed one with started and ready from the results. */
  private statusOf(uid: string): PodStatus | undefined {
    const status = this.statuses.get(uid);
    return status && this.applyProbeResults(uid, status);
  }

  private containerStatus(uid: string, name: string): ContainerStatus | undefined {
    const status = this.statuses.get(uid);
    return getContainerStatus(status?.containerStatuses, name) ?? getContainerStatus(status?.initContainerStatuses, name);
  }

  private isSidecar(pod: Pod | undefined, name: string): boolean {
    return isRestartableInitContainer(pod?.spec.initContainers?.find((i) => i.name === name));
  }

  /**
   * isContainerStarted: running, and its startup probe succeeded for this
   * container ID; with no result yet, a status that already says started
   * (for this container: the prober restarted) counts, else started only
   * when there is no startup probe worker.
   */
  private isContainerStarted(uid: string, cs: ContainerStatus): boolean {
    if (!cs.state?.running) return false;
    const id = cs.containerID ? parseContainerID(cs.containerID).id : undefined;
    const result = id === undefined ? undefined : this.workers.get(workerKey(uid, cs.name, 'startup'))?.resultFor(id);
    if (result !== undefined) return result === 'Success';
    if (cs.started === true) return true;
    return !this.workers.has(workerKey(uid, cs.name, 'startup'));
  }

  /** Ready: running and a readiness success for this container ID, or no readiness probe worker. */
  private isContainerReady(uid: string, cs: ContainerStatus): boolean {
    if (!cs.state?.running) return false;
    const worker = this.workers.get(workerKey(uid, cs.name, 'readiness'));
    if (!worker) return true;
    return cs.containerID !== undefined && worker.resultFor(cs.containerID) === 'Success';
  }

  private stopWorkers(which: (w: ProbeWorker) => boolean): void {
    for (const w of [...this.workers.values()]) if (which(w)) w.stop();
  }

  private workerStopped(key: string, worker: ProbeWorker): void {
    if (this.workers.get(key) === worker) this.workers.delete(key);
    this.deps.metrics?.forget(metricLabels(worker.probeType, worker.pod, worker.container));
    // results.Manager.Remove on the worker's exit; a prober shutting down keeps them.
    if (this.stopping || this.workers.has(key)) return;
    if (worker.containerId !== undefined || this.restored.has(key)) this.removeResult(key, worker.podUid, worker.container.name, worker.probeType);
  }

  /** The kept result of a worker's key, once: the worker adopts it when it is for `containerId`. */
  private takeRestored(key: string, containerId: string): ProbeResultRecord | undefined {
    const r = this.restored.get(key);
    this.restored.delete(key);
    return r?.containerId === containerId ? r : undefined;
  }

  /** Removes the kept results `which` selects from the store. */
  private forgetRestored(which: (r: ProbeResultRecord) => boolean): void {
    for (const [key, r] of [...this.restored]) if (which(r)) this.removeResult(key, r.podUid, r.containerName, r.probeType);
  }

  private removeResult(key: string, podUid: string, containerName: string, probeType: ProbeType): void {
    this.restored.delete(key);
    this.latest.delete(key);
    this.inOrder(key, () => this.deliver('remove probe result', () => this.deps.store.delete(podUid, containerName, probeType)));
  }

  /** Runs `write` after every earlier write of the same worker key. */
  private inOrder(key: string, write: () => Promise<void>): void {
    const next = (this.writes.get(key) ?? Promise.resolve()).then(write);
    this.writes.set(key, next);
    void next.then(() => {
      if (this.writes.get(key) === next) this.writes.delete(key);
    });
  }

  /** Saves the record, then announces it; a failed save is tried again while it is still the worker's last. */
  private save(key: string, record: ProbeResultRecord, msg: ProbeResultPublication): Promise<void> {
    if (this.latest.get(key) !== record) return Promise.resolve();
    return this.deps.store.put(record).then(
      () => this.deliver('publish probe result', () => this.deps.sink.publish(msg)),
      (err: unknown) => {
        this.deps.logger?.error({ err, podUid: record.podUid, container: record.containerName, probeType: record.probeType }, `prober: saving the probe result failed; retrying in ${SAVE_RETRY_MS}ms`);
        this.deps.clock.setTimer(SAVE_RETRY_MS, () => this.inOrder(key, () => this.save(key, record, msg)));
      },
    );
  }

  private publish(u: ProbeUpdate): void {
    const key = workerKey(u.podUid, u.containerName, u.probeType);
    const msg: ProbeResultPublication = {
      type: MessageTypes.probeResult,
      probeType: u.probeType,
      podUid: u.podUid,
      containerId: u.containerId,
      containerName: u.containerName,
      result: u.result,
      ...(u.message !== undefined ? { message: u.message } : {}),
      ...(u.terminationGracePeriodSeconds !== undefined ? { terminationGracePeriodSeconds: u.terminationGracePeriodSeconds } : {}),
    };
    if (u.repeat) {
      // A liveness failure sent again: the record has not changed.
      this.inOrder(key, () => this.deliver('publish probe result', () => this.deps.sink.publish(msg)));
      return;
    }
    const record: ProbeResultRecord = {
      podUid: u.podUid,
      containerName: u.containerName,
      probeType: u.probeType,
      containerId: u.containerId,
      result: u.result,
      ...(u.message !== undefined ? { message: u.message } : {}),
      time: this.deps.clock.now(),
    };
    this.latest.set(key, record);
    this.inOrder(key, () => this.save(key, record, msg));
  }

  private record(e: ProbeEvent): void {
    const events = this.deps.events;
    if (events) void this.deliver('record probe event', () => events.record(e));
  }

  /** Calls a port that may throw or reject; the failure is logged, never thrown. */
  private async deliver(what: string, call: () => void | Promise<void>): Promise<void> {
    try {
      await call();
    } catch (err) {
      this.deps.logger?.error({ err }, `prober: ${what} failed`);
    }
  }

  private observe(o: ProbeObservation): void {
    const metrics = this.deps.metrics;
    if (!metrics) return;
    const labels = metricLabels(o.probeType, o.pod, o.container);
    // As upstream: durations of successful (and unknown) probes only.
    switch (o.result) {
      case 'Success':
        metrics.observe(labels, 'successful', o.durationSeconds);
        return;
      case 'Failure':
        metrics.observe(labels, 'failed');
        return;
      case 'Unknown':
        metrics.observe(labels, 'unknown', o.durationSeconds);
        return;
    }
  }
}

function metricLabels(probeType: ProbeType, pod: Pod, container: Container): ProbeMetricLabels {
  return { probe_type: probeTypeName(probeType), container: container.name, pod: pod.metadata.name ?? '', namespace: pod.metadata.namespace ?? '' };
}
