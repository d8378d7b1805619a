import { kvKey, type KV } from '@app/nats';
import { DesiredPodChanges } from '../node/ports.js';

/** A watch of `<node>.pod.>` in the sync loop's `pods` bucket (read only), updates only. */
export class KvDesiredPodChanges extends DesiredPodChanges {
  constructor(
    private readonly kv: Pick<KV, 'watch'>,
    private readonly node: string,
  ) {
    super();
  }

  async watch(onChange: () => void): Promise<() => void> {
    const iter = await this.kv.watch({ key: `${kvKey(this.node, 'pod')}.>`, include: 'updates' });
    void (async () => {
      for await (const _ of iter) onChange();
    })();
    return () => iter.stop();
  }
}
