import { syncLoopMonitorKey, type SyncLoopMonitorRecord } from '@app/contracts';
import type { JsonKv } from '@app/nats';
import type { LeaderFence } from '@app/leader-election';
import { SyncLoopMonitorStore } from '../ports.js';

/** `<node>.sync-loop-monitor` in the `pods` bucket; the leader's write only (NotLeaderError otherwise). */
export class KvSyncLoopMonitorStore extends SyncLoopMonitorStore {
  constructor(
    private readonly kv: Pick<JsonKv, 'put'>,
    private readonly node: string,
    private readonly fence: LeaderFence,
  ) {
    super();
  }
  async put(record: SyncLoopMonitorRecord): Promise<void> {
    this.fence.check('write the sync loop monitor');
    await this.kv.put(syncLoopMonitorKey(this.node), JSON.stringify(record));
  }
}
