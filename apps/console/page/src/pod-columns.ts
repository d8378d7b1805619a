/** The columns of `kubectl get pods` (printers.go printPod), as the console shows them. */
import type { Pod } from 'kubernetes-types/core/v1';

/** READY: ready containers / containers. */
export function podReady(p: Pod): string {
  const total = p.spec?.containers.length ?? 0;
  const ready = (p.status?.containerStatuses ?? []).filter((c) => c.ready).length;
  return `${ready}/${total}`;
}

/** RESTARTS: the containers' restart counts, summed. */
export function podRestarts(p: Pod): number {
  return (p.status?.containerStatuses ?? []).reduce((n, c) => n + (c.restartCount ?? 0), 0);
}

/** STATUS: the phase, or the reason a container waits or ended, or Terminating. */
export function podStatusReason(p: Pod): string {
  let reason = p.status?.reason ?? p.status?.phase ?? 'Unknown';
  for (const c of p.status?.containerStatuses ?? []) {
    const waiting = c.state?.waiting?.reason;
    const terminated = c.state?.terminated;
    if (waiting && waiting !== 'ContainerCreating') reason = waiting;
    else if (terminated && p.status?.phase !== 'Succeeded' && p.status?.phase !== 'Failed') reason = terminated.reason ?? `ExitCode:${terminated.exitCode}`;
    else if (waiting && reason === 'Pending') reason = waiting;
  }
  if (p.metadata?.deletionTimestamp) reason = 'Terminating';
  return reason;
}

/** AGE: since the pod's creationTimestamp (or its startTime when it has none), short as kubectl's. */
export function age(p: Pod, now: number): string {
  const since = p.metadata?.creationTimestamp ?? p.status?.startTime;
  if (!since) return '<unknown>';
  const s = Math.max(0, Math.floor((now - Date.parse(since)) / 1000));
  if (s < 120) return `${s}s`;
  const m = Math.floor(s / 60);
  if (m < 10) return `${m}m${s % 60 ? `${s % 60}s` : ''}`;
  if (m < 180) return `${m}m`;
  const h = Math.floor(m / 60);
  if (h < 48) return `${h}h`;
  return `${Math.floor(h / 24)}d`;
}
