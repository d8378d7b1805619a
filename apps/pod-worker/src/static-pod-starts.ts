/**
 * allowStaticPodStart (pkg/kubelet/pod_workers.go): a static pod's new
 * generation (an edited manifest is a new UID, libs/kube staticPodUID)
 * starts only once no other generation with the same full name is started
 * and not finished, and once the generations waiting before it have started
 * or given up. Upstream keeps startedStaticPodsByFullname and
 * waitingToStartStaticPodsByFullname in the memory of its one pod-workers
 * set; here two generations may be worked by two replicas (pods are sharded
 * by UID), so the same question is answered from the node's buckets, which
 * every replica reads alike:
 *
 *   another generation's `workers` record        -> it
 *     finished                                     does not block
 *     syncedAt set (it was started), not finished  blocks: it runs or still terminates (host ports, volumes)
 *     never started, terminating                   does not block: it ends without starting
 *   never started, desired and admitted, not asked to terminate
 *     added before this one (addedAt, then UID)    blocks: it is next in line (UpdatePod's order)
 *     added after                                  does not block
 *   this one no longer desired (or refused, or asked to terminate)
 *                                                  it never starts (canEverStart false: cleanupUnstartedPod);
 *                                                  its kill was lost, or has not come yet
 *
 * The buckets are listed (each key at its value at the call or newer), not
 * read from the watch-kept mirrors: two generations checked at once on two
 * replicas then see each other's desired record, written by the one sync
 * loop in the order it added them, and agree on which goes first. Checks
 * that come together (a burst of static pods) share one listing, started
 * after each of them was asked. A listing is given up after
 * STATIC_POD_LISTING_TIMEOUT_MS (the check rejects: the pod worker waits
 * and tries again after its back-off), so one that hangs blocks neither
 * the pod's worker nor the checks queued behind it.
 * docs/adr/0030-static-pod-generations.md.
 */
import type { Clock, Timer } from '@app/clock';
import type { Pod, PodRecord, PodSyncStatusRecord } from '@app/contracts';
import { isStaticPod } from '@app/kube';
import type { DesiredPods, WorkerRecords } from './ports.js';

/** One generation of a static pod, as the buckets have it. */
export interface StaticPodGeneration {
  uid: string;
  /** Its podManager record (the `pods` bucket), while the sync loop holds it. */
  desired?: PodRecord;
  /** Its pod worker's record (the `workers` bucket), once a worker saved one. */
  record?: PodSyncStatusRecord;
}

/** kubecontainer.GetPodFullName: `<name>_<namespace>`. */
export function podFullName(pod: Pod): string {
  return `${pod.metadata.name ?? ''}_${pod.metadata.namespace ?? ''}`;
}

/** Whether a generation may start now, must wait for another (`blockedBy`), or is no longer desired and never starts. */
export type StaticPodStartVerdict = { allowed: true } | { allowed: false; blockedBy: string } | { allowed: false; notDesired: true };

/** The table at the top of this file: whether `uid` may start beside the other generations of its full name. */
export function allowStaticPodStart(uid: string, generations: readonly StaticPodGeneration[]): StaticPodStartVerdict {
  const self = generations.find((g) => g.uid === uid)?.desired;
  if (self === undefined || !self.admitted || self.terminationRequested === true) return { allowed: false, notDesired: true };
  const before = (g: PodRecord) => g.addedAt < self.addedAt || (g.addedAt === self.addedAt && (g.pod.metadata.uid ?? '') < uid);
  for (const g of generations) {
    if (g.uid === uid || g.record?.finished === true) continue;
    if (g.record?.syncedAt !== undefined) return { allowed: false, blockedBy: g.uid };
    if (g.record?.terminatingAt !== undefined) continue;
    const d = g.desired;
    if (d === undefined || !d.admitted || d.terminationRequested === true) continue;
    if (before(d)) return { allowed: false, blockedBy: g.uid };
  }
  return { allowed: true };
}

/** What the pod workers ask before a static pod's first sync. */
export abstract class StaticPodStartGate {
  /** Whether the pod may start now; `blockedBy` names the generation it waits for. Rejects when the buckets cannot be read. */
  abstract allowStart(pod: Pod): Promise<StaticPodStartVerdict>;
}

/** How long a listing of both buckets may take before the checks that share it are answered with a failure. */
export const STATIC_POD_LISTING_TIMEOUT_MS = 10_000;

/** Both buckets, listed together. */
type Listings = [Map<string, PodRecord>, Map<string, PodSyncStatusRecord>];

/** allowStaticPodStart over the node's `pods` and `workers` buckets. */
export class StaticPodStarts extends StaticPodStartGate {
  /** The listing not started yet, which every check asked before it starts shares. */
  private queued?: Promise<Listings>;
  /** The listing in flight: the next one starts after it. */
  private tail: Promise<unknown> = Promise.resolve();

  constructor(private readonly deps: { desired: Pick<DesiredPods, 'all'>; records: Pick<WorkerRecords, 'all'>; clock: Clock; timeoutMs?: number }) {
    super();
  }

  async allowStart(pod: Pod): Promise<StaticPodStartVerdict> {
    const uid = pod.metadata.uid ?? '';
    const fullName = podFullName(pod);
    const [desired, records] = await this.listings();
    const generations = new Map<string, StaticPodGeneration>([[uid, { uid }]]);
    const generation = (id: string): StaticPodGeneration => {
      const known = generations.get(id);
      if (known) return known;
      const g: StaticPodGeneration = { uid: id };
      generations.set(id, g);
      return g;
    };
    for (const [id, d] of desired) if (isStaticPod(d.pod) && podFullName(d.pod) === fullName) generation(id).desired = d;
    for (const [id, r] of records) if (r.pod !== undefined && isStaticPod(r.pod) && podFullName(r.pod) === fullName) generation(id).record = r;
    return allowStaticPodStart(uid, [...generations.values()]);
  }

  /**
   * A listing of both buckets that starts after this call: the one queued, or a new one queued behind the one in
   * flight. Rejects once it took the timeout; the next one then starts (the one that hangs is left behind).
   */
  private listings(): Promise<Listings> {
    if (this.queued) return this.queued;
    const run = this.tail.then(() => {
      this.queued = undefined;
      return this.within(Promise.all([this.deps.desired.all(), this.deps.records.all()]));
    });
    this.queued = run;
    this.tail = run.catch(() => undefined);
    return run;
  }

  private within<T>(p: Promise<T>): Promise<T> {
    const ms = this.deps.timeoutMs ?? STATIC_POD_LISTING_TIMEOUT_MS;
    let timer: Timer | undefined;
    const expired = new Promise<never>((_, reject) => {
      timer = this.deps.clock.setTimer(ms, () => reject(new Error(`the listing of the pods and workers buckets took more than ${ms} ms`)));
    });
    return Promise.race([p, expired]).finally(() => timer?.cancel());
  }
}
