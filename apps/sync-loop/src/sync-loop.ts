/**
 * The kubelet's syncLoopIteration, as a service: every channel of the
 * kubelet arrives here as a NATS message or a tick, and each turns into
 * work for the pod workers (dispatchWork). The podManager and the workQueue
 * live in the `pods` KV bucket, so a restarted sync loop carries on where
 * it stopped, and it compares every change with what it already has, so
 * nothing is dispatched twice for the same change.
 *
 *   configCh        handlePodUpdate   ADD / UPDATE / REMOVE / RECONCILE / DELETE
 *   plegCh          handlePlegEvent   sync the pod; clean up dead containers on ContainerDied
 *   probe managers  handleProbeResult liveness failure, readiness and startup changes sync the pod
 *   syncCh (1s)     syncTick          pods due in the work queue and pods past activeDeadlineSeconds
 *   housekeeping    housekeeping      HandlePodCleanups (2s, once the sources are ready); names the
 *                                     deleted pods whose content the container GC removes at once
 *   completeWork    handleWorkDone    enqueue the pod for its next sync
 *   podResync       resyncAll         every pod synced now (a new status-manager leader asks)
 *
 * Every admitted pod has a work-queue entry: one whose work-done was lost
 * (or whose entry was taken just before a restart) is queued again by
 * housekeeping for the resync interval, so it is never left unsynced
 * (docs/adr/0008-delivery-by-reconciliation.md).
 */
import { Clock } from '@app/clock';
import { EventRecorder } from '@app/contracts';
import type {
  KillPodOptions,
  PodLifecycleEventMessage,
  Pod,
  PodOperation,
  PodRecord,
  PodStatus,
  PodUpdateMessage,
  ProbeResultMessage,
  SyncPodType,
  WorkDoneMessage,
} from '@app/contracts';
import { canAdmitPod, getPodQOS, type AdmitResult, type RuntimeFeaturesInfo, isMirrorPod, pastActiveDeadline as pastDeadline, diffListing, podsDifferSemantically, type NodeInfo, type PodOperations } from '@app/kube';
import type { Logger } from '@app/observability';
import { decideHousekeeping, isTerminalPhase } from './housekeeping.js';
import { removeContainerWithLog } from './gc/container-gc.js';
import { RuntimeCache, type RuntimePods } from './runtime-cache.js';
import { NodeState, PodStore, RuntimeView, SyncLoopOutbox, type NodeLabelsView, type PodLogs } from './ports.js';

/** The kubelet keeps one dead container per container name (MaxPerPodContainer, at least 1). */
export const DEAD_CONTAINERS_TO_KEEP = 1;
/** Orphaned-status and restart requests are repeated at most this often while nothing changes. */
const REPEAT_MS = 30_000;

/** What the sync loop works with. */
export interface SyncLoopDeps {
  /** podManager and workQueue, kept in the `pods` bucket. */
  store: PodStore;
  nodeState: NodeState;
  runtime: RuntimeView;
  out: SyncLoopOutbox;
  events: EventRecorder;
  clock: Clock;
  logger: Logger;
  /** The runtime cache housekeeping reads (the module's is shared with the orphan cleanup); default: a listing per pass. */
  runtimePods?: RuntimePods;
  /** Where removed containers' log files go with them (removeContainerLog). */
  podLogs?: PodLogs;
  /** The API Node's labels (node-status's `<node>.node-labels`), which admission matches node selectors against; none: the configured ones. */
  nodeLabels?: NodeLabelsView;
  /** What the runtime said it implements at its last ready Status (runtimeState's features); none: nothing beyond the core. */
  runtimeFeatures?: () => RuntimeFeaturesInfo | undefined;
}

export interface SyncLoopOptions {
  /** --sync-frequency: when an admitted pod with no work-queue entry (its work-done lost) is due. */
  resyncIntervalMs: number;
}

/** lifecycle.PodAdmitHandler. */
export interface PodAdmitHandler {
  admit(pod: Pod): AdmitResult;
}

export class SyncLoop {
  /** podManager: desired pods by UID. */
  private readonly pods = new Map<string, PodRecord>();
  /** workQueue: when each pod is due for its next sync. */
  private readonly queue = new Map<string, number>();
  private sourcesReady = false;
  private readonly lastSent = new Map<string, number>();
  private readonly admitHandlers: PodAdmitHandler[] = [];

