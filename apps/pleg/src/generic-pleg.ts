/**
 * The generic PLEG (pkg/kubelet/pleg/generic.go): relist the runtime every
 * period, compare each pod with the last relist, inspect the pods that
 * changed (and those whose inspection failed last time), write their
 * statuses to the pod cache, send the events, and advance the cache's clock.
 *
 * Unlike upstream, each pod's inspection has its own timeout and pods are
 * inspected a few at a time, so one hung pod cannot hold the relist past
 * the health threshold and mark the node NotReady (kubernetes#94829): the
 * slow pod is retried on the next relist, the others go on.
 *
 * Also unlike upstream, one pod can be inspected at once, outside the relist
 * (inspectPod): a pod worker asks for it right after a sync that changed
 * the pod in the runtime, so the cache and the events follow within
 * milliseconds instead of at the next relist (upstream's own TODO in
 * pod_workers.go: "allowing pod status changes to be refreshed when key
 * events happen"). The relist stays the safety net. Every write goes
 * through PodCacheWriter, which drops one stamped older than the last
 * written for its pod, so the cache never goes back in time for a pod
 * worker whatever order the relist and the inspections finish in; a pod's
 * events are computed against the view its last write came from, when that
 * write is made, so a transition is reported once.
 */
import { Clock } from '@app/clock';
import type { PodCacheEntry, PodLifecycleEventMessage } from '@app/contracts';
import type { ContainerStatus, CriRuntime, PodSandboxStatus } from '@app/cri';
import { nextSpan, runInTrace, type ActiveTrace } from '@app/tracing';
import type { Logger } from '@app/observability';
import { KubeletLabels } from '@app/kube';
import { containerState, groupByPod, podEvents, type PodView } from './events.js';
import { PodCacheWriter } from './pod-cache-writer.js';
import { ContainerFileReader, PlegEventSink, PlegMetrics, PodCacheStore } from './ports.js';
import { withTerminationMessage } from './termination-message.js';

export interface GenericPlegOptions {
  /** Inspecting one pod may take this long before it is left for the next relist. */
  inspectTimeoutMs: number;
  /** Pods inspected at once. */
  inspectConcurrency: number;
  /** The PLEG is unhealthy when the last successful relist is older than this (upstream: 3m). */
  relistThresholdMs: number;
  /** Only pods this node's stack made (KubeletLabels.node); all pods when unset. */
  node?: string;
}

export interface RelistResult {
  events: PodLifecycleEventMessage[];
  inspected: string[];
  failed: string[];
}

/** What one immediate inspection did. */
export interface InspectResult {
  /** The cache entry's timestamp (the pod's removal's, when the runtime had nothing of it). */
  timestamp: number;
  /** False when a newer write for the pod was already made: nothing written, no events. */
  written: boolean;
  events: PodLifecycleEventMessage[];
}

/**
 * How far a pod worker's sync end may lie ahead of the PLEG's clock for an
 * inspection to be stamped just after it (both are this node's clock; the
 * request travels after the sync ended, so only the clock's resolution
 * separates them).
 */
const SYNC_END_SLACK_MS = 1;

class InspectTimeout extends Error {}

/** What the generic PLEG works with. */
export interface GenericPlegDeps {
  cri: CriRuntime;
  cache: PodCacheStore;
  sink: PlegEventSink;
  clock: Clock;
  logger: Logger;
  metrics?: PlegMetrics;
  /** The termination message files and logs of exited containers; none: their messages are the runtime's alone. */
  files?: ContainerFileReader;
}

