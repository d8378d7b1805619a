import type { Clock } from '@app/clock';
import type { PodSyncStatusRecord } from '@app/contracts';
import { podWorkersStore, type JsonKv, type JsonKvStore, type KvMirror } from '@app/nats';
import type { Logger } from '@app/observability';
import { WorkerStore, type WorkerRecords } from '../ports.js';

/**
 * The `workers` bucket: `<node>.<uid>`; kept in memory by one watch from
 * start() on, this replica's own writes noted in it at once.
 */
export class KvWorkerStore extends WorkerStore implements WorkerRecords {
  private readonly records: JsonKvStore<PodSyncStatusRecord>;
  private readonly mirror: KvMirror<PodSyncStatusRecord>;

  constructor(kv: JsonKv, node: string, clock: Clock, logger: Logger) {
    super();
    this.records = podWorkersStore(kv, node);
    this.mirror = this.records.mirror({ clock, logger, bucket: 'workers' });
  }
  /** Opens the watch; resolves once the mirror holds what the bucket held. */
  start(): Promise<void> {
    return this.mirror.start();
  }
  stop(): void {
    this.mirror.stop();
  }
  load(uid: string): Promise<PodSyncStatusRecord | undefined> {
    return this.records.get(uid);
  }
  async save(uid: string, record: PodSyncStatusRecord): Promise<void> {
    // A copy: the caller may change its record before the next save.
    const saved = structuredClone(record);
    this.mirror.noteWrite(uid, saved, await this.records.write(uid, saved));
  }
  async delete(uid: string): Promise<void> {
    await this.records.delete(uid);
    this.mirror.noteWrite(uid, undefined);
  }
  all(): Promise<Map<string, PodSyncStatusRecord>> {
    return this.records.entries();
  }
  mirrored(): Map<string, PodSyncStatusRecord> {
    return this.mirror.entries();
  }
}