  private readonly store: PodStore;
  private readonly nodeState: NodeState;
  private readonly runtime: RuntimeView;
  private readonly out: SyncLoopOutbox;
  private readonly events: EventRecorder;
  private readonly clock: Clock;
  private readonly logger: Logger;
  private readonly runtimePods: RuntimePods;
  private readonly podLogs: PodLogs | undefined;
  private readonly nodeLabels: NodeLabelsView | undefined;
  private readonly runtimeFeatures: (() => RuntimeFeaturesInfo | undefined) | undefined;

  constructor(
    deps: SyncLoopDeps,
    /** The node admission checks pods against. */
    private readonly node: NodeInfo,
    private readonly options: SyncLoopOptions = { resyncIntervalMs: 60_000 },
  ) {
    ({ store: this.store, nodeState: this.nodeState, runtime: this.runtime, out: this.out, events: this.events, clock: this.clock, logger: this.logger, podLogs: this.podLogs, nodeLabels: this.nodeLabels, runtimeFeatures: this.runtimeFeatures } = deps);
    this.runtimePods = deps.runtimePods ?? new RuntimeCache(deps.runtime, deps.clock, 0);
  }

  /** Loads the podManager and the work queue from KV (again when leading again: what another leader changed). */
  async restore(): Promise<void> {
    this.pods.clear();
    this.queue.clear();
    for (const r of await this.store.loadPods()) this.pods.set(r.pod.metadata.uid ?? '', r);
    for (const [uid, due] of await this.store.loadQueue()) this.queue.set(uid, due);
    this.logger.info({ pods: this.pods.size, queued: this.queue.size }, 'podManager restored from KV');
  }

  /**
   * AddPodAdmitHandler: `h` is asked before the resource predicates, as
   * the kubelet's list starts with the eviction manager's handler.
   */
  addPodAdmitHandler(h: PodAdmitHandler): void {
    this.admitHandlers.push(h);
  }

  get desiredPods(): ReadonlyMap<string, PodRecord> {
    return this.pods;
  }

  get areSourcesReady(): boolean {
    return this.sourcesReady;
  }

  /** configCh. */
  async handlePodUpdate(msg: PodUpdateMessage): Promise<void> {
    const ops: PodOperations = { add: [], update: [], remove: [], reconcile: [], delete: [] };
    ops[msg.op] = msg.pods;
    await this.applyOperations(msg.source, ops);
  }

  /** sourcesReady. */
  handleSourcesReady(): void {
    if (!this.sourcesReady) this.logger.info('all pod sources ready: housekeeping starts');
    this.sourcesReady = true;
  }

  /**
   * Level-triggered repair: each source's full listing from config-source,
   * diffed against the podManager, so an update lost while this process was
   * down is applied now.
   */
  async reconcileWithSources(): Promise<boolean> {
    const snap = await this.out.sourcesSnapshot();
    if (!snap) return false;
    for (const s of snap.sources) {
      if (!s.ready) continue;
      const mine = new Map([...this.pods].filter(([, r]) => r.source === s.source).map(([uid, r]) => [uid, r.pod] as const));
      await this.applyOperations(s.source, diffListing(mine, s.pods));
    }
    if (snap.sources.every((s) => s.ready)) this.handleSourcesReady();
    return true;
  }

  private async applyOperations(source: string, listed: PodOperations): Promise<void> {
    const start = this.clock.date();
    const ops = this.withoutMirrorPods(listed);
    // The kubelet's order for one listing: removes, adds, updates, deletes, reconciles.
    for (const pod of ops.remove) await this.undoOnFailure(pod, () => this.handleRemove(pod, start));
    for (const pod of sortByCreation(ops.add)) await this.undoOnFailure(pod, () => this.handleAdd(source, pod, start));
    for (const pod of ops.update) await this.undoOnFailure(pod, () => this.handleUpdate(source, pod, start, 'update'));
    for (const pod of ops.delete) await this.undoOnFailure(pod, () => this.handleUpdate(source, pod, start, 'delete'));
    for (const pod of ops.reconcile) await this.undoOnFailure(pod, () => this.handleReconcile(pod, start));
  }

