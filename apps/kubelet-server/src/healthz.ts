/**
 * The kubelet server's `/healthz` (pkg/kubelet/server/server.go
 * InstallDefaultHandlers: `healthz.PingHealthz`, `healthz.LogHealthz`,
 * `healthz.NamedCheck("syncloop", s.host.SyncLoopHealthCheck)`, served by
 * apiserver's healthz.InstallHandler). The sync loop runs in another
 * process: its entry time is read from the `pods` bucket, where the leading
 * sync loop writes it (apps/sync-loop/src/sync-loop-monitor.ts).
 *
 *   every check passes ─▶ 200 "ok" (`?verbose`: one "[+]<name> ok" line each, then "healthz check passed")
 *   one fails          ─▶ 500, "[-]<name> failed: reason withheld" for it, then "healthz check failed"
 *
 * SyncLoopHealthCheck (kubelet.go): no entry time yet is healthy (the loop
 * has not started); an entry time older than the threshold is not.
 */
import type { SyncLoopMonitorRecord } from '@app/contracts';
import type { SyncLoopMonitorReader } from './ports.js';

/** SyncLoopHealthCheck: why the sync loop counts as stuck at `now`, or undefined when it does not. */
export function syncLoopHealthCheck(record: SyncLoopMonitorRecord | undefined, now: number): string | undefined {
  if (!record || record.latestLoopEntryTime === 0) return undefined;
  const age = now - record.latestLoopEntryTime;
  if (age > record.healthThresholdMs) return `sync Loop took longer than expected (last entered ${Math.round(age / 1000)}s ago; threshold ${Math.round(record.healthThresholdMs / 1000)}s)`;
  return undefined;
}

/** One named check: undefined when it passes, the reason when it fails. */
export interface HealthzCheck {
  name: string;
  check: () => Promise<string | undefined>;
}

/** The checks server.go installs, in its order. */
export function kubeletHealthzChecks(monitor: SyncLoopMonitorReader, now: () => number): HealthzCheck[] {
  return [
    { name: 'ping', check: () => Promise.resolve(undefined) },
    { name: 'log', check: () => Promise.resolve(undefined) },
    {
      name: 'syncloop',
      check: async () => {
        try {
          return syncLoopHealthCheck(await monitor.get(), now());
        } catch (err) {
          return `the sync loop monitor cannot be read: ${(err as Error).message}`;
        }
      },
    },
  ];
}

/** healthz.handleRootHealth: the status and body for `checks`. */
export async function runHealthz(checks: readonly HealthzCheck[], verbose: boolean): Promise<{ status: number; body: string; failures: { name: string; reason: string }[] }> {
  const results = await Promise.all(checks.map(async (c) => ({ name: c.name, reason: await c.check() })));
  const failures = results.filter((r): r is { name: string; reason: string } => r.reason !== undefined);
  const lines = results.map((r) => (r.reason === undefined ? `[+]${r.name} ok` : `[-]${r.name} failed: reason withheld`));
  if (failures.length > 0) return { status: 500, body: `${lines.join('\n')}\nhealthz check failed\n`, failures };
  return { status: 200, body: verbose ? `${lines.join('\n')}\nhealthz check passed\n` : 'ok', failures };
}
