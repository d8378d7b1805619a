import { nodePressureKey, type NodePressureRecord } from '@app/contracts';
import type { JsonKv } from '@app/nats';
import { NodePressureView } from '../ports.js';

/** `<node>.node-pressure` in the `pods` bucket (the sync loop's eviction manager writes it), read only. */
export class KvNodePressureView extends NodePressureView {
  constructor(
    private readonly kv: JsonKv,
    private readonly node: string,
  ) {
    super();
  }
  async read(): Promise<NodePressureRecord | undefined> {
    const e = await this.kv.get(nodePressureKey(this.node));
    return e && e.operation === 'PUT' && e.value.length > 0 ? (JSON.parse(new TextDecoder().decode(e.value)) as NodePressureRecord) : undefined;
  }
}
