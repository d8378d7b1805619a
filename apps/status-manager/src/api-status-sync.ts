/**
 * The status manager's sync to the apiserver: pkg/kubelet/status/
 * status_manager.go Start, syncBatch, syncPod, needsUpdate, canBeDeleted and
 * needsReconcile, for the node's versioned statuses (StatusManager, the
 * `pod-status` bucket).
 *
 *   new status version ──▶ notify ──▶ syncBatch(all=false): the pods whose version the API has not seen
 *   every 10 s ──────────────────────▶ syncBatch(all=true):  those, plus the pods whose API status differs
 *   the API's pods changed ──▶ notify       (needsReconcile) or that may now be deleted (canBeDeleted)
 *
 *   syncPod: GET the pod ─▶ not there / another UID: skip
 *            ─▶ mergePodStatus(API's, ours) ─▶ PATCH status (strategic merge, metadata.uid precondition)
 *            ─▶ apiStatusVersions[API UID] = version
 *            ─▶ canBeDeleted? DELETE (grace 0, preconditions.uid)
 *
 * Invariants:
 *  - Batches run one at a time, and each syncPod sends the newest version it
 *    holds then; the version the API has seen only goes up, so an older
 *    status never overwrites a newer one. A new leader starts with nothing
 *    seen and sends each pod's newest status from `pod-status`.
 *  - Only the leader runs this (start at takeover, stop when deposed); the
 *    adapter's writes are fenced as well.
 *  - A pod the apiserver does not show (yet) is skipped: it is synced when
 *    the reflector shows it (a change notifies). A pod of the same name
 *    with another UID (deleted and recreated) is never written.
 *  - A static pod's status goes to its mirror pod (same name, config.mirror
 *    annotation equal to the static pod's config.hash); with no mirror pod
 *    there is nothing to write yet (upstream's UID translation).
 *  - A failed sync of a pod is tried again after a back-off (500 ms doubling
 *    to 10 s), and at each resync once that has passed.
 *  - A pod is deleted only when it has a deletionTimestamp, is not a mirror
 *    pod, its API phase is terminal, its last status came from TerminatePod
 *    (podIsFinished) and its pod worker's record says terminated (or is gone).
 */
import { Clock, type Timer } from '@app/clock';
import { podWorkerState, type Pod, type PodRecord, type PodSyncStatusRecord } from '@app/contracts';
import { isMirrorPod, isPodPhaseTerminal, isStaticPod } from '@app/kube';
import { NotLeaderError } from '@app/leader-election';
import type { Logger } from '@app/observability';
import { ApiPods, PodStatusApi, PodWorkerRecords } from './api-ports.js';
import { isMirrorPodOf, mergePodStatus, preparePodStatusPatch } from './pod-status-patch.js';
import { DesiredPods } from './ports.js';
import { isPodStatusByKubeletEqual, normalizeStatus, type StatusEntry } from './pod-status-versions.js';
import type { StatusManager } from './status-manager.js';

export interface ApiStatusSyncOptions {
  /** syncPeriod: the resync of every status (upstream: 10 s). */
  resyncPeriodMs?: number;
  /** The first wait after a failed sync of a pod; doubled at each failure. */
  initialBackoffMs?: number;
  maxBackoffMs?: number;
  /** How soon a finished pod is looked at again while its worker's record does not say terminated yet. */
  finishRecheckMs?: number;
}

/** One status to send: the pod's UID (the static pod's for a static pod) and, for a static pod, the pod whose mirror gets it. */
interface PodSync {
  uid: string;
  entry: StatusEntry;
  staticPod?: Pod;
}

const LOG_EVERY_MS = 60_000;

const hasDeletionTimestamp = (pod: Pod): boolean => pod.metadata.deletionTimestamp !== undefined && pod.metadata.deletionTimestamp !== null;

export class ApiStatusSync {
  /** apiStatusVersions: the latest version the API has of each pod, by API UID (the mirror pod's for a static pod). */
  private readonly apiStatusVersions = new Map<string, number>();
  private readonly backoff = new Map<string, { failures: number; until: number; lastLogAt: number }>();
  /** The desired pod of each UID with a status, once read (recordOf). */
  private readonly records = new Map<string, PodRecord>();
  private active = false;
  private ticker?: Timer;
  private readonly timers = new Set<Timer>();
  private unsubscribe?: () => void;
  private wantAll = false;
  private wantSome = false;
  private running?: Promise<void>;
  private readonly resyncPeriodMs: number;

  constructor(
    private readonly statuses: Pick<StatusManager, 'statuses' | 'status'>,
    private readonly apiPods: ApiPods,
    private readonly api: PodStatusApi,
    private readonly desired: DesiredPods,
    private readonly workers: PodWorkerRecords,
    private readonly clock: Clock,
    private readonly logger: Logger,
    private readonly options: ApiStatusSyncOptions = {},
  ) {
    this.resyncPeriodMs = options.resyncPeriodMs ?? 10_000;
  }

  get isActive(): boolean {
    return this.active;
  }

