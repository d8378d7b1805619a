/**
 * The version-skew policy (docs/adr/0034-version-skew-policy.md), as pure
 * functions. Upstream's model is its n-1 skew between components
 * (https://kubernetes.io/releases/version-skew-policy/): here every service
 * speaks one contract version N (CONTRACT_VERSION, the messages of
 * messages.ts and the records of state.ts as this build writes and reads
 * them) and works beside peers of N-1 and N+1 — the newer side of a pair is
 * the one that keeps reading the older's messages, so a pair is within the
 * policy when the newer one's accepted range holds the older one's version.
 *
 * Nothing here drops work by itself: a message is decoded by its `type`
 * (decodeMessage refuses a type version it does not read, naming why), and
 * a peer outside the policy is reported (log, /readyz, /info), not cut off.
 */

/** The contract version this build speaks: bumped when a message type or record gets a new version. */
export const CONTRACT_VERSION = 1;

/** The oldest contract version there ever was: no service accepts below it. */
export const OLDEST_CONTRACT_VERSION = 1;

/** How many versions back a service of version N reads (upstream's n-1). */
export const CONTRACT_SKEW = 1;

/** Contract versions from `oldest` to `newest`, both included. */
export interface ContractRange {
  oldest: number;
  newest: number;
}

/** What a service says it speaks (in /info, and in the Kubelet-Contract header of everything it sends). */
export interface ContractClaim {
  /** The contract version it speaks. */
  version: number;
  /** The versions of peers it accepts: its own and CONTRACT_SKEW before. */
  accepts: ContractRange;
}

/** The claim of a service speaking `version` (default: this build's). */
export function contractClaim(version: number = CONTRACT_VERSION): ContractClaim {
  return { version, accepts: { oldest: Math.max(OLDEST_CONTRACT_VERSION, version - CONTRACT_SKEW), newest: version } };
}

export function formatContractRange(r: ContractRange): string {
  return r.oldest === r.newest ? `${r.oldest}` : `${r.oldest}..${r.newest}`;
}

/** Whether a peer is within the policy, and if not, why, in words that name both versions and the range. */
export type PeerJudgement =
  | { accepted: true; why: 'same version' | 'older peer within the skew' | 'newer peer within the skew' }
  | { accepted: false; why: 'peer too old' | 'peer too new'; reason: string };

/**
 * Judges a peer speaking `peerVersion` from the side of `self`. An older
 * peer is accepted when `self` accepts its version; a newer one when its
 * own accepted range (by the same policy) holds `self`'s version.
 */
export function judgePeer(self: ContractClaim, peerVersion: number): PeerJudgement {
  if (peerVersion === self.version) return { accepted: true, why: 'same version' };
  if (peerVersion < self.version) {
    if (peerVersion >= self.accepts.oldest) return { accepted: true, why: 'older peer within the skew' };
    return {
      accepted: false,
      why: 'peer too old',
      reason: `the peer speaks contract ${peerVersion}; this service speaks ${self.version} and accepts ${formatContractRange(self.accepts)}`,
    };
  }
  const theirs = contractClaim(peerVersion).accepts;
  if (theirs.oldest <= self.version) return { accepted: true, why: 'newer peer within the skew' };
  return {
    accepted: false,
    why: 'peer too new',
    reason: `the peer speaks contract ${peerVersion}, which accepts ${formatContractRange(theirs)}; this service speaks ${self.version} and accepts ${formatContractRange(self.accepts)}`,
  };
}

/**
 * A contract version as a header or a variable carries it: a positive
 * integer, else undefined (a peer that announces nothing readable is judged
 * by its messages' types alone).
 */
export function parseContractVersion(raw: string | undefined): number | undefined {
  if (raw === undefined || !/^[1-9][0-9]{0,5}$/.test(raw.trim())) return undefined;
  return Number(raw.trim());
}

/** A message `type` taken apart: `kubelet.v1.work_done` is kind `work_done`, version 1. */
export interface MessageTypeName {
  kind: string;
  version: number;
}

const TYPE_NAME = /^kubelet\.v([1-9][0-9]*)\.([a-z][a-z0-9_]*)$/;

