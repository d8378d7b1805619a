/**
 * The leader election of the single-active services, as the process
 * contract shows it: its variables (after client-go's LeaseDuration,
 * RenewDeadline and RetryPeriod), a readiness line saying leader or standby,
 * and Kubernetes' `leader_election_master_status` gauge. A standby is ready:
 * it is connected, subscribed and able to take over, which is what a
 * standby is for; a readiness probe must not restart it (see
 * docs/adr/0011-leader-election.md).
 */
import { env } from '@app/config';
import { DEFAULT_LEADER_ELECTION, type LeaderElectionOptions, type LeaderElector } from '@app/leader-election';
import { Gauge, type Registry } from '@app/observability';
import type { HealthChecks } from './health.js';

export const leaderElectionSchema = {
  LEADER_LEASE_DURATION: env.duration({
    default: DEFAULT_LEADER_ELECTION.leaseDurationMs,
    describe: 'how long a standby waits after the leader lease last changed before it takes over (LeaseDuration)',
  }),
  LEADER_RENEW_DEADLINE: env.duration({
    default: DEFAULT_LEADER_ELECTION.renewDeadlineMs,
    describe: 'how long a leader keeps acting without renewing its lease (RenewDeadline); shorter than LEADER_LEASE_DURATION',
  }),
  LEADER_RETRY_PERIOD: env.duration({
    default: DEFAULT_LEADER_ELECTION.retryPeriodMs,
    describe: 'how often the leader renews its lease and a standby looks at it (RetryPeriod); shorter than LEADER_RENEW_DEADLINE',
  }),
};

/** The election's timings from a parsed config that has leaderElectionSchema's variables. */
export function leaderElectionOf(config: object): Omit<LeaderElectionOptions, 'identity'> {
  const c = config as Partial<Record<keyof typeof leaderElectionSchema, number>>;
  return {
    leaseDurationMs: c.LEADER_LEASE_DURATION ?? DEFAULT_LEADER_ELECTION.leaseDurationMs,
    renewDeadlineMs: c.LEADER_RENEW_DEADLINE ?? DEFAULT_LEADER_ELECTION.renewDeadlineMs,
    retryPeriodMs: c.LEADER_RETRY_PERIOD ?? DEFAULT_LEADER_ELECTION.retryPeriodMs,
  };
}

/** `/readyz` says leader or standby (ready either way); `leader_election_master_status{name}` is 1 or 0. */
export function watchLeadership(elector: LeaderElector, service: string, health: HealthChecks, registry: Registry): void {
  health.addReadiness('leadership', () => {
    const s = elector.status();
    return { ok: true, detail: s.role === 'leader' ? `leader (fencing token ${s.token ?? '?'})` : `standby${s.leader ? `; the leader is ${s.leader}` : '; no leader seen yet'}` };
  });
  new Gauge({
    name: 'leader_election_master_status',
    help: "Gauge of if the reporting system is master of the relevant lease, 0 indicates backup, 1 indicates master. 'name' is the string used to identify the lease.",
    labelNames: ['name'],
    registers: [registry],
    collect() {
      this.set({ name: service }, elector.isLeader ? 1 : 0);
    },
  });
}
