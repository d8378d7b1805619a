import type { Clock } from '@app/clock';
import type { PodRecord } from '@app/contracts';
import type { JsonKv, KvMirror } from '@app/nats';
import type { Logger } from '@app/observability';
import { KvPodManager, podManagerMirror } from '@app/pod-manager';
import { DesiredPods } from '../ports.js';

/** The podManager's pods (@app/pod-manager), read only; kept in memory by one watch from start() on. */
export class KvDesiredPods extends DesiredPods {
  private readonly pods: KvPodManager;
  private readonly mirror: KvMirror<PodRecord>;

  constructor(kv: JsonKv, node: string, clock: Clock, logger: Logger) {
    super();
    this.pods = new KvPodManager(kv, node);
    this.mirror = podManagerMirror(kv, node, { clock, logger });
  }
  /** Opens the watch; resolves once the mirror holds what the bucket held. */
  start(): Promise<void> {
    return this.mirror.start();
  }
  stop(): void {
    this.mirror.stop();
  }
  async all(): Promise<Map<string, PodRecord>> {
    return new Map((await this.pods.all()).map((r) => [r.pod.metadata.uid ?? '', r]));
  }
  mirrored(): Map<string, PodRecord> {
    return this.mirror.entries();
  }
  get(uid: string): Promise<PodRecord | undefined> {
    return this.pods.get(uid);
  }
}
