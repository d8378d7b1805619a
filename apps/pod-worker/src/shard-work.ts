/**
 * What owning a shard means for this replica (DESIGN.md "Scaling"): when
 * the ShardManager wins a shard's lease, the replica follows the shard's
 * work subject and resyncs the shard's admitted pods from the podManager
 * (the pods' workers resume from their records in the `workers` bucket);
 * when it loses the lease, it stops following the subject.
 */
import { Clock } from '@app/clock';
import { MessageTypes, decodeMessage, parseJson, shardOf } from '@app/contracts';
import type { Logger } from '@app/observability';
import type { PodWorkers } from './pod-workers.js';
import { DesiredPods, WorkSubscriptions } from './ports.js';

export class ShardWork {
  private readonly following = new Map<number, () => void>();

  constructor(
    private readonly workers: Pick<PodWorkers, 'updatePod'>,
    private readonly desired: DesiredPods,
    private readonly subscriptions: WorkSubscriptions,
    private readonly clock: Clock,
    private readonly logger: Logger,
    private readonly shardCount: number,
  ) {}

  /** A shard is ours: follow its work subject, and resync its pods from the podManager and the workers' records. */
  async acquire(shard: number): Promise<void> {
    this.following.set(
      shard,
      this.subscriptions.follow(shard, (subject, data) => {
        try {
          const update = decodeMessage(MessageTypes.updatePodOptions, parseJson(data));
          void this.workers.updatePod(update).catch((e: unknown) => this.logger.error({ err: (e as Error).message }, 'UpdatePod failed'));
        } catch (e) {
          this.logger.warn({ subject, err: (e as Error).message }, 'dropped a malformed work message');
        }
      }),
    );
    const resynced = await this.resync(new Set([shard]));
    this.logger.info({ shard, resynced }, 'resynced the pods of a shard');
  }

  /**
   * After a NATS outage: work sent to our shards meanwhile may be lost, so
   * every pod of the shards we follow is synced again from the podManager.
   */
  async resyncOwned(): Promise<number> {
    const resynced = await this.resync(new Set(this.following.keys()));
    this.logger.info({ shards: [...this.following.keys()], resynced }, 'resynced the pods of our shards after a NATS reconnection');
    return resynced;
  }

  private async resync(shards: Set<number>): Promise<number> {
    if (shards.size === 0) return 0;
    const resumeFrom = this.clock.now();
    let resynced = 0;
    for (const [uid, record] of await this.desired.all()) {
      if (!shards.has(shardOf(uid, this.shardCount)) || !record.admitted) continue;
      await this.workers.updatePod({ type: MessageTypes.updatePodOptions, updateType: record.terminationRequested ? 'SyncPodKill' : 'SyncPodSync', startTime: this.clock.date().toISOString(), pod: record.pod }, resumeFrom);
      resynced++;
    }
    return resynced;
  }

  /** The shard's lease is gone: stop following its work. */
  lose(shard: number): void {
    this.following.get(shard)?.();
    this.following.delete(shard);
  }
}