export class GenericPleg {
  /** podRecords: each pod as the last successful relist saw it. */
  private readonly records = new Map<string, PodView>();
  private readonly toReinspect = new Set<string>();
  /** Pods an inspection found nothing of in the runtime, written as empty entries until a relist (inspectPod). */
  private readonly absent = new Set<string>();
  private lastTimestamp = 0;
  private lastRelistAt?: number;
  /** The cache's time as the last successful relist wrote it. */
  private lastGlobal?: { timestamp: number };
  /** The relist threshold `<node>.global` carries: this.relistThresholdMs, or a widened one after a fallback (relistPeriodChanged). */
  private globalThresholdMs: number;
  /** The writes of `<node>.global`, one after another (writeGlobal). */
  private globalWrites: Promise<void> = Promise.resolve();
  /** Since when a shortened threshold counts (relistPeriodChanged); 0: since the last relist. */
  private graceFrom = 0;
  private lastRelistStart?: number;
  private relisting = false;
  /** The health threshold now: RELIST_THRESHOLD, or longer while relists are rare (relistPeriodChanged). */
  private relistThresholdMs: number;
  /** Why the last relist failed, until one succeeds. */
  private lastRelistError?: string;
  private readonly writer: PodCacheWriter;
  /** The timestamps of the relist and the inspections running now. */
  private readonly inFlight = new Set<number>();

  private readonly cri: CriRuntime;
  private readonly cache: PodCacheStore;
  private readonly sink: PlegEventSink;
  private readonly clock: Clock;
  private readonly logger: Logger;
  private readonly metrics: PlegMetrics | undefined;
  private readonly files: ContainerFileReader | undefined;

  constructor(
    deps: GenericPlegDeps,
    private readonly options: GenericPlegOptions,
  ) {
    ({ cri: this.cri, cache: this.cache, sink: this.sink, clock: this.clock, logger: this.logger, metrics: this.metrics, files: this.files } = deps);
    this.relistThresholdMs = options.relistThresholdMs;
    this.globalThresholdMs = options.relistThresholdMs;
    this.writer = new PodCacheWriter(deps.cache);
  }

  /**
   * The relist period changed (evented mode relists every 5 minutes): the
   * health threshold becomes at least twice the period, as upstream's
   * eventedPlegRelistThreshold (10m) is to its eventedPlegRelistPeriod (5m).
   */
  relistPeriodChanged(periodMs: number): void {
    const threshold = Math.max(this.options.relistThresholdMs, 2 * periodMs);
    const now = this.clock.now();
    if (threshold < this.relistThresholdMs && this.lastGlobal !== undefined) {
      // Shorter (evented mode fell back): measured from now, not from a relist up to 5 minutes old, so
      // neither this PLEG's health nor the sync loop's gate (the threshold written beside the cache's
      // time) trips before the relist that runs at once could; a relist that keeps failing still does.
      this.graceFrom = now;
      this.globalThresholdMs = now - this.lastGlobal.timestamp + threshold;
      void this.writeGlobal().catch((err: Error) => this.logger.warn({ err: err.message }, 'PLEG: the shorter relist threshold could not be written to the pod cache'));
    }
    this.relistThresholdMs = threshold;
  }

  /**
   * How often evented mode must show it is alive (heartbeat) for the sync
   * loop's gate to see it within RELIST_THRESHOLD: a third of it, between 1
   * and 10 seconds.
   */
  get heartbeatPeriodMs(): number {
    return Math.min(10_000, Math.max(1000, Math.floor(this.options.relistThresholdMs / 3)));
  }

  /**
   * A sign of life between relists (evented mode relists every 5 minutes):
   * `<node>.global` written again with the same time and thresholds and a
   * new `aliveAt`, so that a PLEG that stops is noticed within
   * RELIST_THRESHOLD. Nothing before the first successful relist. The
   * cache's time does not move: no pod worker waiting for news is released.
   */
  heartbeat(): Promise<void> {
    return this.writeGlobal();
  }

  /**
   * `<node>.global` written after every earlier write, from what is known
   * when its turn comes (`timestamp`: a relist's new time; none: the last
   * one), so that no write ever puts the cache's time back.
   */
  private writeGlobal(timestamp?: number): Promise<void> {
    const write = this.globalWrites.then(async () => {
      const at = timestamp ?? this.lastGlobal?.timestamp;
      if (at === undefined) return;
      if (timestamp !== undefined) this.globalThresholdMs = this.relistThresholdMs;
      await this.cache.updateGlobal({ timestamp: at, relistThresholdMs: Math.max(this.globalThresholdMs, this.relistThresholdMs), aliveAt: this.clock.now(), aliveThresholdMs: this.options.relistThresholdMs });
      this.lastGlobal = { timestamp: at };
    });
    this.globalWrites = write.catch(() => undefined);
    return write;
  }

