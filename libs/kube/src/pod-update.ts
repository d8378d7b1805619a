/**
 * config.PodConfig's merge, as a pure function: a source's new listing
 * against its last one gives the kubelet's PodUpdate operations
 * (pkg/kubelet/config/config.go podStorage.merge / checkAndUpdatePod):
 *  - a UID not seen before: ADD;
 *  - a UID gone from the listing: REMOVE;
 *  - a UID whose spec, labels, annotations or deletion fields changed: UPDATE,
 *    or DELETE when it carries a deletionTimestamp (graceful deletion; again
 *    when a second delete shortens its deletionGracePeriodSeconds, as
 *    checkAndUpdatePod's needGracefulDelete);
 *  - a UID where only the status changed: RECONCILE.
 * The `kubernetes.io/config.seen` annotation is bookkeeping, not a change.
 */
import type { Pod, PodOperation } from '@app/contracts';

export const CONFIG_SEEN_ANNOTATION = 'kubernetes.io/config.seen';

export type PodOperations = Record<PodOperation, Pod[]>;

export function emptyOperations(): PodOperations {
  return { add: [], update: [], remove: [], reconcile: [], delete: [] };
}

/** Stable JSON: keys sorted, so equal objects serialize equally. */
export function canonicalJson(v: unknown): string {
  if (Array.isArray(v)) return `[${v.map(canonicalJson).join(',')}]`;
  if (v && typeof v === 'object') {
    const entries = Object.entries(v as Record<string, unknown>)
      .filter(([, x]) => x !== undefined)
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${entries.map(([k, x]) => `${JSON.stringify(k)}:${canonicalJson(x)}`).join(',')}}`;
  }
  return JSON.stringify(v);
}

function annotationsWithoutSeen(pod: Pod): Record<string, string> {
  const { [CONFIG_SEEN_ANNOTATION]: _seen, ...rest } = pod.metadata.annotations ?? {};
  return rest;
}

/** The kubelet's podsDifferSemantically: what a pod worker must act on. */
export function podsDifferSemantically(a: Pod, b: Pod): boolean {
  const view = (p: Pod) =>
    canonicalJson({
      spec: p.spec,
      labels: p.metadata.labels ?? {},
      annotations: annotationsWithoutSeen(p),
      deletionTimestamp: p.metadata.deletionTimestamp ?? null,
      deletionGracePeriodSeconds: p.metadata.deletionGracePeriodSeconds ?? null,
      name: p.metadata.name,
      namespace: p.metadata.namespace,
    });
  return view(a) !== view(b);
}

function statusDiffers(a: Pod, b: Pod): boolean {
  return canonicalJson(a.status ?? {}) !== canonicalJson(b.status ?? {});
}

/** The operations that turn `previous` into `next` (both one source's full listing, keyed by UID). */
export function diffListing(previous: ReadonlyMap<string, Pod>, next: readonly Pod[]): PodOperations {
  const ops = emptyOperations();
  const seen = new Set<string>();
  for (const pod of next) {
    const uid = pod.metadata.uid ?? '';
    seen.add(uid);
    const old = previous.get(uid);
    if (!old) {
      ops.add.push(pod);
    } else if (podsDifferSemantically(old, pod)) {
      if (pod.metadata.deletionTimestamp) ops.delete.push(pod);
      else ops.update.push(pod);
    } else if (statusDiffers(old, pod)) {
      ops.reconcile.push(pod);
    }
  }
  for (const [uid, pod] of previous) if (!seen.has(uid)) ops.remove.push(pod);
  return ops;
}

export function hasOperations(ops: PodOperations): boolean {
  return Object.values(ops).some((pods) => pods.length > 0);
}
