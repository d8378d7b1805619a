import type { PodCacheGlobal } from '@app/contracts';
import type { CriRuntime, StatusResponse } from '@app/cri';
import { JsonKvStore, type JsonKv } from '@app/nats';
import { NodeHealth } from '@app/kube';

/**
 * runtimeState's inputs: the runtime's Status through the CRI; the PLEG's last
 * relist from the `pod-cache` bucket's `<node>.global` (read only). Used by
 * sync-loop (its health gate) and status-manager (the Node's Ready condition).
 */
export class CriKvNodeHealth extends NodeHealth {
  private readonly podCache: JsonKvStore<PodCacheGlobal>;

  constructor(
    private readonly cri: CriRuntime,
    podCache: JsonKv,
    node: string,
  ) {
    super();
    this.podCache = new JsonKvStore(podCache, node);
  }
  runtimeStatus(): Promise<StatusResponse> {
    return this.cri.runtime('Status', { verbose: false });
  }
  plegRelist(): Promise<PodCacheGlobal | undefined> {
    return this.podCache.get('global');
  }
}