export function parseMessageType(type: unknown): MessageTypeName | undefined {
  if (typeof type !== 'string') return undefined;
  const m = TYPE_NAME.exec(type);
  return m ? { kind: m[2] ?? '', version: Number(m[1]) } : undefined;
}

/**
 * How a message of type `got` reads where a `expected` is due, when they
 * differ: the same kind at a version this build does not read (refused),
 * a kind this build does not know at all (ignored), a kind it knows but
 * not here (refused: sent on the wrong subject), or no type name at all.
 * `readable` lists, per kind, the versions this build reads.
 */
export type TypeMismatch =
  | { refusal: 'unsupported-version'; kind: string; version: number; reads: readonly number[] }
  | { refusal: 'unknown-kind'; kind: string; version: number }
  | { refusal: 'wrong-kind'; kind: string; version: number }
  | { refusal: 'no-type' };

export function classifyTypeMismatch(expected: MessageTypeName, got: unknown, readable: ReadonlyMap<string, readonly number[]>): TypeMismatch {
  const name = parseMessageType(got);
  if (!name) return { refusal: 'no-type' };
  if (name.kind === expected.kind) return { refusal: 'unsupported-version', kind: name.kind, version: name.version, reads: readable.get(name.kind) ?? [expected.version] };
  if (!readable.has(name.kind)) return { refusal: 'unknown-kind', kind: name.kind, version: name.version };
  return { refusal: 'wrong-kind', kind: name.kind, version: name.version };
}

/**
 * KV records (state.ts) carry their schema version in `recordVersion`; absent means 1,
 * the records written before the policy. A reader reads every version from
 * its contract's oldest accepted to its own (RECORD_VERSIONS), and refuses
 * the others with a reason — keeping what it had (a refused `pods` record
 * must never read as a pod that is gone).
 */
export const RECORD_VERSION_FIELD = 'recordVersion';

/** The record versions this build reads: today every record is at version 1. */
export const RECORD_VERSIONS: readonly number[] = [1];

export type RecordJudgement = { accepted: true; version: number } | { accepted: false; version: unknown; reason: string };

export function judgeRecordVersion(record: unknown, reads: readonly number[] = RECORD_VERSIONS): RecordJudgement {
  if (typeof record !== 'object' || record === null || Array.isArray(record)) return { accepted: false, version: undefined, reason: 'the record is not a JSON object' };
  const v = (record as Record<string, unknown>)[RECORD_VERSION_FIELD];
  const version = v === undefined ? 1 : v;
  if (typeof version === 'number' && reads.includes(version)) return { accepted: true, version };
  return { accepted: false, version, reason: `record version ${JSON.stringify(version)} is not one this service reads (${reads.join(', ')})` };
}

/** A KV record of a version this service does not read: refused, and the reader keeps what it had. */
export class RecordVersionError extends Error {
  constructor(
    readonly key: string,
    readonly reason: string,
  ) {
    super(`${key}: ${reason} (docs/adr/0034-version-skew-policy.md)`);
    this.name = 'RecordVersionError';
  }
}

/** Parses a KV value as a record of a version this build reads; throws RecordVersionError (or the JSON SyntaxError). */
export function decodeRecord<T>(key: string, text: string, reads: readonly number[] = RECORD_VERSIONS): T {
  const value: unknown = JSON.parse(text);
  const judged = judgeRecordVersion(value, reads);
  if (!judged.accepted) throw new RecordVersionError(key, judged.reason);
  return value as T;
}

/**
 * The record a writer puts back where it read `previous`: `next`, plus the
 * fields of `previous` this build does not know (not in `known`), so that
 * what a newer writer added survives a rewrite by an older one during an
 * upgrade or a downgrade. A field this build knows and `next` leaves out
 * stays out: that is how a writer clears it.
 */
export function rewriteRecord<T extends object>(previous: unknown, next: T, known: Readonly<Record<string, unknown>>): T {
  if (typeof previous !== 'object' || previous === null || Array.isArray(previous)) return next;
  const kept: Record<string, unknown> = {};
  for (const [field, value] of Object.entries(previous)) if (!(field in known) && field !== RECORD_VERSION_FIELD) kept[field] = value;
  return Object.keys(kept).length === 0 ? next : { ...kept, ...next };
}
