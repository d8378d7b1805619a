/**
 * How long the local launcher waits before it starts a process that died
 * again (a service, or nats-server): 1 s, doubling to 30 s, and back to 1 s
 * for a process that had run for twice that maximum before it died, as
 * client-go's flowcontrol.Backoff forgets an entry idle for 2 * maxDuration
 * (util/flowcontrol/backoff.go `hasExpired`), which the kubelet's container
 * restart back-off uses (pkg/kubelet/kuberuntime: backOff.Next).
 */
export const RESTART_BACKOFF = { initialMs: 1000, maxMs: 30_000 } as const;

export interface RestartState {
  /** Restarts counted towards the back-off (reset after a long run). */
  restarts: number;
}

/** Counts one more death of a process that had run `ranMs`, and returns the delay before its next start. */
export function nextRestartDelay(state: RestartState, ranMs: number): number {
  if (ranMs >= 2 * RESTART_BACKOFF.maxMs) state.restarts = 0;
  state.restarts++;
  return Math.min(RESTART_BACKOFF.maxMs, RESTART_BACKOFF.initialMs * 2 ** (state.restarts - 1));
}
