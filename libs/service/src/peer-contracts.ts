/**
 * What a service has heard of its peers' contract versions
 * (docs/adr/0034-version-skew-policy.md): every message and reply that
 * carries a Kubelet-Contract header is judged against the policy
 * (judgePeer), and a peer outside it is logged once per peer and version
 * (structured: the peer, its version, ours and the range we accept), listed
 * in /info, and shown by the `contractVersions` readiness check as
 * degraded — degraded, not failed: a service that fails /readyz is taken
 * out of its deployment's rotation and restarted by some, and a peer's
 * version must never cost a node its pods. A peer not heard from at that
 * version for `forgetAfterMs` drops out (it was stopped or upgraded).
 */
import type { Clock } from '@app/clock';
import { formatContractRange, judgePeer, type ContractClaim, type PeerOutsidePolicy } from '@app/contracts';
import type { ContractWitness } from '@app/tracing';
import type { CheckResult } from './health.js';

/** The logger this needs: a warning per peer newly outside the policy, an info when it is back within. */
export interface PeerContractsLogger {
  warn(obj: object, msg: string): void;
  info(obj: object, msg: string): void;
}

export interface PeerContractsDeps {
  claim: ContractClaim;
  clock: Clock;
  logger: PeerContractsLogger;
  /** This instance's own connection name: its own messages (a request to itself) are not a peer's. */
  self?: string;
  /** How long a peer outside the policy is remembered after it was last heard (default 5 minutes). */
  forgetAfterMs?: number;
}

interface Outside {
  version: number;
  why: PeerOutsidePolicy['why'];
  reason: string;
  firstSeen: number;
  lastSeen: number;
  subject: string;
}

export const PEER_FORGET_AFTER_MS = 5 * 60_000;
/** The most peers outside the policy remembered at once (instances that come and go must not grow it without end). */
export const MAX_PEERS_OUTSIDE_POLICY = 256;

export class PeerContracts implements ContractWitness {
  readonly version: number;
  private readonly outside = new Map<string, Outside>();
  private readonly forgetAfterMs: number;

  constructor(private readonly deps: PeerContractsDeps) {
    this.version = deps.claim.version;
    this.forgetAfterMs = deps.forgetAfterMs ?? PEER_FORGET_AFTER_MS;
  }

  heard(peer: { sender?: string; service?: string; version: number }, subject: string): void {
    const name = peer.sender ?? peer.service;
    if (name === undefined || name === this.deps.self) return;
    // The hot path: a peer of our own version, and nobody outside the policy to forget.
    if (peer.version === this.version && this.outside.size === 0) return;
    const now = this.deps.clock.now();
    const known = this.outside.get(name);
    const verdict = judgePeer(this.deps.claim, peer.version);
    if (verdict.accepted) {
      if (known) {
        this.outside.delete(name);
        this.deps.logger.info({ peer: name, peerContractVersion: peer.version, contractVersion: this.version, accepts: formatContractRange(this.deps.claim.accepts) }, 'peer is back within the contract skew policy');
      }
      return;
    }
    if (known?.version === peer.version) {
      known.lastSeen = now;
      known.subject = subject;
      return;
    }
    if (!known && this.outside.size >= MAX_PEERS_OUTSIDE_POLICY) this.makeRoom(now);
    this.outside.set(name, { version: peer.version, why: verdict.why, reason: verdict.reason, firstSeen: now, lastSeen: now, subject });
    this.deps.logger.warn(
      {
        peer: name,
        peerContractVersion: peer.version,
        contractVersion: this.version,
        accepts: formatContractRange(this.deps.claim.accepts),
        why: verdict.why,
        subject,
        policy: 'docs/adr/0034-version-skew-policy.md',
      },
      `peer outside the contract skew policy: ${name} (${verdict.why}): ${verdict.reason}; its messages are still decoded by their types, and any type version this service does not read is refused`,
    );
  }

  /** Forgets the peers not heard from within forgetAfterMs, then, if still full, the one heard from longest ago. */
  private makeRoom(now: number): void {
    for (const [peer, o] of this.outside) if (now - o.lastSeen > this.forgetAfterMs) this.outside.delete(peer);
    if (this.outside.size < MAX_PEERS_OUTSIDE_POLICY) return;
    let oldest: [string, number] | undefined;
    for (const [peer, o] of this.outside) if (!oldest || o.lastSeen < oldest[1]) oldest = [peer, o.lastSeen];
    if (oldest) this.outside.delete(oldest[0]);
  }

  /** The peers outside the policy heard from within forgetAfterMs, by name. */
  peersOutsidePolicy(): PeerOutsidePolicy[] {
    const now = this.deps.clock.now();
    const out: PeerOutsidePolicy[] = [];
    for (const [peer, o] of this.outside) {
      if (now - o.lastSeen > this.forgetAfterMs) {
        this.outside.delete(peer);
        continue;
      }
      out.push({ peer, version: o.version, why: o.why, reason: o.reason, firstSeen: new Date(o.firstSeen).toISOString(), lastSeen: new Date(o.lastSeen).toISOString(), subject: o.subject });
    }
    return out.sort((a, b) => a.peer.localeCompare(b.peer));
  }

  /** The `contractVersions` readiness check: always ok (see the header), degraded while a peer is outside the policy. */
  check(): CheckResult {
    const peers = this.peersOutsidePolicy();
    const mine = `contract ${this.version}, accepts ${formatContractRange(this.deps.claim.accepts)}`;
    if (peers.length === 0) return { ok: true, detail: mine };
    return {
      ok: true,
      degraded: true,
      detail: `${mine}; degraded: peers outside the skew policy: ${peers.map((p) => `${p.peer} speaks ${p.version} (${p.why})`).join('; ')}`,
    };
  }

  /** What /info says. */
  info(): ContractClaim & { peersOutsidePolicy: PeerOutsidePolicy[] } {
    return { version: this.deps.claim.version, accepts: { ...this.deps.claim.accepts }, peersOutsidePolicy: this.peersOutsidePolicy() };
  }
}
