/**
 * status.Manager for the node: the pod workers' statuses, the probe
 * results merged into them, versioned (PodStatusVersions) and kept in the
 * `pod-status` KV bucket, whose only writer this is; the events of each
 * pod; and the read API that joins the desired pods (the sync loop's
 * `pods` bucket) with their statuses, like the kubelet's `/pods`.
 *
 * Readiness and startup have one source, the prober's `probe-results`
 * bucket. The pod worker reads it when it generates a status (SetPodStatus
 * carries what it says); a probe message, sent once the prober has saved
 * the result, merges that result at once (SetContainerReadiness), as the
 * kubelet does between syncs; and restore merges every kept result into the
 * restored statuses, for the messages that came while no status manager
 * listened. A status manager restart thus neither forgets a result nor
 * keeps one the prober has since changed.
 */
import { Clock } from '@app/clock';
import type { EventMessage, Pod, PodList, PodStatus, ProbeResultMessage, ProbeResultValue, ProbeType, StatusCommandMessage, StatusVerb } from '@app/contracts';
import type { Logger } from '@app/observability';
import { podList } from '@app/pod-manager';
import { newOomKills, type OomKill } from './oom-kills.js';
import { DesiredPods, ProbeResultsReader, StatusMetrics, StatusStore } from './ports.js';
import { PodStatusVersions, statusPodOf, type ApplyResult, type StatusEntry, type StatusPod } from './pod-status-versions.js';

export class StatusManager {
  private versions = new PodStatusVersions();
  private readonly events = new Map<string, EventMessage[]>();
  private readonly changeListeners = new Set<(uid: string) => void>();
  private readonly eventListeners = new Set<(e: EventMessage) => void>();
  private readonly oomListeners = new Set<(uid: string, pod: StatusPod, kill: OomKill) => void | Promise<void>>();
  /** Serializes changes, so versions are written in order. */
  private chain: Promise<unknown> = Promise.resolve();

  constructor(
    private readonly store: StatusStore,
    private readonly desired: DesiredPods,
    private readonly probes: ProbeResultsReader,
    private readonly clock: Clock,
    private readonly logger: Logger,
    private readonly eventsPerPod = 200,
    private readonly metrics?: StatusMetrics,
  ) {}

  /**
   * The statuses from the `pod-status` bucket, with the prober's current
   * readiness and startup results merged in and saved: at takeover. A
   * standby never restores (it serves reads from @app/pod-manager's
   * PodReadModel).
   */
  restore(): Promise<number> {
    return this.serially(async () => {
      const entries = await this.store.load();
      this.versions = new PodStatusVersions(entries);
      for (const r of await this.probes.all()) {
        if (r.probeType === 'liveness') continue;
        const merged = this.mergeProbeResult(r.podUid, r.probeType, r.containerId, r.result);
        await this.persist(r.podUid, merged);
      }
      return entries.length;
    });
  }

  statuses(): [string, StatusEntry][] {
    return this.versions.all();
  }

  /** GetPodStatus: a UID's current entry (a copy). */
  status(uid: string): StatusEntry | undefined {
    return this.versions.get(uid);
  }

  /** Calls `listener` with the pod UID each time a new version of its status is stored (podStatusChannel). Returns the unsubscribe. */
  onStatusChanged(listener: (uid: string) => void): () => void {
    this.changeListeners.add(listener);
    return () => void this.changeListeners.delete(listener);
  }

  /**
   * Calls `listener` for each container instance a new status first shows
   * OOMKilled (oom-kills.ts), and waits for it before the status is saved:
   * the event is recorded first, so that a status manager that dies between
   * the two leaves the status unsaved (it is sent again, and the event with
   * it, deduplicated by its message ID), never a saved status whose event
   * was not sent. A listener that rejects is logged; the status is saved.
   * Returns the unsubscribe.
   */
  onOomKilled(listener: (uid: string, pod: StatusPod, kill: OomKill) => void | Promise<void>): () => void {
    this.oomListeners.add(listener);
    return () => void this.oomListeners.delete(listener);
  }

  /** A statusManager call from a pod worker or the sync loop. */
  handleCommand(verb: StatusVerb, msg: StatusCommandMessage): Promise<ApplyResult | undefined> {
    return this.serially(async () => {
      const started = this.clock.now();
      const uid = msg.podUid;
      if (verb === 'RemoveOrphanedStatuses') {
        if (this.versions.remove(uid)) await this.store.delete(uid);
        return undefined;
      }
      const status = msg.args['status'] as PodStatus | undefined;
      const containerId = typeof msg.args['containerId'] === 'string' ? msg.args['containerId'] : '';
      const pod = await this.statusPod(uid, msg.args);
      const before = this.versions.get(uid)?.status;
      let result: ApplyResult;
      switch (verb) {
        case 'SetPodStatus':
          if (!status) throw new Error('SetPodStatus needs args.status');
          result = this.versions.setPodStatus(uid, pod, status, this.clock.now());
          break;
        case 'TerminatePod':
          if (!status) throw new Error('TerminatePod needs args.status');
          result = this.versions.terminatePod(uid, pod, status, this.clock.now());
          break;
        case 'SetContainerReadiness':
          result = this.versions.setContainerReadiness(uid, containerId, msg.args['ready'] === true, this.clock.now());
          break;
        case 'SetContainerStartup':
          result = this.versions.setContainerStartup(uid, containerId, msg.args['started'] === true, this.clock.now());
          break;
      }
      if (result.changed && result.entry) for (const kill of newOomKills(before, result.entry.status)) await this.tellOomKilled(uid, pod, kill);
      await this.persist(uid, result);
      this.metrics?.synced((this.clock.now() - started) / 1000);
      return result;
    });
  }