  /**
   * Restart safety: the previous view comes back from the cache, so the
   * first relist reports only what changed while the PLEG was away, not
   * every container as new. A PLEG leading again forgets its own older view
   * for the one its predecessor left.
   */
  async restore(): Promise<number> {
    const { entries, global } = await this.cache.load();
    this.records.clear();
    this.toReinspect.clear();
    this.lastRelistAt = undefined;
    this.absent.clear();
    for (const e of entries) {
      if (e.sandboxStatuses.length === 0 && e.containerStatuses.length === 0) this.absent.add(e.uid);
      else this.records.set(e.uid, viewFromCache(e));
    }
    this.writer.restore(entries);
    this.lastTimestamp = Math.max(global, ...entries.map((e) => e.timestamp));
    this.lastGlobal = global > 0 ? { timestamp: global } : undefined;
    return entries.length;
  }

  /** Healthy while the last successful relist is within the threshold (Healthy()). */
  healthy(): { ok: boolean; detail: string } {
    const now = this.clock.now();
    const failing = this.lastRelistError === undefined ? '' : `; relist failing: ${this.lastRelistError}`;
    if (this.lastRelistAt === undefined) return { ok: true, detail: `no relist yet${failing}` };
    const age = now - this.lastRelistAt;
    return now - Math.max(this.lastRelistAt, this.graceFrom) > this.relistThresholdMs
      ? { ok: false, detail: `pleg was last seen active ${Math.round(age / 1000)}s ago; threshold is ${Math.round(this.relistThresholdMs / 1000)}s${failing}` }
      : { ok: true, detail: `last relist ${age}ms ago${failing}` };
  }

  /**
   * A pod's entry seen outside a relist (an evented update): written unless
   * a newer one was, and recorded so the next relist does not report it
   * again. Resolves to whether it was written.
   */
  async observe(entry: PodCacheEntry): Promise<boolean> {
    if (!(await this.writer.set(entry))) return false;
    this.records.set(entry.uid, viewFromCache(entry));
    return true;
  }

  /** A pod gone from the runtime, seen outside a relist (its sandbox deleted). */
  async forget(uid: string, timestamp: number): Promise<boolean> {
    if (!(await this.writer.delete(uid, timestamp))) return false;
    this.records.delete(uid);
    return true;
  }

  get lastSeen(): number | undefined {
    return this.lastRelistAt;
  }

  /** A timestamp for the cache that never goes back, even if the clock does; at least `atLeast`. */
  nextTimestamp(atLeast = 0): number {
    this.lastTimestamp = Math.max(this.clock.now(), this.lastTimestamp + 1, atLeast);
    return this.lastTimestamp;
  }

