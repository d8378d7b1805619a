/**
 * The eviction manager (pkg/kubelet/eviction/eviction_manager.go), run by
 * the leading sync loop every monitoring period (10 s, ADR 0014).
 *
 *   every 10 s: synchronize
 *     summary (@app/stats, the same measure as /stats/summary)
 *       ─▶ signals (memory.available, nodefs.*, imagefs.*, pid.available)
 *       ─▶ hard thresholds met ─▶ node conditions, held for the transition period
 *       ─▶ `<node>.node-pressure` in the `pods` bucket (the status manager's Node reads it)
 *       ─▶ a threshold met: rank the active pods for its resource, evict the first
 *          that is not critical: Evicted event, killed with the hard-eviction grace
 *          period, its status Failed / Evicted with upstream's message
 *   on leading: restore the last leader's conditions (their transition period goes on)
 *   on every pod admission: Admit (BestEffort refused under memory pressure alone,
 *     every pod but critical ones under any other condition)
 *
 * Invariants:
 *  - At most one pod is evicted per synchronize.
 *  - A pod just evicted is not chosen again while its termination runs
 *    (podCleanupTimeout), even before its worker reports it terminating.
 *  - Critical pods (static, mirror, system-critical priority) are never
 *    evicted and always admitted.
 *  - A summary that cannot be read changes nothing: the last conditions hold.
 */
import type { Clock } from '@app/clock';
import type { EventRecorder, KillPodOptions, NodePressureCondition, NodePressureRecord, Pod } from '@app/contracts';
import { EVICTION_REASON, evictionAdmit, isCriticalPod, type AdmitResult, type EvictionThreshold } from '@app/kube';
import type { Logger } from '@app/observability';
import type { Summary, SummaryProvider } from '@app/stats';
import type { NodePressureStore } from '../ports.js';
import {
  byEvictionPriority,
  evictionMessage,
  getReclaimableThreshold,
  makeSignalObservations,
  nodeConditions,
  nodeConditionsLastObservedAt,
  nodeConditionsObservedSince,
  rankPods,
  thresholdString,
  thresholdsMet,
} from './helpers.js';

/** eviction_manager.go's monitoring period (Start's `monitoringInterval`, 10 s in the kubelet). */
export const EVICTION_MONITORING_PERIOD_MS = 10_000;
/** --eviction-pressure-transition-period's default. */
export const EVICTION_PRESSURE_TRANSITION_PERIOD_MS = 5 * 60_000;
/** immediateEvictionGracePeriodSeconds: the grace period of a pod evicted for a hard threshold. */
export const IMMEDIATE_EVICTION_GRACE_PERIOD_SECONDS = 1;
/** podCleanupTimeout: how long an evicted pod is left to its termination before it may be chosen again. */
export const POD_CLEANUP_TIMEOUT_MS = 30_000;
/** v1.PodReasonTerminationByKubelet: the DisruptionTarget condition's reason. */
export const POD_REASON_TERMINATION_BY_KUBELET = 'TerminationByKubelet';

/** What the eviction manager asks of the sync loop (ActivePodsFunc, KillPodFunc). */
/** What the eviction manager works with. */
export interface EvictionManagerDeps {
  /** summaryProvider: the node's and the pods' stats. */
  summary: SummaryProvider;
  /** Where the node conditions go (`<node>.node-pressure`). */
  pressure: NodePressureStore;
  pods: EvictionPods;
  events: EventRecorder;
  clock: Clock;
  logger: Logger;
}

export interface EvictionPods {
  /** GetActivePods: admitted, not terminating, not terminal. */
  activePods(): Promise<Pod[]>;
  /** killPodFunc: SyncPodKill with the grace period override and the status the pod ends with. */
  killPod(pod: Pod, options: KillPodOptions): void;
}

export interface EvictionManagerOptions {
  thresholds: readonly EvictionThreshold[];
  pressureTransitionPeriodMs?: number;
  /** metrics.Evictions: a pod evicted for `signal` (kubelet_evictions{eviction_signal}). */
  onEviction?: (signal: string) => void;
}

export class EvictionManager {
  private conditions: NodePressureCondition[] = [];
  private lastObservedAt = new Map<NodePressureCondition, number>();
  private readonly evictedAt = new Map<string, number>();

  private readonly summary: SummaryProvider;
  private readonly pressure: NodePressureStore;
  private readonly pods: EvictionPods;
  private readonly events: EventRecorder;
  private readonly clock: Clock;
  private readonly logger: Logger;

  constructor(
    deps: EvictionManagerDeps,
    private readonly options: EvictionManagerOptions,
  ) {
    ({ summary: this.summary, pressure: this.pressure, pods: this.pods, events: this.events, clock: this.clock, logger: this.logger } = deps);
  }

  /** The node conditions now (MemoryPressure, DiskPressure, PIDPressure). */
  get nodeConditions(): readonly NodePressureCondition[] {
    return this.conditions;
  }

  /** IsUnderMemoryPressure. */
  get isUnderMemoryPressure(): boolean {
    return this.conditions.includes('MemoryPressure');
  }

  /** Admit (lifecycle.PodAdmitHandler). */
  admit(pod: Pod): AdmitResult {
    return evictionAdmit(pod, this.conditions);
  }

