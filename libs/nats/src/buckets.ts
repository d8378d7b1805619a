/**
 * The JetStream KV buckets of DESIGN.md ("State: JetStream KV, one writer per
 * bucket"). Keys start with the node token, so one NATS can serve several
 * nodes. `ensureBuckets` creates a bucket or binds to the existing one.
 */
import { Kvm, type KV } from '@nats-io/kv';
import type { NatsConnection } from '@nats-io/transport-node';
import { nodeToken } from '@app/contracts';

export type { KV, KvEntry, KvWatchEntry } from '@nats-io/kv';

export const BUCKETS = {
  /** desired pods (podManager), by UID. Writer: sync-loop. */
  pods: { name: 'pods', history: 1, writer: 'sync-loop' },
  /** runtime pod status + timestamp (podCache). Writer: pleg. */
  podCache: { name: 'pod-cache', history: 1, writer: 'pleg' },
  /** versioned API pod status. Writer: status-manager. */
  podStatus: { name: 'pod-status', history: 1, writer: 'status-manager' },
  /** per-pod sync status (podSyncStatuses). Writer: the pod-worker owning the shard. */
  workers: { name: 'workers', history: 1, writer: 'pod-worker' },
  /** each probe worker's latest result (the results managers), by `<uid>.<container>.<probeType>`. Writer: prober. */
  probeResults: { name: 'probe-results', history: 1, writer: 'prober' },
  /** leader and shard ownership, by compare-and-set. */
  leases: { name: 'leases', history: 1, writer: 'whoever wins the compare-and-set' },
} as const;
export type BucketId = keyof typeof BUCKETS;

/** A KV key for this node: `<node>.<part>.<part>...`. */
export function kvKey(node: string, ...parts: string[]): string {
  return [nodeToken(node), ...parts].join('.');
}

export async function ensureBuckets<const B extends readonly BucketId[]>(
  nc: NatsConnection,
  ids: B,
): Promise<{ [K in B[number]]: KV }> {
  const kvm = new Kvm(nc);
  const out: Partial<Record<BucketId, KV>> = {};
  for (const id of ids) {
    const spec = BUCKETS[id];
    out[id] = await kvm.create(spec.name, { history: spec.history, description: `kubelet-split ${id}; writer: ${spec.writer}` });
  }
  return out as { [K in B[number]]: KV };
}
