/**
 * fieldpath.ExtractFieldPathAsString (k8s.io/kubernetes pkg/fieldpath) for
 * a pod's own metadata: the one reading of a downward API object field
 * path, for the downwardAPI volume, a container's env and `describe`.
 * Fields that need more than the pod object (spec.nodeName, status.podIP,
 * ...) are each caller's: they differ in where the value comes from.
 */
import type { Pod } from '@app/contracts';

/** FormatMap: `key="value"` lines, keys sorted. */
export function formatMap(m: Record<string, string> | undefined): string {
  return Object.keys(m ?? {})
    .sort()
    .map((k) => `${k}=${JSON.stringify(m?.[k] ?? '')}`)
    .join('\n');
}

const INDEXED = /^metadata\.(labels|annotations)\['(.+)'\]$/;

/** Whether `path` is one ExtractFieldPathAsString reads (a metadata field, or one label or annotation). */
export function isObjectFieldPath(path: string): boolean {
  return ['metadata.name', 'metadata.namespace', 'metadata.uid', 'metadata.labels', 'metadata.annotations'].includes(path) || INDEXED.test(path);
}

/** The value of a metadata field path of `pod`; throws `unsupported fieldPath: <path>` for any other path. */
export function extractFieldPathAsString(pod: Pod, path: string): string {
  switch (path) {
    case 'metadata.name':
      return pod.metadata.name ?? '';
    case 'metadata.namespace':
      return pod.metadata.namespace ?? '';
    case 'metadata.uid':
      return pod.metadata.uid ?? '';
    case 'metadata.labels':
      return formatMap(pod.metadata.labels);
    case 'metadata.annotations':
      return formatMap(pod.metadata.annotations);
  }
  const indexed = INDEXED.exec(path);
  if (indexed) return (indexed[1] === 'labels' ? pod.metadata.labels : pod.metadata.annotations)?.[indexed[2] ?? ''] ?? '';
  throw new Error(`unsupported fieldPath: ${path}`);
}
