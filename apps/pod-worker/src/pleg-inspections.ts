/**
 * The PLEG inspections a pod worker asks for: what it just did to the
 * runtime, so that it does not wait for the next relist to learn it
 * (docs/adr/0017; ours, not upstream's). The runtime manager marks a
 * pod when a sync changes it in the runtime (a sandbox run or stopped, a
 * container created, started, stopped or removed); when that sync ends, the
 * pod worker asks the PLEG to inspect the pod at once. The PLEG's entry is
 * then newer than the sync's end, so the sync its events bring runs within
 * milliseconds on what the runtime now shows: the container Running, the
 * terminated pod's final status, instead of a relist period later.
 *
 * Upstream's pod worker waits for the next relist here (pod_workers.go:
 * "this adds ~1s of latency on all transitions from sync to terminating to
 * terminated ... We should improve latency by ... allowing pod status
 * changes to be refreshed when key events happen").
 */
import { PodInspector } from './ports.js';

export class PlegInspections {
  private readonly changed = new Set<string>();

  constructor(private readonly inspector: PodInspector) {}

  /** The sync in flight changed the pod in the runtime. */
  mark(uid: string | undefined): void {
    if (uid) this.changed.add(uid);
  }

  /**
   * A sync of the pod ended at `syncEnd`, whether it succeeded or not: if
   * it changed the pod, the PLEG is asked to inspect it now. Returns whether
   * it asked.
   */
  syncEnded(uid: string, syncEnd: number): boolean {
    if (!this.changed.delete(uid)) return false;
    this.inspect(uid, syncEnd);
    return true;
  }

  /**
   * The pod's worker has work and must wait for a cache entry newer than
   * `since` (its last sync's end), which the cache does not have yet: a
   * kill or an update right after a sync that changed nothing. The PLEG is
   * asked to look now (upstream's TODO: "when key events happen (killPod,
   * sync->terminating)").
   */
  inspect(uid: string, since: number): void {
    try {
      this.inspector.inspect(uid, since);
    } catch {
      // NATS is away: the next relist sees the pod.
    }
  }
}