  /**
   * HandlePodAdditions' IsMirrorPod branch: a mirror pod (the apiserver's
   * copy of a static pod, annotation kubernetes.io/config.mirror) is never a
   * pod to run. config-source leaves them out already; this is the second
   * lock on that door.
   */
  private withoutMirrorPods(ops: PodOperations): PodOperations {
    const keep = (pods: Pod[]) =>
      pods.filter((pod) => {
        if (!isMirrorPod(pod)) return true;
        this.logger.warn({ pod: `${pod.metadata.namespace ?? ''}/${pod.metadata.name ?? ''}`, uid: pod.metadata.uid }, 'a mirror pod is not a pod to run: ignored');
        return false;
      });
    return { add: keep(ops.add), update: keep(ops.update), delete: keep(ops.delete), reconcile: keep(ops.reconcile), remove: ops.remove };
  }

  /**
   * An operation that failed half-way (its KV write refused while NATS is
   * away) leaves the podManager in memory as it was, so the next
   * reconciliation with the sources sees the difference and does it again,
   * dispatch included; otherwise the pod would look handled and never be.
   */
  private async undoOnFailure(pod: Pod, op: () => Promise<void>): Promise<void> {
    const uid = pod.metadata.uid ?? '';
    const before = this.pods.get(uid);
    try {
      await op();
    } catch (err) {
      if (before) this.pods.set(uid, before);
      else this.pods.delete(uid);
      throw err;
    }
  }

  /**
   * The node admission checks a pod against: the configured one, with the API Node's labels once
   * node-status has read them (upstream's getNodeAnyWay: the node lister's Node, a label someone
   * set on it included), and the runtime's features as the Node's status.features says them.
   * A failed read is the configured labels, logged.
   */
  private async admissionNode(): Promise<NodeInfo> {
    const node: NodeInfo = { ...this.node, supplementalGroupsPolicy: this.runtimeFeatures?.()?.supplementalGroupsPolicy ?? false };
    const view = this.nodeLabels;
    if (!view) return node;
    try {
      const labels = await view.read();
      return labels ? { ...node, labels } : node;
    } catch (err) {
      this.logger.warn({ err: (err as Error).message }, "reading the Node's labels failed: admission uses the configured ones");
      return node;
    }
  }

  /** HandlePodAdditions (one pod): admit and dispatch SyncPodCreate, unless it is already known. */
  private async handleAdd(source: string, pod: Pod, start: Date): Promise<void> {
    const uid = pod.metadata.uid ?? '';
    const existing = this.pods.get(uid);
    if (existing) {
      if (podsDifferSemantically(existing.pod, pod)) await this.handleUpdate(source, pod, start, 'update');
      return;
    }
    const record: PodRecord = { pod, source, addedAt: this.clock.now(), admitted: true };
    // Upstream admits neither a pod whose termination was requested nor one already in a terminal phase.
    if (!pod.metadata.deletionTimestamp && !isTerminalPhase(pod.status)) {
      const verdict = this.admitHandlers.map((h) => h.admit(pod)).find((v) => !v.admit) ?? admit(this.activePods(), pod, await this.admissionNode());
      if (!verdict.admit) {
        record.admitted = false;
        record.rejection = { reason: verdict.reason ?? 'UnexpectedAdmissionError', message: verdict.message ?? '' };
      }
    }
    this.pods.set(uid, record);
    await this.store.putPod(record);
    if (!record.admitted && record.rejection) {
      this.rejectPod(pod, record.rejection.reason, record.rejection.message);
      return;
    }
    this.dispatch(pod, 'SyncPodCreate', start);
  }

  /** HandlePodUpdates / DELETE: store the new spec and dispatch. */
  private async handleUpdate(source: string, pod: Pod, start: Date, op: Extract<PodOperation, 'update' | 'delete'>): Promise<void> {
    const uid = pod.metadata.uid ?? '';
    const existing = this.pods.get(uid);
    if (!existing) {
      await this.handleAdd(source, pod, start);
      return;
    }
    if (!podsDifferSemantically(existing.pod, pod)) return;
    const deleting = op === 'delete' || pod.metadata.deletionTimestamp !== undefined;
    const record: PodRecord = { ...existing, pod, source, ...(deleting ? { terminationRequested: true } : {}) };
    this.pods.set(uid, record);
    await this.store.putPod(record);
    if (!record.admitted) return;
    if (deleting) {
      const grace = pod.metadata.deletionGracePeriodSeconds;
      this.dispatch(pod, 'SyncPodKill', start, grace !== undefined ? { gracePeriodOverride: grace } : {});
    } else {
      this.dispatch(pod, 'SyncPodUpdate', start);
    }
  }