  /**
   * Inspects one pod now, as a relist would (GetPodStatus, the cache, the
   * events), without waiting for the next one: a pod worker changed it in
   * the runtime in a sync that ended at `syncEnd`. The entry is stamped
   * after `syncEnd` (the request was sent after the sync ended, and the
   * runtime is read after it arrived), so the pod worker's next
   * GetNewerThan(syncEnd) takes it; a `syncEnd` ahead of this clock by more
   * than its resolution is not trusted, and the next relist releases the
   * worker instead. Throws when the runtime cannot be read (the next relist
   * is the safety net).
   */
  async inspectPod(uid: string, syncEnd = 0): Promise<InspectResult> {
    const now = this.clock.now();
    const timestamp = this.nextTimestamp(syncEnd < now + SYNC_END_SLACK_MS ? syncEnd + 1 : 0);
    this.inFlight.add(timestamp);
    try {
      const filter = { labelSelector: { [KubeletLabels.podUid]: uid } };
      const [sandboxes, containers] = await this.withTimeout(Promise.all([this.cri.runtime('ListPodSandbox', { filter }), this.cri.runtime('ListContainers', { filter })]), uid);
      const view = groupByPod(sandboxes.items, containers.containers, this.options.node).get(uid);
      // Nothing in the runtime: an empty entry, not a removal, so that the pod worker waiting for news of the pod
      // newer than its sync gets it now (a removal leaves it waiting for the next relist: 5 minutes in evented
      // mode). The next relist removes the entry if the runtime still has nothing of the pod.
      const written = view ? await this.writer.set(await this.withTimeout(this.inspect(view, timestamp), uid)) : await this.writer.set(absentEntry(uid, timestamp));
      if (!written) return { timestamp, written, events: [] };
      if (view) this.absent.delete(uid);
      else this.absent.add(uid);
      this.toReinspect.delete(uid);
      const events = this.record(uid, view);
      let discarded = 0;
      for (const e of events) if (!this.sink.publish(e)) discarded++;
      if (discarded > 0) this.metrics?.discarded(discarded);
      return { timestamp, written, events };
    } finally {
      this.done(timestamp);
    }
  }

  /** The pod's events since the view last recorded, and the new view recorded (none: the pod is gone). */
  private record(uid: string, view: PodView | undefined): PodLifecycleEventMessage[] {
    const events = podEvents(uid, this.records.get(uid), view);
    if (view) this.records.set(uid, view);
    else this.records.delete(uid);
    return events;
  }

  private done(timestamp: number): void {
    this.inFlight.delete(timestamp);
    this.writer.prune(Math.min(...this.inFlight));
  }

  /** One relist. Throws when the runtime cannot be listed (the relist failed; health will show it). */
  async relist(): Promise<RelistResult> {
    if (this.relisting) return { events: [], inspected: [], failed: [] };
    this.relisting = true;
    const started = this.clock.now();
    const timestamp = this.nextTimestamp();
    this.inFlight.add(timestamp);
    try {
      const [sandboxes, containers] = await Promise.all([this.cri.runtime('ListPodSandbox', {}), this.cri.runtime('ListContainers', {})]);
      const current = groupByPod(sandboxes.items, containers.containers, this.options.node);

      const changed: string[] = [];
      for (const uid of new Set([...this.records.keys(), ...current.keys(), ...this.absent])) {
        if (this.toReinspect.has(uid) || this.absent.has(uid) || podEvents(uid, this.records.get(uid), current.get(uid)).length > 0) changed.push(uid);
      }

      const inspected: string[] = [];
      const failed: string[] = [];
      const allEvents: PodLifecycleEventMessage[] = [];
      // Each changed pod is one hop of its own trace (a relist is caused by no message): its
      // inspection's CRI calls, its cache write and its events are recorded under it.
      const traces = new Map<string, ActiveTrace>();
      await this.forEachLimited(changed, (uid) => {
        const trace: ActiveTrace = { trace: nextSpan(), podUid: uid };
        traces.set(uid, trace);
        return runInTrace(trace, () => this.inspectChanged(uid, current.get(uid), timestamp, inspected, failed, allEvents));
      });

      let discarded = 0;
      for (const e of allEvents) if (!runInTrace(traces.get(e.id), () => this.sink.publish(e))) discarded++;
      if (discarded > 0) this.metrics?.discarded(discarded);
      await this.writeGlobal(timestamp);

      const finished = this.clock.now();
      this.metrics?.relisted((finished - started) / 1000, this.lastRelistStart === undefined ? undefined : (started - this.lastRelistStart) / 1000, finished);
      this.lastRelistStart = started;
      this.lastRelistAt = finished;
      this.lastRelistError = undefined;
      return { events: allEvents, inspected, failed };
    } catch (err) {
      this.lastRelistError = (err as Error).message;
      throw err;
    } finally {
      this.relisting = false;
      this.done(timestamp);
    }
  }

