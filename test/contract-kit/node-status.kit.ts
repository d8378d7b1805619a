/**
 * node-status's contract on a node without a cluster, checked from
 * outside: it is single-active, holding `<node>.leader.node-status` while
 * it leads, and after a restart leads again. (Joined to a cluster its
 * contract is the apiserver's: the Node's status and its Lease, which the
 * conformance suite checks; docs/contract-kit.md.)
 */
import { leaderLeaseCheck, type KitCheck } from './kit.js';

export const NODE_STATUS_CHECKS: readonly KitCheck[] = [
  leaderLeaseCheck('node-status'),
  { ...leaderLeaseCheck('node-status'), name: 'restarted: it leads again (the lease held and renewed)', needsRestart: true, async run(t, note) {
    await t.restart?.();
    await leaderLeaseCheck('node-status').run(t, note);
  } },
];
