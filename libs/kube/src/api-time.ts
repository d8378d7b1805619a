/**
 * Times as the API carries them: metav1.Time marshals RFC 3339 at second
 * precision (sub-seconds truncated), so a status the kubelet generates and
 * the one the API server stores compare equal.
 */

/** metav1.Time's RFC 3339 form of ms since the epoch: `2026-01-02T03:04:05Z`. */
export function rfc3339(ms: number): string {
  return new Date(Math.floor(ms / 1000) * 1000).toISOString().replace('.000Z', 'Z');
}
