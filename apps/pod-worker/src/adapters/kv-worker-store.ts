import type { Clock } from '@app/clock';
import { POD_SYNC_STATUS_FIELDS, rewriteRecord, type PodSyncStatusRecord } from '@app/contracts';
import { podWorkersStore, type JsonKv, type JsonKvStore, type KvMirror } from '@app/nats';
import type { Logger } from '@app/observability';
import { WorkerStore, type WorkerRecords } from '../ports.js';
import type { ShardFences } from '../shards.js';

/** What a KvWorkerStore is built from. */
export interface KvWorkerStoreDeps {
  kv: JsonKv;
  node: string;
  clock: Clock;
  logger: Logger;
  /** Each write is refused (NotLeaderError) unless the fence of the pod's shard holds. Absent: not fenced. */
  fences?: Pick<ShardFences, 'forPod'>;
}

/**
 * The `workers` bucket: `<node>.<uid>`; kept in memory by one watch from
 * start() on, this replica's own writes noted in it at once. Only the
 * owner of a pod's shard writes its record, while its lease holds.
 */
export class KvWorkerStore extends WorkerStore implements WorkerRecords {
  private readonly records: JsonKvStore<PodSyncStatusRecord>;
  private readonly mirror: KvMirror<PodSyncStatusRecord>;
  private readonly fences: Pick<ShardFences, 'forPod'> | undefined;

  constructor(deps: KvWorkerStoreDeps) {
    super();
    this.records = podWorkersStore(deps.kv, deps.node);
    this.mirror = this.records.mirror({ clock: deps.clock, logger: deps.logger, bucket: 'workers' });
    this.fences = deps.fences;
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
    this.fences?.forPod(uid).check(`write the workers record of pod ${uid}`);
    // A copy: the caller may change its record before the next save. Fields a newer pod worker wrote and this one does not know are kept (ADR 0034).
    const saved = rewriteRecord(this.mirror.ready ? this.mirror.get(uid) : undefined, structuredClone(record), POD_SYNC_STATUS_FIELDS);
    this.mirror.noteWrite(uid, saved, await this.records.write(uid, saved));
  }
  async delete(uid: string): Promise<void> {
    this.fences?.forPod(uid).check(`delete the workers record of pod ${uid}`);
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