  /** Start: leading. Nothing is taken as seen by the API; a full sync at once, then one every resync period. */
  start(): void {
    if (this.active) return;
    this.active = true;
    this.apiStatusVersions.clear();
    this.backoff.clear();
    this.unsubscribe = this.apiPods.subscribe(() => this.notify());
    const tick = () => {
      this.request(true);
      this.ticker = this.clock.setTimer(this.resyncPeriodMs, tick);
    };
    tick();
  }

  /** Stop at once: deposed, or shutting down. A sync under way finishes its request, and writes nothing after. */
  stop(): void {
    this.active = false;
    this.ticker?.cancel();
    for (const t of this.timers) t.cancel();
    this.timers.clear();
    this.unsubscribe?.();
    this.unsubscribe = undefined;
  }

  /** podStatusChannel: a status has a new version (or the API's pods changed): sync what the API has not seen. */
  notify(): void {
    this.request(false);
  }

  /** Resolves once no batch runs (tests). */
  async idle(): Promise<void> {
    while (this.running) await this.running;
  }

  private request(all: boolean): void {
    if (!this.active) return;
    if (all) this.wantAll = true;
    else this.wantSome = true;
    this.running ??= this.drain().finally(() => (this.running = undefined));
  }

  private async drain(): Promise<void> {
    while (this.active && (this.wantAll || this.wantSome)) {
      const all = this.wantAll;
      this.wantAll = false;
      this.wantSome = false;
      try {
        await this.syncBatch(all);
      } catch (err) {
        this.logger.warn({ err: (err as Error).message }, 'pod status sync batch failed; the next one tries again');
      }
    }
  }

  private after(ms: number, all: boolean): void {
    const timer = this.clock.setTimer(ms, () => {
      this.timers.delete(timer);
      this.request(all);
    });
    this.timers.add(timer);
  }

  /** syncBatch: which pods to sync, then each in turn. Returns how many it synced. */
  async syncBatch(all: boolean): Promise<number> {
    if (!this.apiPods.hasSynced) return 0;
    const entries = this.statuses.statuses();
    if (all) for (const uid of [...this.records.keys()]) if (!entries.some(([u]) => u === uid)) this.records.delete(uid);
    if (entries.length === 0) return 0;

    const now = this.clock.now();
    const updates: PodSync[] = [];
    const apiUids = new Set<string>();
    for (const [uid, entry] of entries) {
      const target = this.apiPodOf(uid, entry, await this.recordOf(uid));
      if (!target) continue;
      const apiUid = target.apiPod.metadata.uid ?? '';
      apiUids.add(apiUid);
      const sync: PodSync = { uid, entry, ...(target.staticPod ? { staticPod: target.staticPod } : {}) };
      if ((this.backoff.get(uid)?.until ?? 0) > now) continue;
      if (!all) {
        if ((this.apiStatusVersions.get(apiUid) ?? 0) >= entry.version) continue;
        updates.push(sync);
      } else if (await this.needsUpdate(apiUid, uid, entry, target.apiPod)) {
        updates.push(sync);
      } else if (this.needsReconcile(entry, target.apiPod)) {
        this.logger.debug({ uid, pod: `${entry.podNamespace}/${entry.podName}` }, 'pod status differs in the apiserver; reconciling');
        this.apiStatusVersions.delete(apiUid);
        updates.push(sync);
      }
    }
    // Clean up orphaned versions.
    if (all) for (const apiUid of [...this.apiStatusVersions.keys()]) if (!apiUids.has(apiUid)) this.apiStatusVersions.delete(apiUid);

    for (const update of updates) {
      if (!this.active) break;
      await this.syncPod(update);
    }
    return updates.length;
  }

  /**
   * The desired pod of a UID (the sync loop's `pods` bucket), read once per
   * UID: what counts here (static or not, name, config hash) never changes
   * for a UID. One KV get per pod, not a listing of the bucket: a listing
   * (kv.keys) lasts until the bucket has been quiet for 5 s, which the sync
   * loop's writes can put off for tens of seconds.
   */
  private async recordOf(uid: string): Promise<PodRecord | undefined> {
    const known = this.records.get(uid);
    if (known) return known;
    const record = await this.desired.get(uid);
    if (record) this.records.set(uid, record);
    return record;
  }

  /**
   * The API pod that gets `uid`'s status, as the reflector shows it: the
   * pod itself, or a static pod's mirror pod; undefined when there is none
   * (yet), or only another pod of that name.
   */
  private apiPodOf(uid: string, entry: StatusEntry, record: PodRecord | undefined): { apiPod: Pod; staticPod?: Pod } | undefined {
    if (record && isStaticPod(record.pod)) {
      const mirror = this.apiPods.get(record.pod.metadata.namespace ?? '', record.pod.metadata.name ?? '');
      return mirror && isMirrorPodOf(mirror, record.pod) ? { apiPod: mirror, staticPod: record.pod } : undefined;
    }
    const apiPod = this.apiPods.get(entry.podNamespace, entry.podName);
    return apiPod?.metadata.uid === uid ? { apiPod } : undefined;
  }

