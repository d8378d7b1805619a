/**
 * The container spec hash the kubelet stores on every container it creates
 * (annotation io.kubernetes.container.hash) and compares on every sync:
 * a running container whose stored hash differs from the spec's is killed
 * and started again (kuberuntime_manager.go containerChanged).
 *
 * Which fields: the whole container except `resources`. That is what
 * upstream's HashContainer (pkg/kubelet/container/helpers.go) did for most
 * of its life (a deep hash of the v1.Container, with resources dropped
 * once in-place resize existed).
 * Newer kubelets hash only name and image, because the API server forbids
 * changing anything else on a running pod; here a static pod's manifest can
 * change any field of a pod with the same UID (docs/adr/0004-static-pods.md),
 * so every field that shapes the running process (command, args, env,
 * mounts, probes, security context, ...) must trigger a restart.
 * `resources` is left out, as upstream's HashContainerWithoutResources did
 * once resources became mutable: they are actuated by in-place resize
 * (UpdateContainerResources), not by a restart. This project does not do
 * in-place resize, so a resources-only edit takes effect when the container
 * is next created (its next restart), never by killing a healthy container.
 *
 * Empty values are normalised away first (undefined, null, [] and {}), so a
 * manifest that spells `args: []` and one that leaves it out hash the same,
 * as they mean the same to the runtime. Keys are sorted, so the hash does not
 * depend on property order. The digest is FNV-1a 64 (upstream uses the FNV
 * family too), as 16 lower-case hex digits.
 */
import type { Container } from '@app/contracts';

const FNV64_OFFSET = 0xcbf29ce484222325n;
const FNV64_PRIME = 0x100000001b3n;
const MASK64 = 0xffffffffffffffffn;

/** The hash of every field of `c` whose change needs a restart (all but `resources`). */
export function hashContainer(c: Container): string {
  const { resources: _resources, ...hashed } = c;
  return fnv1a64(canonical(hashed) ?? '{}');
}

/** Sorted-keys JSON with empty values dropped; undefined when the value itself is empty. */
function canonical(v: unknown): string | undefined {
  if (v === undefined || v === null) return undefined;
  if (Array.isArray(v)) {
    if (v.length === 0) return undefined;
    // Inside an array a position matters, so an empty element stays (as null).
    return `[${v.map((x) => canonical(x) ?? 'null').join(',')}]`;
  }
  if (typeof v === 'object') {
    const parts: string[] = [];
    for (const key of Object.keys(v).sort()) {
      const s = canonical((v as Record<string, unknown>)[key]);
      if (s !== undefined) parts.push(`${JSON.stringify(key)}:${s}`);
    }
    return parts.length === 0 ? undefined : `{${parts.join(',')}}`;
  }
  return JSON.stringify(v);
}

function fnv1a64(text: string): string {
  let h = FNV64_OFFSET;
  for (const byte of new TextEncoder().encode(text)) {
    h ^= BigInt(byte);
    h = (h * FNV64_PRIME) & MASK64;
  }
  return h.toString(16).padStart(16, '0');
}
