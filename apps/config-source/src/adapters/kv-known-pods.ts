import { desiredPodsStore, type JsonKv } from '@app/nats';
import { KnownPods } from '../ports.js';

/** KnownPods from the sync loop's `pods` bucket, `<node>.pod.<uid>` (read only: the sync loop is its one writer). */
export class KvKnownPods extends KnownPods {
  constructor(
    private readonly kv: JsonKv,
    private readonly node: string,
  ) {
    super();
  }

  async creationTimestamps(): Promise<Map<string, string>> {
    const out = new Map<string, string>();
    for (const [uid, record] of await desiredPodsStore(this.kv, this.node).entries()) {
      const created = record.pod.metadata.creationTimestamp;
      if (created) out.set(uid, created);
    }
    return out;
  }
}