  /** GetPodStatus: every sandbox's and container's status, as one cache entry. */
  private async inspect(view: PodView, timestamp: number): Promise<PodCacheEntry> {
    const sandboxStatuses: PodSandboxStatus[] = [];
    for (const id of view.sandboxIds) {
      const s = await this.cri.runtime('PodSandboxStatus', { podSandboxId: id });
      if (s.status) sandboxStatuses.push(s.status);
    }
    sandboxStatuses.sort((a, b) => Number(BigInt(b.createdAt) - BigInt(a.createdAt)));
    const containerStatuses: ContainerStatus[] = [];
    for (const id of view.containerIds) {
      const s = await this.cri.runtime('ContainerStatus', { containerId: id });
      if (s.status) containerStatuses.push(this.files ? await withTerminationMessage(s.status, this.files) : s.status);
    }
    const ready = sandboxStatuses.find((s) => s.state === 'SANDBOX_READY');
    const ips = ready?.network?.ip ? [ready.network.ip, ...(ready.network.additionalIps ?? []).map((ip) => ip.ip)] : [];
    return { uid: view.uid, name: view.name, namespace: view.namespace, timestamp, sandboxStatuses, containerStatuses, ips };
  }

  private withTimeout<T>(p: Promise<T>, uid: string): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      const timer = this.clock.setTimer(this.options.inspectTimeoutMs, () => reject(new InspectTimeout(`inspecting pod ${uid} took longer than ${this.options.inspectTimeoutMs}ms`)));
      p.then(
        (v) => {
          timer.cancel();
          resolve(v);
        },
        (e: unknown) => {
          timer.cancel();
          reject(e instanceof Error ? e : new Error(String(e)));
        },
      );
    });
  }

  /**
   * Inspects one changed pod into the cache; its events join `allEvents` once
   * the cache has it. An inspection newer than this relist may have written
   * the pod meanwhile: then its view and its events stand, and this relist
   * writes and sends nothing for the pod.
   */
  private async inspectChanged(uid: string, view: PodView | undefined, timestamp: number, inspected: string[], failed: string[], allEvents: PodLifecycleEventMessage[]): Promise<void> {
    let written: boolean;
    try {
      written = view ? await this.writer.set(await this.withTimeout(this.inspect(view, timestamp), uid)) : await this.writer.delete(uid, timestamp);
    } catch (err) {
      // Ignore this pod's events now; it is inspected again on the next relist.
      failed.push(uid);
      this.toReinspect.add(uid);
      this.logger.warn({ uid, err: (err as Error).message }, 'PLEG: pod inspection failed; will retry on the next relist');
      return;
    }
    inspected.push(uid);
    if (!written) return;
    this.absent.delete(uid);
    this.toReinspect.delete(uid);
    allEvents.push(...this.record(uid, view));
  }

  private async forEachLimited(items: string[], fn: (item: string) => Promise<void>): Promise<void> {
    let next = 0;
    const worker = async () => {
      while (next < items.length) {
        const item = items[next++];
        if (item !== undefined) await fn(item);
      }
    };
    await Promise.all(Array.from({ length: Math.min(this.options.inspectConcurrency, items.length) }, worker));
  }
}

/** The view a cache entry implies: its containers' and sandboxes' states. */
export function viewFromCache(e: PodCacheEntry): PodView {
  const states = new Map<string, ReturnType<typeof containerState>>();
  const sandboxIds: string[] = [];
  const containerIds: string[] = [];
  for (const s of e.sandboxStatuses as PodSandboxStatus[]) {
    states.set(s.id, containerState(s.state));
    sandboxIds.push(s.id);
  }
  for (const c of e.containerStatuses as ContainerStatus[]) {
    states.set(c.id, containerState(c.state));
    containerIds.push(c.id);
  }
  return { uid: e.uid, name: e.name, namespace: e.namespace, states, sandboxIds, containerIds };
}

/** The entry of a pod the runtime has nothing of, as of `timestamp`. */
function absentEntry(uid: string, timestamp: number): PodCacheEntry {
  return { uid, name: '', namespace: '', timestamp, sandboxStatuses: [], containerStatuses: [], ips: [] };
}
