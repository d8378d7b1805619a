import { nodeLabelsKey, type NodeLabelsRecord } from '@app/contracts';
import type { Clock } from '@app/clock';
import type { JsonKv } from '@app/nats';
import { NodeLabelsSink } from '../ports.js';

/** `<node>.node-labels` in the `leases` bucket: the API Node's labels, for the sync loop's admission (its only writer). */
export class KvNodeLabelsSink extends NodeLabelsSink {
  constructor(
    private readonly kv: JsonKv,
    private readonly node: string,
    private readonly clock: Clock,
  ) {
    super();
  }
  async publish(labels: Record<string, string>): Promise<void> {
    const record: NodeLabelsRecord = { observedAt: this.clock.now(), labels };
    await this.kv.put(nodeLabelsKey(this.node), JSON.stringify(record));
  }
}
