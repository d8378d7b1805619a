/**
 * From manifest text to admitted static pods, as the kubelet's file and
 * http sources do: parse (YAML or JSON, several documents), extract pods
 * (a Pod, a list, a PodList), make each a static pod of this node (name
 * suffix, namespace, UID, config annotations, API defaults), validate it,
 * and refuse duplicates. Every refusal is a ManifestProblem naming where and
 * why; nothing here throws.
 */
import type { Pod } from '@app/contracts';
import { isRecord } from '@app/contracts';
import { extractPods, formatFieldErrors, makeStaticPod, parseManifest, validatePod, type StaticPodOrigin } from '@app/kube';

export interface ManifestProblem {
  /** The file path or URL. */
  location: string;
  /** The pod's name in the manifest, when known. */
  podName?: string;
  reason: string;
}

export interface ManifestResult {
  pods: Pod[];
  problems: ManifestProblem[];
  /** Names (as written) of documents that were refused, for keeping their last good version. */
  refusedNames: string[];
  /** Whether the text itself could not be read as a manifest (nothing in it was usable). */
  unreadable: boolean;
}

/** The largest manifest read (the kubelet's limit for a single pod file is 10 MiB). */
export const MAX_MANIFEST_BYTES = 10 * 1024 * 1024;

export function podsFromManifest(text: string, origin: StaticPodOrigin): ManifestResult {
  const location = origin.location;
  const parsed = parseManifest(text, looksLikeJson(text) ? 'json' : 'yaml');
  if (parsed.error !== undefined) return { pods: [], problems: [{ location, reason: parsed.error }], refusedNames: [], unreadable: true };
  const result: ManifestResult = { pods: [], problems: [], refusedNames: [], unreadable: false };
  for (const doc of parsed.documents) {
    const extracted = extractPods(doc.value);
    if (extracted.error !== undefined) {
      result.problems.push({ location, reason: `document ${doc.index + 1}: ${extracted.error}` });
      continue;
    }
    for (const raw of extracted.pods) {
      const name = rawName(raw);
      if (!isRecord(raw) || !isRecord(raw['metadata']) || !isRecord(raw['spec'])) {
        result.problems.push({ location, ...(name ? { podName: name } : {}), reason: `document ${doc.index + 1}: a pod needs metadata and spec objects` });
        if (name) result.refusedNames.push(name);
        continue;
      }
      const pod = makeStaticPod(raw as unknown as Pod, origin);
      const errors = validatePod(pod);
      if (errors.length > 0) {
        result.problems.push({ location, ...(name ? { podName: name } : {}), reason: `pod "${name ?? '<no name>'}" is invalid: ${formatFieldErrors(errors)}` });
        if (name) result.refusedNames.push(name);
        continue;
      }
      result.pods.push(pod);
    }
  }
  return result;
}

function looksLikeJson(text: string): boolean {
  const t = text.trimStart();
  return t.startsWith('{') || t.startsWith('[');
}

function rawName(raw: unknown): string | undefined {
  if (!isRecord(raw) || !isRecord(raw['metadata'])) return undefined;
  const n = raw['metadata']['name'];
  return typeof n === 'string' && n.length > 0 ? n : undefined;
}

/**
 * PodConfig's filterInvalidPods: within one source, a second pod with the
 * same namespace/name is refused (the first one read wins).
 */
export function refuseDuplicates(pods: readonly { pod: Pod; location: string }[]): { pods: { pod: Pod; location: string }[]; problems: ManifestProblem[] } {
  const seen = new Map<string, string>();
  const out: { pod: Pod; location: string }[] = [];
  const problems: ManifestProblem[] = [];
  for (const entry of pods) {
    const key = `${entry.pod.metadata.namespace ?? ''}/${entry.pod.metadata.name ?? ''}`;
    const first = seen.get(key);
    if (first !== undefined) {
      problems.push({ location: entry.location, podName: entry.pod.metadata.name ?? '', reason: `duplicate pod ${key}: already defined in ${first}` });
      continue;
    }
    seen.set(key, entry.location);
    out.push(entry);
  }
  return { pods: out, problems };
}
