/** The PLEG's ports on KV, NATS and prom-client. */
import { Subjects, type PodCacheEntry, type PodCacheGlobal, type PodLifecycleEventMessage } from '@app/contracts';
import { kvKey, readEntries, readEntry, type KV, type NatsBus } from '@app/nats';
import { Counter, Gauge, Histogram, type Registry } from '@app/observability';
import { podCacheGlobalKey, podCacheKey } from '@app/pod-cache';
import { PlegEventSink, PlegMetrics, PodCacheStore } from './ports.js';

export class KvPodCacheStore extends PodCacheStore {
  constructor(
    private readonly kv: KV,
    private readonly node: string,
  ) {
    super();
  }
  async load(): Promise<{ entries: PodCacheEntry[]; global: number }> {
    const entries = [...(await readEntries<PodCacheEntry>(this.kv, kvKey(this.node, 'pod'))).values()];
    const global = (await readEntry<PodCacheGlobal>(this.kv, podCacheGlobalKey(this.node)))?.timestamp ?? 0;
    return { entries, global };
  }
  async set(entry: PodCacheEntry): Promise<void> {
    await this.kv.put(podCacheKey(this.node, entry.uid), JSON.stringify(entry));
  }
  async delete(uid: string): Promise<void> {
    await this.kv.delete(podCacheKey(this.node, uid));
  }
  async updateTime(timestamp: number): Promise<void> {
    await this.kv.put(podCacheGlobalKey(this.node), JSON.stringify({ timestamp } satisfies PodCacheGlobal));
  }
}

export class NatsPlegEventSink extends PlegEventSink {
  constructor(
    private readonly bus: NatsBus,
    private readonly node: string,
  ) {
    super();
  }
  publish(event: PodLifecycleEventMessage): boolean {
    try {
      this.bus.publish(Subjects.pleg.build(this.node, event.id), event, { podUid: event.id });
      return true;
    } catch {
      return false;
    }
  }
}

/** The kubelet's PLEG metrics (pkg/kubelet/metrics). */
export class PromPlegMetrics extends PlegMetrics {
  private readonly duration: Histogram;
  private readonly interval: Histogram;
  private readonly lastSeen: Gauge;
  private readonly discards: Counter;

  constructor(registry: Registry) {
    super();
    const registers = [registry];
    const buckets = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];
    this.duration = new Histogram({ name: 'kubelet_pleg_relist_duration_seconds', help: 'Duration in seconds for relisting pods in PLEG.', buckets, registers });
    this.interval = new Histogram({ name: 'kubelet_pleg_relist_interval_seconds', help: 'Interval in seconds between relisting in PLEG.', buckets, registers });
    this.lastSeen = new Gauge({ name: 'kubelet_pleg_last_seen_seconds', help: 'Timestamp in seconds when PLEG was last seen active.', registers });
    this.discards = new Counter({ name: 'kubelet_pleg_discard_events', help: 'The number of discard events in PLEG.', registers });
  }

  relisted(durationSeconds: number, intervalSeconds: number | undefined, at: number): void {
    this.duration.observe(durationSeconds);
    if (intervalSeconds !== undefined) this.interval.observe(intervalSeconds);
    this.lastSeen.set(at / 1000);
  }

  discarded(count: number): void {
    this.discards.inc(count);
  }
}
