import type { Clock } from '@app/clock';
import type { PodRecord } from '@app/contracts';
import { JsonKvStore, desiredPodsStore, type JsonKv, type KvMirror } from '@app/nats';
import type { Logger } from '@app/observability';
import { DesiredPods } from '../ports.js';

/** The sync loop's `pods` bucket, read only: `<node>.pod.<uid>`; kept in memory by one watch from start() on. */
export class KvDesiredPods extends DesiredPods {
  private readonly pods: JsonKvStore<PodRecord>;
  private readonly mirror: KvMirror<PodRecord>;

  constructor(kv: JsonKv, node: string, clock: Clock, logger: Logger) {
    super();
    this.pods = desiredPodsStore(kv, node);
    this.mirror = this.pods.mirror({ clock, logger, bucket: 'pods' });
  }
  /** Opens the watch; resolves once the mirror holds what the bucket held. */
  start(): Promise<void> {
    return this.mirror.start();
  }
  stop(): void {
    this.mirror.stop();
  }
  all(): Promise<Map<string, PodRecord>> {
    return this.pods.entries();
  }
  mirrored(): Map<string, PodRecord> {
    return this.mirror.entries();
  }
  get(uid: string): Promise<PodRecord | undefined> {
    return this.pods.get(uid);
  }
}