  /** HandlePodRemoves: forget the pod and kill it. */
  private async handleRemove(pod: Pod, start: Date): Promise<void> {
    const uid = pod.metadata.uid ?? '';
    const existing = this.pods.get(uid);
    if (!existing) return;
    this.pods.delete(uid);
    this.queue.delete(uid);
    await this.store.deletePod(uid);
    await this.store.deleteQueue(uid);
    if (existing.admitted) this.dispatch(existing.pod, 'SyncPodKill', start);
  }

  /** HandlePodReconcile: keep the new status; sync when readiness gates may need it. */
  private async handleReconcile(pod: Pod, start: Date): Promise<void> {
    const uid = pod.metadata.uid ?? '';
    const existing = this.pods.get(uid);
    if (!existing) return;
    const record: PodRecord = { ...existing, pod: { ...existing.pod, ...(pod.status ? { status: pod.status } : {}) } };
    this.pods.set(uid, record);
    await this.store.putPod(record);
    if (record.admitted && (pod.spec.readinessGates?.length ?? 0) > 0) this.dispatch(record.pod, 'SyncPodSync', start);
  }

  /** plegCh. */
  async handlePlegEvent(e: PodLifecycleEventMessage): Promise<void> {
    const record = this.pods.get(e.id);
    if (record?.admitted && e.eventType !== 'ContainerRemoved') this.dispatch(record.pod, 'SyncPodSync', this.clock.date());
    if (e.eventType === 'ContainerDied' && e.data) await this.cleanUpContainersInPod(e.id, e.data);
  }

  /** The probe managers' updates: a liveness failure, and readiness or startup changes, sync the pod. */
  handleProbeResult(r: ProbeResultMessage): void {
    if (r.probeType === 'liveness' && r.result !== 'Failure') return;
    const record = this.pods.get(r.podUid);
    if (record?.admitted) this.dispatch(record.pod, 'SyncPodSync', this.clock.date());
  }

  /**
   * Every admitted pod not asked to terminate synced now (Subjects.podResync):
   * a status manager that starts leading asks, so that the pod workers send
   * it every pod's status at once instead of at the next resync. Ours: in
   * one kubelet the status manager never misses a SetPodStatus. Returns how
   * many pods were dispatched.
   */
  resyncAll(): number {
    const start = this.clock.date();
    let n = 0;
    for (const record of this.pods.values()) {
      if (!record.admitted || record.terminationRequested === true) continue;
      this.dispatch(record.pod, 'SyncPodSync', start);
      n++;
    }
    return n;
  }

  /** completeWork -> workQueue.Enqueue. */
  async handleWorkDone(m: WorkDoneMessage): Promise<void> {
    if (!this.pods.has(m.podUid)) return;
    const due = this.clock.now() + Math.max(0, m.requeueAfterMs);
    this.queue.set(m.podUid, due);
    await this.store.putQueue(m.podUid, due);
  }

  /** syncCh: getPodsToSync, then HandlePodSyncs. */
  async syncTick(): Promise<string[]> {
    const now = this.clock.now();
    // The statuses are only needed for activeDeadlineSeconds: no KV scan every second otherwise.
    const anyDeadline = [...this.pods.values()].some((r) => r.admitted && r.pod.spec.activeDeadlineSeconds !== undefined);
    const statuses = anyDeadline ? await this.nodeState.podStatuses().catch(() => new Map<string, PodStatus>()) : new Map<string, PodStatus>();
    const toSync: string[] = [];
    for (const [uid, due] of this.queue) {
      if (due > now) continue;
      this.queue.delete(uid);
      await this.store.deleteQueue(uid);
      if (this.pods.get(uid)?.admitted) toSync.push(uid);
    }
    for (const [uid, record] of this.pods) {
      if (!record.admitted || toSync.includes(uid)) continue;
      if (pastActiveDeadline(record.pod, statuses.get(uid), now)) toSync.push(uid);
    }
    const start = this.clock.date();
    for (const uid of toSync) {
      const record = this.pods.get(uid);
      if (record) this.dispatch(record.pod, 'SyncPodSync', start);
    }
    return toSync;
  }

