import { syncLoopMonitorKey, type SyncLoopMonitorRecord } from '@app/contracts';
import type { JsonKv } from '@app/nats';
import { SyncLoopMonitorReader } from '../ports.js';

/** The `pods` bucket's `<node>.sync-loop-monitor`, read only (the leading sync loop writes it). */
export class KvSyncLoopMonitorReader extends SyncLoopMonitorReader {
  constructor(
    private readonly kv: Pick<JsonKv, 'get'>,
    private readonly node: string,
  ) {
    super();
  }
  async get(): Promise<SyncLoopMonitorRecord | undefined> {
    const e = await this.kv.get(syncLoopMonitorKey(this.node));
    return e && e.operation === 'PUT' && e.value.length > 0 ? (JSON.parse(new TextDecoder().decode(e.value)) as SyncLoopMonitorRecord) : undefined;
  }
}
