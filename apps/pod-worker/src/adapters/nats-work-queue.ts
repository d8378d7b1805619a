import { MessageTypes, Subjects, type WorkDoneMessage } from '@app/contracts';
import type { NatsBus } from '@app/nats';
import { WorkQueue } from '../ports.js';

/** completeWork: `kubelet.<node>.work.done.<uid>`, which the sync loop turns into its work queue. */
export class NatsWorkQueue extends WorkQueue {
  constructor(
    private readonly bus: NatsBus,
    private readonly node: string,
  ) {
    super();
  }
  enqueue(uid: string, afterMs: number, error?: string): void {
    const msg: WorkDoneMessage = { type: MessageTypes.workDone, podUid: uid, requeueAfterMs: afterMs, ...(error ? { error } : {}) };
    this.bus.publish(Subjects.workDone.build(this.node, uid), msg, { podUid: uid });
  }
}