  /**
   * housekeepingCh: HandlePodCleanups, once every source has delivered.
   * It reads the `workers` and `pod-status` mirrors and the runtime cache,
   * as upstream reads the pod workers in memory and its runtime cache; the
   * pods it would kill or restart are read again first (their records and
   * statuses by a get each, the runtime by a listing started in this pass),
   * so a kill or a restart is decided on values no older than the pass.
   */
  async housekeeping(): Promise<{ contentToRemove: string[] }> {
    if (!this.sourcesReady) return { contentToRemove: [] };
    const passStart = this.clock.now();
    const mirrored = this.nodeState.mirrored();
    const listing = await this.runtimePods.get();
    let d = decideHousekeeping({ desired: this.pods, workers: mirrored.workers, runtimePods: listing.pods, statuses: mirrored.statuses });
    const doubtful = [...new Set([...d.kill.map((rp) => rp.uid), ...d.restart])];
    if (doubtful.length > 0) {
      const [current, fresh] = await Promise.all([this.nodeState.current(doubtful), d.kill.length > 0 ? this.runtimePods.getNewerThan(passStart) : Promise.resolve(listing)]);
      const checked = new Set(doubtful);
      const again = decideHousekeeping({
        desired: this.pods,
        workers: overlay(mirrored.workers, doubtful, current.workers),
        runtimePods: fresh.pods,
        statuses: overlay(mirrored.statuses, doubtful, current.statuses),
      });
      // Only what was read again is acted on; a pod the fresh listing adds waits for the next pass.
      d = { ...again, kill: again.kill.filter((rp) => checked.has(rp.uid)), restart: again.restart.filter((uid) => checked.has(uid)) };
    }
    const now = this.clock.now();
    const start = this.clock.date();
    this.out.prober('CleanupPods', [], d.possiblyRunning);
    for (const rp of d.kill) {
      this.logger.info({ pod: `${rp.namespace}/${rp.name}`, uid: rp.uid }, 'killing a runtime pod no source wants');
      const pod: Pod = { metadata: { name: rp.name, namespace: rp.namespace, uid: rp.uid }, spec: { containers: [] } };
      this.dispatch(pod, 'SyncPodKill', start, { gracePeriodOverride: 1 }, true);
    }
    for (const uid of d.orphanedStatuses) {
      if (this.recentlySent(`status/${uid}`, now)) continue;
      this.out.status('RemoveOrphanedStatuses', uid, {});
    }
    for (const uid of d.restart) {
      const record = this.pods.get(uid);
      if (!record || this.recentlySent(`restart/${uid}`, now)) continue;
      this.logger.info({ uid }, 'restarting a terminated pod that was added again');
      this.dispatch(record.pod, 'SyncPodCreate', start);
    }
    for (const uid of d.terminalToDelete) {
      const record = this.pods.get(uid);
      if (!record || this.recentlySent(`delete/${uid}`, now)) continue;
      this.logger.info({ uid, pod: `${record.pod.metadata.namespace ?? ''}/${record.pod.metadata.name ?? ''}` }, 'Handling termination and deletion of the pod to pod workers');
      this.dispatch(record.pod, 'SyncPodKill', start);
    }
    await this.requeueUnqueued(now);
    // Each deleted pod's content is asked for once in a while: when its removal fails, the GC's own period retries it.
    const contentToRemove = d.contentToRemove.filter((uid) => !this.recentlySent(`content/${uid}`, now));
    for (const [key, at] of this.lastSent) if (now - at >= REPEAT_MS) this.lastSent.delete(key);
    return { contentToRemove };
  }

  /** An admitted pod with no work-queue entry (its work-done was lost) is due after the resync interval. */
  private async requeueUnqueued(now: number): Promise<void> {
    for (const [uid, record] of this.pods) {
      if (!record.admitted || this.queue.has(uid)) continue;
      const due = now + this.options.resyncIntervalMs;
      this.queue.set(uid, due);
      await this.store.putQueue(uid, due);
    }
  }

  /**
   * The kubelet's cleanUpContainersInPod: dead containers beyond the ones
   * kept are removed. A pod that is no longer desired, or is terminating, is
   * left to the container GC, which removes all of its content once its
   * worker finished (housekeeping's contentToRemove).
   */
  async cleanUpContainersInPod(uid: string, exitedContainerId: string): Promise<string[]> {
    const record = this.pods.get(uid);
    if (!record || record.terminationRequested === true) return [];
    const containers = await this.runtime.containersOf(uid);
    const died = containers.find((c) => c.id === exitedContainerId);
    if (!died) return [];
    const dead = containers
      .filter((c) => c.name === died.name && c.state === 'CONTAINER_EXITED')
      .sort((a, b) => b.createdAt - a.createdAt);
    const doomed = dead.slice(DEAD_CONTAINERS_TO_KEEP);
    const removed: string[] = [];
    for (const c of doomed) {
      try {
        await removeContainerWithLog(this.runtime, this.podLogs, c.id);
        removed.push(c.id);
      } catch (err) {
        this.logger.warn({ uid, containerId: c.id, err: (err as Error).message }, 'failed to remove a dead container');
      }
    }
    return removed;
  }

