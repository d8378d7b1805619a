import { MessageTypes, Subjects, type WorkDoneMessage } from '@app/contracts';
import type { NatsBus } from '@app/nats';
import type { Logger } from '@app/observability';
import { WorkQueue } from '../ports.js';
import type { ShardFences } from '../shards.js';

/**
 * completeWork: `kubelet.<node>.work.done.<uid>`, which the sync loop turns
 * into its work queue. Not sent unless the fence of the pod's shard holds
 * (a step that ended after the shard's lease ran out is another owner's
 * business now): dropped with a log line, never thrown into the worker.
 */
export class NatsWorkQueue extends WorkQueue {
  constructor(
    private readonly bus: NatsBus,
    private readonly node: string,
    private readonly fenced?: { fences: Pick<ShardFences, 'forPod'>; logger: Logger },
  ) {
    super();
  }
  enqueue(uid: string, afterMs: number, error?: string): void {
    if (this.fenced && this.fenced.fences.forPod(uid).fencingToken === undefined) {
      this.fenced.logger.warn({ podUid: uid }, 'did not send work-done: the pod\'s shard lease may be another replica\'s by now');
      return;
    }
    const msg: WorkDoneMessage = { type: MessageTypes.workDone, podUid: uid, requeueAfterMs: afterMs, ...(error ? { error } : {}) };
    this.bus.publish(Subjects.workDone.build(this.node, uid), msg, { podUid: uid });
  }
}
