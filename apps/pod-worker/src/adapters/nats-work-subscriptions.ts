import { Subjects } from '@app/contracts';
import type { NatsConnection } from '@app/nats';
import { WorkSubscriptions } from '../ports.js';

/** One plain subscription per owned shard, on `kubelet.<node>.work.<shard>.*` (no queue group: a shard has one owner). */
export class NatsWorkSubscriptions extends WorkSubscriptions {
  constructor(
    private readonly nc: NatsConnection,
    private readonly node: string,
    /** Records the subject among the service's subjects (ServiceContext.addSubjects). */
    private readonly addSubjects: (subjects: readonly string[]) => void,
  ) {
    super();
  }

  follow(shard: number, onMessage: (subject: string, data: Uint8Array) => void): () => void {
    const subject = Subjects.work.wildcard(this.node, shard);
    const sub = this.nc.subscribe(subject, {
      callback: (err, msg) => {
        if (!err) onMessage(msg.subject, msg.data);
      },
    });
    this.addSubjects([subject]);
    return () => sub.unsubscribe();
  }
}