  /** needsUpdate: a version the API has not seen, or a pod that may now be deleted. */
  private async needsUpdate(apiUid: string, uid: string, entry: StatusEntry, apiPod: Pod): Promise<boolean> {
    const latest = this.apiStatusVersions.get(apiUid);
    if (latest === undefined || latest < entry.version) return true;
    if (!this.mayBeDeleted(apiPod, entry)) return false;
    return this.workerTerminated(await this.workers.get(uid));
  }

  /**
   * needsReconcile: the API's status (normalized as ours is) differs from
   * ours in what the kubelet owns.
   */
  private needsReconcile(entry: StatusEntry, apiPod: Pod): boolean {
    const apiStatus = normalizeStatus(apiPod.spec, structuredClone(apiPod.status ?? {}));
    return !isPodStatusByKubeletEqual(apiStatus, entry.status);
  }

  /** canBeDeleted without the worker's record: deleted, not a mirror pod, terminal in the API, finished here. */
  private mayBeDeleted(apiPod: Pod, entry: StatusEntry): boolean {
    return hasDeletionTimestamp(apiPod) && !isMirrorPod(apiPod) && isPodPhaseTerminal(apiPod.status?.phase) && entry.podIsFinished === true;
  }

  /** The pod worker is done with the pod: its record says terminated, or it is gone (purged after it finished). */
  private workerTerminated(record: PodSyncStatusRecord | undefined): boolean {
    return record === undefined || podWorkerState(record) === 'TerminatedPod';
  }

  /** syncPod: one pod's status to the apiserver, and its deletion once it can be deleted. */
  private async syncPod(sync: PodSync): Promise<void> {
    const { uid } = sync;
    const namespace = sync.staticPod?.metadata.namespace ?? sync.entry.podNamespace;
    const name = sync.staticPod?.metadata.name ?? sync.entry.podName;
    const pod = `${namespace}/${name}`;
    try {
      let apiPod = await this.api.getPod(namespace, name);
      if (!apiPod) {
        this.logger.debug({ uid, pod }, 'pod does not exist in the apiserver; nothing to sync');
        return;
      }
      const translated = sync.staticPod ? isMirrorPodOf(apiPod, sync.staticPod) : apiPod.metadata.uid === uid;
      if (!translated) {
        this.logger.info({ uid, pod, apiUid: apiPod.metadata.uid }, 'pod was deleted and then recreated in the apiserver; skipping its status update');
        return;
      }
      const apiUid = apiPod.metadata.uid ?? '';
      // The newest version now: one that came while this batch ran is sent instead of the one it began with.
      const entry = this.statuses.status(uid) ?? sync.entry;
      if ((this.apiStatusVersions.get(apiUid) ?? 0) > entry.version) return;
      const record = await this.workers.get(uid);
      const couldHaveRunningContainers = record !== undefined && podWorkerState(record) !== 'TerminatedPod';
      const oldStatus = apiPod.status ?? {};
      const merged = mergePodStatus(oldStatus, entry.status, couldHaveRunningContainers, this.clock.now());
      const { patch, unchanged } = preparePodStatusPatch(apiUid, oldStatus, merged);
      if (!this.active) return;
      if (unchanged) {
        this.logger.debug({ uid, pod, version: entry.version }, 'pod status in the apiserver is up to date');
      } else {
        apiPod = await this.api.patchPodStatus(namespace, name, patch);
        this.logger.debug({ uid, pod, version: entry.version, patch }, 'pod status patched in the apiserver');
      }
      this.apiStatusVersions.set(apiUid, entry.version);
      this.backoff.delete(uid);

      if (entry.podIsFinished && hasDeletionTimestamp(apiPod) && !isMirrorPod(apiPod) && !this.workerTerminated(record)) {
        // TerminatePod came before the worker's record says terminated (its terminal phase is held back
        // too): look again soon rather than at the next resync.
        this.after(this.options.finishRecheckMs ?? 1000, true);
        return;
      }
      if (!this.mayBeDeleted(apiPod, entry) || !this.active) return;
      await this.api.deletePod(namespace, name, apiUid);
      this.logger.info({ uid, pod }, 'pod fully terminated and removed from the apiserver');
    } catch (err) {
      if (err instanceof NotLeaderError) {
        this.logger.info({ uid, pod }, 'not the leader any more: pod status not written');
        return;
      }
      this.failed(uid, pod, err as Error);
    }
  }

  private failed(uid: string, pod: string, err: Error): void {
    const now = this.clock.now();
    const before = this.backoff.get(uid);
    const failures = (before?.failures ?? 0) + 1;
    const delay = Math.min((this.options.initialBackoffMs ?? 500) * 2 ** (failures - 1), this.options.maxBackoffMs ?? 10_000);
    const log = !before || now - before.lastLogAt >= LOG_EVERY_MS;
    this.backoff.set(uid, { failures, until: now + delay, lastLogAt: log ? now : before.lastLogAt });
    if (log) this.logger.warn({ uid, pod, err: err.message, failures, retryInMs: delay }, 'failed to sync the pod status to the apiserver; will retry');
    this.after(delay, false);
  }
}
