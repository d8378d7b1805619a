export { DEFAULT_LEADER_ELECTION, FencingTokenFilter, LeaderElector, LeaderFence, LeaderLeaseStore, LeaseFence, NotLeaderError, leaderElectionProblem, leaderLeaseKey } from './leader-election.js';
export type { LeaderElectionOptions, LeaderElectionRecord, LeaderLeaseSnapshot, LeaderRole, LeadershipListener, LeadershipStatus } from './leader-election.js';
export { KvLeaderLeaseStore } from './kv-leader-lease-store.js';
export type { LeaderLeaseKv } from './kv-leader-lease-store.js';
export { RESTORE_RETRY_MS, restoreThenLead } from './restore-then-lead.js';
export type { RestoreFailurePolicy, RestoreThenLeadOptions } from './restore-then-lead.js';
