/** The leader lease of one service in the `leases` bucket: `<node>.leader.<service>`, JSON, written by compare-and-set only. */
import type { KV } from '@nats-io/kv';
import { LeaderLeaseStore, leaderLeaseKey, type LeaderElectionRecord, type LeaderLeaseSnapshot } from './leader-election.js';

/** What the store uses of the bucket. */
export type LeaderLeaseKv = Pick<KV, 'get' | 'create' | 'update' | 'delete'>;

const decoder = new TextDecoder();

/** The server's answer to a compare-and-set that lost (JetStream error 10071, "wrong last sequence"). */
function isLostRace(err: unknown): boolean {
  return err instanceof Error && /wrong last sequence/i.test(err.message);
}

export class KvLeaderLeaseStore extends LeaderLeaseStore {
  readonly key: string;

  constructor(
    private readonly kv: LeaderLeaseKv,
    node: string,
    service: string,
  ) {
    super();
    this.key = leaderLeaseKey(node, service);
  }

  async get(): Promise<LeaderLeaseSnapshot | undefined> {
    const e = await this.kv.get(this.key);
    if (!e) return undefined;
    if (e.operation !== 'PUT' || e.value.length === 0) return { revision: e.revision };
    return { record: JSON.parse(decoder.decode(e.value)) as LeaderElectionRecord, revision: e.revision };
  }

  async put(record: LeaderElectionRecord, revision: number): Promise<number | undefined> {
    const value = JSON.stringify(record);
    try {
      return revision === 0 ? await this.kv.create(this.key, value) : await this.kv.update(this.key, value, revision);
    } catch (err) {
      if (isLostRace(err)) return undefined;
      throw err;
    }
  }

  async release(revision: number): Promise<void> {
    try {
      await this.kv.delete(this.key, { previousSeq: revision });
    } catch (err) {
      if (!isLostRace(err)) throw err; // lost the race: the lease is someone else's already
    }
  }
}
