/**
 * The part of the eviction manager the Node's conditions read
 * (pkg/kubelet/eviction/eviction_manager.go synchronize, helpers.go
 * thresholdsMet, nodeConditions, nodeConditionsObservedSince): the node's
 * signals against the hard thresholds, and the pressure conditions they
 * give, held for the transition period after the last time a threshold was
 * met so that a condition does not flap. Pure: the signals come in.
 *
 * Evicting pods is not done here (this project has no eviction manager);
 * only the conditions are reported.
 */
import { EvictionSignal, thresholdAmount, type EvictionThreshold } from '@app/kube';

/** One signal's observation: how much is available of how much (bytes, inodes or PIDs). */
export interface SignalObservation {
  available: number;
  capacity: number;
}

export type SignalObservations = Partial<Record<EvictionSignal, SignalObservation>>;

export type NodePressure = 'MemoryPressure' | 'DiskPressure' | 'PIDPressure';

/** helpers.go signalToNodeCondition. */
const SIGNAL_TO_CONDITION: Readonly<Record<EvictionSignal, NodePressure>> = {
  'memory.available': 'MemoryPressure',
  'allocatableMemory.available': 'MemoryPressure',
  'nodefs.available': 'DiskPressure',
  'nodefs.inodesFree': 'DiskPressure',
  'imagefs.available': 'DiskPressure',
  'imagefs.inodesFree': 'DiskPressure',
  'containerfs.available': 'DiskPressure',
  'containerfs.inodesFree': 'DiskPressure',
  'pid.available': 'PIDPressure',
};

/** --eviction-pressure-transition-period's default. */
export const EVICTION_PRESSURE_TRANSITION_PERIOD_MS = 5 * 60_000;

/** thresholdsMet: the thresholds whose signal is observed below them (an unobserved signal meets nothing). */
export function thresholdsMet(thresholds: readonly EvictionThreshold[], observations: SignalObservations): EvictionThreshold[] {
  return thresholds.filter((t) => {
    const o = observations[t.signal];
    return o !== undefined && o.available < thresholdAmount(t, o.capacity);
  });
}

export class PressureConditions {
  private readonly lastObservedAt = new Map<NodePressure, number>();

  constructor(
    private readonly thresholds: readonly EvictionThreshold[],
    private readonly transitionPeriodMs = EVICTION_PRESSURE_TRANSITION_PERIOD_MS,
  ) {}

  /** One synchronize: the thresholds met now, and the conditions observed within the transition period. */
  observe(observations: SignalObservations, now: number): { met: EvictionThreshold[]; pressure: Record<NodePressure, boolean> } {
    const met = thresholdsMet(this.thresholds, observations);
    for (const t of met) this.lastObservedAt.set(SIGNAL_TO_CONDITION[t.signal], now);
    return { met, pressure: { MemoryPressure: this.under('MemoryPressure', now), DiskPressure: this.under('DiskPressure', now), PIDPressure: this.under('PIDPressure', now) } };
  }

  private under(c: NodePressure, now: number): boolean {
    const at = this.lastObservedAt.get(c);
    return at !== undefined && now - at < this.transitionPeriodMs;
  }
}
