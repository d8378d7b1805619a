import { JsonKvStore, podStatusStore, type JsonKv } from '@app/nats';
import type { LeaderFence } from '@app/leader-election';
import { StatusStore } from '../ports.js';
import type { StatusEntry } from '../pod-status-versions.js';

/** The `pod-status` bucket: `<node>.<uid>`. Writes are the leader's only: refused (NotLeaderError) once this instance may no longer act as leader. */
export class KvStatusStore extends StatusStore {
  private readonly statuses: JsonKvStore<StatusEntry>;

  constructor(
    kv: JsonKv,
    node: string,
    private readonly fence: LeaderFence,
  ) {
    super();
    this.statuses = podStatusStore(kv, node);
  }
  async load(): Promise<[string, StatusEntry][]> {
    return [...(await this.statuses.entries())];
  }
  async put(uid: string, entry: StatusEntry): Promise<void> {
    this.fence.check('write the pod-status bucket');
    return this.statuses.put(uid, entry);
  }
  async delete(uid: string): Promise<void> {
    this.fence.check('write the pod-status bucket');
    return this.statuses.delete(uid);
  }
}
