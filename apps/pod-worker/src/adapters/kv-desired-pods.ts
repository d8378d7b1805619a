import type { PodRecord } from '@app/contracts';
import { JsonKvStore, desiredPodsStore, type JsonKv } from '@app/nats';
import { DesiredPods } from '../ports.js';

/** The sync loop's `pods` bucket, read only: `<node>.pod.<uid>`. */
export class KvDesiredPods extends DesiredPods {
  private readonly pods: JsonKvStore<PodRecord>;

  constructor(kv: JsonKv, node: string) {
    super();
    this.pods = desiredPodsStore(kv, node);
  }
  all(): Promise<Map<string, PodRecord>> {
    return this.pods.entries();
  }
}