  /**
   * Leading (at start or taking over): the conditions the last leader
   * recorded, held on for what is left of their transition period, so that
   * a hand-over neither clears a pressure early nor admits a BestEffort pod
   * before the first synchronize.
   */
  async restore(): Promise<void> {
    let record: NodePressureRecord | undefined;
    try {
      record = await this.pressure.get();
    } catch (err) {
      this.logger.warn({ err: (err as Error).message }, 'Eviction manager: could not read the last node pressure record');
    }
    this.lastObservedAt = new Map();
    for (const [c, at] of Object.entries(record?.lastObservedAt ?? {})) if (typeof at === 'number') this.lastObservedAt.set(c as NodePressureCondition, at);
    this.conditions = nodeConditionsObservedSince(this.lastObservedAt, this.options.pressureTransitionPeriodMs ?? EVICTION_PRESSURE_TRANSITION_PERIOD_MS, this.clock.now());
    if (this.conditions.length > 0) this.logger.info({ nodeConditions: this.conditions }, 'Eviction manager: node conditions restored');
  }

  /**
   * synchronize's summary stats, read on their own: the sync loop reads them
   * off its chain (the runtime's stats calls take seconds while it starts
   * a burst of pods, and nothing else of the loop may wait that long), then
   * queues synchronize(summary) on it, as upstream's eviction manager runs
   * in a goroutine of its own. Undefined (logged) when they cannot be read,
   * or when no threshold is set (nothing to read them for).
   */
  async observe(): Promise<Summary | undefined> {
    if (this.options.thresholds.length === 0) return undefined;
    try {
      return await this.summary.summary();
    } catch (err) {
      this.logger.error({ err: (err as Error).message }, 'Eviction manager: failed to get summary stats');
      return undefined;
    }
  }

  /**
   * synchronize: observe (unless `observed` is given: observe()'s result), report the conditions, and evict at most
   * one pod. Resolves to the evicted pod, if any. No summary changes nothing: the last conditions hold.
   */
  async synchronize(observed?: Summary): Promise<Pod | undefined> {
    const { thresholds } = this.options;
    if (thresholds.length === 0) return undefined;
    const summary = observed ?? (await this.observe());
    if (!summary) return undefined;
    const { observations, stats } = makeSignalObservations(summary);
    const met = thresholdsMet(thresholds, observations);
    const now = this.clock.now();
    this.lastObservedAt = nodeConditionsLastObservedAt(nodeConditions(met), this.lastObservedAt, now);
    this.conditions = nodeConditionsObservedSince(this.lastObservedAt, this.options.pressureTransitionPeriodMs ?? EVICTION_PRESSURE_TRANSITION_PERIOD_MS, now);
    const record: NodePressureRecord = {
      observedAt: now,
      conditions: [...this.conditions],
      thresholdsMet: met.map(thresholdString),
      observations: Object.fromEntries(Object.entries(observations).map(([k, o]) => [k, { available: o.available, capacity: o.capacity }])),
      lastObservedAt: Object.fromEntries(this.lastObservedAt),
    };
    try {
      await this.pressure.put(record);
    } catch (err) {
      this.logger.warn({ err: (err as Error).message }, 'Eviction manager: could not record the node pressure');
    }
    for (const [uid, at] of this.evictedAt) if (now - at >= POD_CLEANUP_TIMEOUT_MS) this.evictedAt.delete(uid);
    if (met.length === 0) {
      this.logger.debug('Eviction manager: no resources are starved');
      return undefined;
    }
    const reclaim = getReclaimableThreshold(byEvictionPriority(met));
    if (!reclaim) return undefined;
    this.logger.info({ resourceName: reclaim.resource, threshold: thresholdString(reclaim.threshold) }, 'Eviction manager: attempting to reclaim');
    this.events.nodeEvent('Warning', 'EvictionThresholdMet', `Attempting to reclaim ${reclaim.resource}`);
    const active = (await this.pods.activePods()).filter((p) => !this.evictedAt.has(p.metadata.uid ?? ''));
    if (active.length === 0) {
      this.logger.error('Eviction manager: eviction thresholds have been met, but no pods are active to evict');
      return undefined;
    }
    const ranked = rankPods(reclaim.resource, active, stats);
    this.logger.info({ pods: ranked.map((p) => `${p.metadata.namespace ?? ''}/${p.metadata.name ?? ''}`) }, 'Eviction manager: pods ranked for eviction');
    for (const pod of ranked) {
      const { message } = evictionMessage(reclaim.resource, pod, stats, met, observations);
      if (this.evictPod(pod, IMMEDIATE_EVICTION_GRACE_PERIOD_SECONDS, message)) {
        this.options.onEviction?.(reclaim.threshold.signal);
        return pod;
      }
    }
    this.logger.info('Eviction manager: unable to evict any pods from the node');
    return undefined;
  }

  /** evictPod: never a critical pod; the event, then the kill with the status it ends with. */
  private evictPod(pod: Pod, gracePeriodOverride: number, message: string): boolean {
    const ref = `${pod.metadata.namespace ?? ''}/${pod.metadata.name ?? ''}`;
    if (isCriticalPod(pod)) {
      this.logger.error({ pod: ref }, 'Eviction manager: cannot evict a critical pod');
      return false;
    }
    this.events.event(pod, 'Warning', EVICTION_REASON, message);
    this.logger.info({ pod: ref, podUID: pod.metadata.uid, message }, 'Evicting pod');
    this.pods.killPod(pod, {
      gracePeriodOverride,
      podStatus: { phase: 'Failed', reason: EVICTION_REASON, message, disruptionTarget: { reason: POD_REASON_TERMINATION_BY_KUBELET, message } },
    });
    this.evictedAt.set(pod.metadata.uid ?? '', this.clock.now());
    return true;
  }
}
