/**
 * The runtime cache (pkg/kubelet/container/runtime_cache.go): the runtime's
 * pods listed at most once per period, so housekeeping and the orphan
 * cleanup, on the same period, share one listing (upstream's
 * runtimeCacheRefreshPeriod is the housekeeping period + 1 s, kubelet.go).
 *
 *   get()               GetPods: the listing while it is younger than the period, else a new one
 *   getNewerThan(t)     ForceUpdateIfOlder: a listing started at or after t (a pass that is
 *                       about to kill or remove reads the runtime again first)
 *
 * A listing's timestamp is taken before it starts (as upstream's, "to avoid
 * stale pods"); callers that ask while a listing is in flight share it when
 * it is fresh enough for them. A failed listing is not cached.
 */
import type { Clock } from '@app/clock';
import type { RuntimePod, RuntimeView } from './ports.js';

/** One listing of the runtime. */
export interface RuntimeListing {
  /** This node's runtime pods (running or not). */
  pods: RuntimePod[];
  /** The pod UIDs of every sandbox on the runtime, any stack's. */
  allPodUids: Set<string>;
  /** When the listing started. */
  timestamp: number;
}

/** What the periodic passes read the runtime through (RuntimeCache, or a fake). */
export interface RuntimePods {
  get(): Promise<RuntimeListing>;
  getNewerThan(minTime: number): Promise<RuntimeListing>;
}

export class RuntimeCache implements RuntimePods {
  private cached?: RuntimeListing;
  private inFlight?: { startedAt: number; listing: Promise<RuntimeListing> };

  constructor(
    private readonly runtime: Pick<RuntimeView, 'pods' | 'allPodUids'>,
    private readonly clock: Clock,
    /** How long a listing serves get(); 0: every get lists. */
    private readonly periodMs: number,
  ) {}

  get(): Promise<RuntimeListing> {
    if (this.periodMs <= 0) return this.list();
    const now = this.clock.now();
    if (this.cached && now - this.cached.timestamp < this.periodMs) return Promise.resolve(this.cached);
    return this.getNewerThan(now - this.periodMs + 1);
  }

  getNewerThan(minTime: number): Promise<RuntimeListing> {
    if (this.cached && this.cached.timestamp >= minTime) return Promise.resolve(this.cached);
    if (this.inFlight && this.inFlight.startedAt >= minTime) return this.inFlight.listing;
    return this.list();
  }

  private list(): Promise<RuntimeListing> {
    const startedAt = this.clock.now();
    const listing = Promise.all([this.runtime.pods(), this.runtime.allPodUids()]).then(([pods, allPodUids]) => ({ pods, allPodUids, timestamp: startedAt }));
    const flight = { startedAt, listing };
    this.inFlight = flight;
    return listing.then(
      (l) => {
        if (this.inFlight === flight) this.inFlight = undefined;
        if (!this.cached || this.cached.timestamp <= l.timestamp) this.cached = l;
        return l;
      },
      (err: unknown) => {
        if (this.inFlight === flight) this.inFlight = undefined;
        throw err;
      },
    );
  }
}
