import { nodeLabelsKey, type NodeLabelsRecord } from '@app/contracts';
import type { JsonKv } from '@app/nats';
import { NodeLabelsView } from '../ports.js';

/** `<node>.node-labels` in the `leases` bucket (node-status writes it), read only. */
export class KvNodeLabelsView extends NodeLabelsView {
  constructor(
    private readonly kv: JsonKv,
    private readonly node: string,
  ) {
    super();
  }
  async read(): Promise<Record<string, string> | undefined> {
    const e = await this.kv.get(nodeLabelsKey(this.node));
    return e && e.operation === 'PUT' && e.value.length > 0 ? (JSON.parse(new TextDecoder().decode(e.value)) as NodeLabelsRecord).labels : undefined;
  }
}
