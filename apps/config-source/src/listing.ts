/**
 * One source's full listing from its manifests, keeping the last good
 * version of a pod whose manifest is now broken: a typo in a running static
 * pod's file must not kill the pod (docs/adr/0004-static-pods.md). A pod is
 * removed when its manifest is removed, or when a readable manifest no
 * longer mentions it.
 */
import type { Pod } from '@app/contracts';
import type { StaticPodOrigin } from '@app/kube';
import { MAX_MANIFEST_BYTES, podsFromManifest, refuseDuplicates, type ManifestProblem } from './static-pods.js';

/** One manifest as read: its text, or why it could not be read. */
export interface ManifestInput {
  location: string;
  text?: string;
  size?: number;
  error?: string;
}

export interface Listing {
  pods: Pod[];
  problems: ManifestProblem[];
}

export class ListingBuilder {
  /** location -> pod name -> the last good pod from it. */
  private lastGood = new Map<string, Map<string, Pod>>();

  constructor(
    private readonly source: StaticPodOrigin['source'],
    private readonly nodeName: string,
  ) {}

  build(inputs: readonly ManifestInput[]): Listing {
    const problems: ManifestProblem[] = [];
    const next = new Map<string, Map<string, Pod>>();
    const ordered = [...inputs].sort((a, b) => (a.location < b.location ? -1 : a.location > b.location ? 1 : 0));
    for (const input of ordered) {
      const previous = this.lastGood.get(input.location) ?? new Map<string, Pod>();
      const keepAll = (reason: string) => {
        problems.push({ location: input.location, reason });
        next.set(input.location, previous);
      };
      if (input.error !== undefined) {
        keepAll(input.error);
        continue;
      }
      if ((input.size ?? input.text?.length ?? 0) > MAX_MANIFEST_BYTES) {
        keepAll(`manifest is larger than ${MAX_MANIFEST_BYTES} bytes`);
        continue;
      }
      if (this.source === 'file' && (input.text ?? '').trim() === '') {
        // An empty file is most often one being written (truncated, not yet
        // filled): a running pod keeps its last good version rather than
        // being killed and started again. Deleting the file removes it.
        // (An empty answer from a manifest URL is an empty listing, as upstream's.)
        keepAll('the manifest is empty');
        continue;
      }
      const result = podsFromManifest(input.text ?? '', { source: this.source, location: input.location, nodeName: this.nodeName });
      problems.push(...result.problems);
      if (result.unreadable) {
        next.set(input.location, previous);
        continue;
      }
      const good = new Map<string, Pod>();
      for (const pod of result.pods) good.set(pod.metadata.name ?? '', pod);
      for (const refused of result.refusedNames) {
        const kept = previous.get(staticName(refused, this.nodeName));
        if (kept && !good.has(kept.metadata.name ?? '')) good.set(kept.metadata.name ?? '', kept);
      }
      next.set(input.location, good);
    }
    this.lastGood = next;
    const entries = [...next].flatMap(([location, pods]) => [...pods.values()].map((pod) => ({ pod, location })));
    const deduped = refuseDuplicates(entries);
    return { pods: deduped.pods.map((e) => e.pod), problems: [...problems, ...deduped.problems] };
  }
}

/** The kubelet's static pod name: `<name>-<node>`. */
export function staticName(name: string, nodeName: string): string {
  return `${name}-${nodeName.toLowerCase()}`;
}