  private async tellOomKilled(uid: string, pod: StatusPod, kill: OomKill): Promise<void> {
    for (const l of this.oomListeners) {
      try {
        await l(uid, pod, kill);
      } catch (err) {
        this.logger.error({ uid, container: kill.container, err: (err as Error).message }, 'the OOMKilled event could not be recorded');
      }
    }
  }

  /** The readiness and startup managers' updates merge into the current status. */
  handleProbeResult(r: ProbeResultMessage): Promise<ApplyResult | undefined> {
    if (r.probeType === 'liveness') return Promise.resolve(undefined);
    const probeType = r.probeType;
    return this.serially(async () => {
      const result = this.mergeProbeResult(r.podUid, probeType, r.containerId, r.result);
      await this.persist(r.podUid, result);
      return result;
    });
  }

  /** SetContainerReadiness or SetContainerStartup with a probe result: only Success counts. */
  private mergeProbeResult(uid: string, probeType: Exclude<ProbeType, 'liveness'>, containerId: string, result: ProbeResultValue): ApplyResult {
    const ok = result === 'Success';
    return probeType === 'readiness' ? this.versions.setContainerReadiness(uid, containerId, ok, this.clock.now()) : this.versions.setContainerStartup(uid, containerId, ok, this.clock.now());
  }

  /** Calls `listener` with every event heard (the broadcaster's sinks). Returns the unsubscribe. */
  onEvent(listener: (e: EventMessage) => void): () => void {
    this.eventListeners.add(listener);
    return () => void this.eventListeners.delete(listener);
  }

  /** recorder.Eventf: kept per pod, in order, the newest `eventsPerPod`; handed to the listeners. */
  handleEvent(e: EventMessage): void {
    for (const listener of this.eventListeners) listener(e);
    const key = `${e.involvedObject.namespace ?? ''}/${e.involvedObject.name}`;
    const list = this.events.get(key) ?? [];
    list.push(e);
    if (list.length > this.eventsPerPod) list.splice(0, list.length - this.eventsPerPod);
    this.events.set(key, list);
  }

  /** The kubelet's `/pods`: every desired pod with its spec and latest status. */
  async listPods(): Promise<PodList> {
    return podList(await this.desired.all(), (uid) => this.versions.get(uid)?.status);
  }

  async getPod(namespace: string, name: string): Promise<Pod | undefined> {
    return (await this.listPods()).items.find((p) => p.metadata.namespace === namespace && p.metadata.name === name);
  }

  eventsOf(namespace: string, name: string): EventMessage[] {
    return [...(this.events.get(`${namespace}/${name}`) ?? [])];
  }

  private async statusPod(uid: string, args: Record<string, unknown>): Promise<StatusPod> {
    const record = await this.desired.get(uid).catch(() => undefined);
    if (record) return statusPodOf(record.pod);
    // The pod has left the pods bucket (its last TerminatePod came after the
    // REMOVE): what the pod worker sent with the call is all there is.
    const annotations = stringMap(args['podAnnotations']);
    return {
      name: typeof args['podName'] === 'string' ? args['podName'] : '',
      namespace: typeof args['podNamespace'] === 'string' ? args['podNamespace'] : '',
      ...(annotations ? { annotations } : {}),
    };
  }

  private async persist(uid: string, result: ApplyResult): Promise<void> {
    if (result.dropped) this.logger.info({ uid, why: result.dropped }, 'status update dropped');
    if (!result.changed || !result.entry) return;
    await this.store.put(uid, result.entry);
    for (const listener of this.changeListeners) listener(uid);
  }

  private serially<T>(fn: () => Promise<T>): Promise<T> {
    const next = this.chain.then(fn, fn);
    this.chain = next.catch(() => undefined);
    return next;
  }
}

/** A JSON object of strings (annotations), or undefined when `v` is anything else. */
function stringMap(v: unknown): Record<string, string> | undefined {
  if (typeof v !== 'object' || v === null || Array.isArray(v)) return undefined;
  const entries = Object.entries(v);
  return entries.every(([, x]) => typeof x === 'string') ? Object.fromEntries(entries) : undefined;
}
