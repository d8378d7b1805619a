/**
 * What `/healthz` and `/readyz` report. Checks are registered by name by
 * whoever knows the answer (the transport for "subscriptions bound", the
 * cri-gateway for the runtime handshake, the pleg for relist health).
 */
export interface CheckResult {
  ok: boolean;
  detail?: string;
  /** Passing, but something is wrong that a person should see (a peer outside the contract skew policy). */
  degraded?: boolean;
}
export type Check = () => CheckResult;

export interface HealthReport {
  ok: boolean;
  checks: Record<string, CheckResult>;
  /** The checks that pass but say they are degraded, by name; absent when none. */
  degraded?: string[];
}

export class HealthChecks {
  private readonly readiness = new Map<string, Check>();
  private readonly liveness = new Map<string, Check>();
  private draining = false;

  /** Must pass for /readyz (and so for taking work). */
  addReadiness(name: string, check: Check): void {
    this.readiness.set(name, check);
  }

  /** Must pass for /healthz (the process is worth keeping). */
  addLiveness(name: string, check: Check): void {
    this.liveness.set(name, check);
  }

  /** After SIGTERM: no longer ready, whatever the checks say. */
  markDraining(): void {
    this.draining = true;
  }

  ready(): HealthReport {
    const report = run(this.readiness);
    if (this.draining) return { ok: false, checks: { ...report.checks, shutdown: { ok: false, detail: 'draining after SIGTERM' } } };
    return report;
  }

  healthy(): HealthReport {
    return run(this.liveness);
  }
}

function run(checks: Map<string, Check>): HealthReport {
  const out: Record<string, CheckResult> = {};
  const degraded: string[] = [];
  let ok = true;
  for (const [name, check] of checks) {
    let r: CheckResult;
    try {
      r = check();
    } catch (err) {
      r = { ok: false, detail: `check threw: ${(err as Error).message}` };
    }
    out[name] = r;
    ok &&= r.ok;
    if (r.degraded) degraded.push(name);
  }
  return degraded.length > 0 ? { ok, checks: out, degraded } : { ok, checks: out };
}
