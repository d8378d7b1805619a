/**
 * config.PodConfig: the sources' listings merged into PodUpdate operations.
 * Each source's last listing is kept; a new listing is diffed against it
 * (libs/kube diffListing). Every pod is annotated with its source
 * (`kubernetes.io/config.source`) before any comparison, as podStorage.merge
 * does; a pod seen for the first time gets the `kubernetes.io/config.seen`
 * annotation, which it then keeps. Sources are ready once each has
 * delivered one full listing (sourcesReady).
 *
 * A pod without a metadata.creationTimestamp (a static pod: the file and http
 * sources set none) gets the time it was first seen there, as the mirror pod
 * of an upstream static pod shows the time the apiserver created it. That
 * time outlives this process: `restoreFirstSeen` hands in the stamps of the
 * pods the sync loop already holds (its `pods` bucket), so a pod seen again
 * after a restart keeps its age. The UID is never touched.
 */
import type { Pod } from '@app/contracts';
import { CONFIG_SEEN_ANNOTATION, ConfigSourceAnnotation, diffListing, type PodOperations } from '@app/kube';

export class PodConfig {
  private readonly listings = new Map<string, Map<string, Pod>>();
  /** UID -> creationTimestamp of the pods known before this process started; dropped once every source is ready. */
  private restored = new Map<string, string>();

  constructor(private readonly sources: readonly string[]) {}

  /** The creationTimestamps (by UID) a previous run gave its pods; call before the first listing. */
  restoreFirstSeen(stamps: ReadonlyMap<string, string>): void {
    this.restored = new Map(stamps);
  }

  /** Merges one source's full listing; returns what changed. */
  apply(source: string, pods: readonly Pod[], now: Date): PodOperations {
    const previous = this.listings.get(source) ?? new Map<string, Pod>();
    const seenAt = now.toISOString();
    const stamped = pods.map((pod) => {
      const uid = pod.metadata.uid ?? '';
      const before = previous.get(uid);
      const seen = before?.metadata.annotations?.[CONFIG_SEEN_ANNOTATION] ?? seenAt;
      const created = pod.metadata.creationTimestamp ?? before?.metadata.creationTimestamp ?? this.restored.get(uid) ?? seenAt;
      return { ...pod, metadata: { ...pod.metadata, creationTimestamp: created, annotations: { ...pod.metadata.annotations, [ConfigSourceAnnotation]: source, [CONFIG_SEEN_ANNOTATION]: seen } } };
    });
    const ops = diffListing(previous, stamped);
    this.listings.set(source, new Map(stamped.map((p) => [p.metadata.uid ?? '', p])));
    if (this.allReady()) this.restored.clear();
    return ops;
  }

  /** Whether every configured source has delivered a listing. */
  allReady(): boolean {
    return this.sources.every((s) => this.listings.has(s));
  }

  readySources(): string[] {
    return this.sources.filter((s) => this.listings.has(s));
  }

  snapshot(): { source: string; ready: boolean; pods: Pod[] }[] {
    return this.sources.map((source) => ({ source, ready: this.listings.has(source), pods: [...(this.listings.get(source)?.values() ?? [])] }));
  }
}
