/**
 * config.PodConfig: the sources' listings merged into PodUpdate operations.
 * Each source's last listing is kept; a new listing is diffed against it
 * (libs/kube diffListing). Every pod is annotated with its source
 * (`kubernetes.io/config.source`) before any comparison, as podStorage.merge
 * does; a pod seen for the first time gets the `kubernetes.io/config.seen`
 * annotation, which it then keeps. Sources are ready once each has
 * delivered one full listing (sourcesReady).
 */
import type { Pod } from '@app/contracts';
import { CONFIG_SEEN_ANNOTATION, ConfigSourceAnnotation, diffListing, type PodOperations } from '@app/kube';

export class PodConfig {
  private readonly listings = new Map<string, Map<string, Pod>>();

  constructor(private readonly sources: readonly string[]) {}

  /** Merges one source's full listing; returns what changed. */
  apply(source: string, pods: readonly Pod[], now: Date): PodOperations {
    const previous = this.listings.get(source) ?? new Map<string, Pod>();
    const seenAt = now.toISOString();
    const stamped = pods.map((pod) => {
      const seen = previous.get(pod.metadata.uid ?? '')?.metadata.annotations?.[CONFIG_SEEN_ANNOTATION] ?? seenAt;
      return { ...pod, metadata: { ...pod.metadata, annotations: { ...pod.metadata.annotations, [ConfigSourceAnnotation]: source, [CONFIG_SEEN_ANNOTATION]: seen } } };
    });
    const ops = diffListing(previous, stamped);
    this.listings.set(source, new Map(stamped.map((p) => [p.metadata.uid ?? '', p])));
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