  /**
   * GetActivePods, for the eviction manager: admitted, not asked to
   * terminate, not terminal in the status manager's status, and not yet
   * terminating or terminated in its pod worker.
   */
  async activePodsForEviction(): Promise<Pod[]> {
    const [workers, statuses] = await Promise.all([this.nodeState.workerStates(), this.nodeState.podStatuses()]);
    return [...this.pods.entries()]
      .filter(([uid, r]) => {
        const w = workers.get(uid);
        return r.admitted && !r.terminationRequested && !isTerminalPhase(r.pod.status) && !isTerminalPhase(statuses.get(uid)) && w?.terminatingAt === undefined && w?.terminatedAt === undefined;
      })
      .map(([, r]) => r.pod);
  }

  /** The eviction manager's killPodFunc: SyncPodKill with its options (the grace period, the status the pod ends with). */
  killPod(pod: Pod, options: KillPodOptions): void {
    this.dispatch(pod, 'SyncPodKill', this.clock.date(), options);
  }

  /** Pods admitted and still active (for canAdmitPod). */
  private activePods(): Pod[] {
    return [...this.pods.values()].filter((r) => r.admitted && !r.terminationRequested && !isTerminalPhase(r.pod.status)).map((r) => r.pod);
  }

  private rejectPod(pod: Pod, reason: string, message: string): void {
    this.logger.warn({ pod: `${pod.metadata.namespace ?? ''}/${pod.metadata.name ?? ''}`, reason, message }, 'pod rejected by admission');
    this.events.event(pod, 'Warning', reason, message);
    this.out.status('SetPodStatus', pod.metadata.uid ?? '', { status: { qosClass: qosOf(pod), phase: 'Failed', reason, message: `Pod was rejected: ${message}` } });
  }

  private dispatch(pod: Pod, updateType: SyncPodType, start: Date, killPodOptions?: KillPodOptions, runningPodOnly = false): void {
    this.out.dispatch(pod, updateType, start, killPodOptions, runningPodOnly);
  }

  private recentlySent(key: string, now: number): boolean {
    const last = this.lastSent.get(key);
    if (last !== undefined && now - last < REPEAT_MS) return true;
    this.lastSent.set(key, now);
    return false;
  }
}

/** `base` with the values of `uids` replaced by those of `current` (absent there: absent). */
function overlay<V>(base: ReadonlyMap<string, V>, uids: readonly string[], current: ReadonlyMap<string, V>): Map<string, V> {
  const out = new Map(base);
  for (const uid of uids) {
    const v = current.get(uid);
    if (v === undefined) out.delete(uid);
    else out.set(uid, v);
  }
  return out;
}

/** canAdmitPod; a pod whose quantities cannot be read is refused, not thrown on. */
function admit(active: Pod[], pod: Pod, node: NodeInfo): { admit: boolean; reason?: string; message?: string } {
  try {
    return canAdmitPod(active, pod, node);
  } catch (err) {
    return { admit: false, reason: 'UnexpectedAdmissionError', message: `Allocate failed due to ${(err as Error).message}, which is unexpected` };
  }
}

/** The pod's QoS class, kept in the rejected status as upstream's rejectPod keeps it; undefined when its quantities cannot be read. */
function qosOf(pod: Pod): PodStatus['qosClass'] {
  try {
    return getPodQOS(pod);
  } catch {
    return undefined;
  }
}

/** The activeDeadlineHandler's pastActiveDeadline. */
/** The activeDeadlineHandler's ShouldSync: past the deadline, and not terminal yet. */
export function pastActiveDeadline(pod: Pod, status: PodStatus | undefined, now: number): boolean {
  const s = status ?? pod.status;
  return !isTerminalPhase(s) && pastDeadline(pod, s?.startTime, now);
}

function sortByCreation(pods: readonly Pod[]): Pod[] {
  const created = (p: Pod) => p.metadata.creationTimestamp ?? p.metadata.annotations?.['kubernetes.io/config.seen'] ?? '';
  return [...pods].sort((a, b) => created(a).localeCompare(created(b)) || (a.metadata.name ?? '').localeCompare(b.metadata.name ?? ''));
}

