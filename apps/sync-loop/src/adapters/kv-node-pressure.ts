import { nodePressureKey, type NodePressureRecord } from '@app/contracts';
import type { JsonKv } from '@app/nats';
import type { LeaderFence } from '@app/leader-election';
import { NodePressureStore } from '../ports.js';

/** `<node>.node-pressure` in the `pods` bucket; the leader's write only (NotLeaderError otherwise). */
export class KvNodePressureStore extends NodePressureStore {
  constructor(
    private readonly kv: JsonKv,
    private readonly node: string,
    private readonly fence: LeaderFence,
  ) {
    super();
  }
  async get(): Promise<NodePressureRecord | undefined> {
    const e = await this.kv.get(nodePressureKey(this.node));
    return e && e.operation === 'PUT' && e.value.length > 0 ? (JSON.parse(new TextDecoder().decode(e.value)) as NodePressureRecord) : undefined;
  }
  async put(record: NodePressureRecord): Promise<void> {
    this.fence.check('write the pods bucket');
    await this.kv.put(nodePressureKey(this.node), JSON.stringify(record));
  }
}
