import { SystemClock } from '@app/clock';
import { Subjects } from '@app/contracts';
import { FencingTokenFilter } from '@app/leader-election';
import { continueTrace, readMeta } from '@app/tracing';
import type { NatsConnection } from '@app/nats';
import type { Logger } from '@app/observability';
import { WorkSubscriptions } from '../ports.js';

/** What a NatsWorkSubscriptions is built from. */
export interface NatsWorkSubscriptionsDeps {
  nc: NatsConnection;
  node: string;
  /** Records the subject among the service's subjects (ServiceContext.addSubjects). */
  addSubjects: (subjects: readonly string[]) => void;
  logger?: Logger;
  /** Shared by every shard: the sync loop's terms are node-wide. Default: one on the system clock. */
  fence?: FencingTokenFilter;
}

/**
 * One plain subscription per owned shard, on `kubelet.<node>.work.<shard>.*`
 * (no queue group: a shard has one owner). Work from a sync-loop leader that
 * was deposed (a fencing token in Kubelet-Leader-Revision lower than the
 * highest seen) is dropped here, before it reaches a pod worker.
 */
export class NatsWorkSubscriptions extends WorkSubscriptions {
  private readonly fence: FencingTokenFilter;

  constructor(private readonly deps: NatsWorkSubscriptionsDeps) {
    super();
    this.fence = deps.fence ?? new FencingTokenFilter(new SystemClock());
  }

  follow(shard: number, onMessage: (subject: string, data: Uint8Array) => void): () => void {
    const subject = Subjects.work.wildcard(this.deps.node, shard);
    const sub = this.deps.nc.subscribe(subject, {
      callback: (err, msg) => {
        if (err) return;
        const token = readMeta(msg.headers).leaderRevision;
        const verdict = this.fence.accept(token);
        if (!verdict.ok) {
          this.deps.logger?.warn({ subject: msg.subject, token, highest: verdict.highest }, 'dropped work from a deposed sync-loop leader');
          return;
        }
        continueTrace(msg, () => onMessage(msg.subject, msg.data), this.deps.logger);
      },
    });
    this.deps.addSubjects([subject]);
    return () => sub.unsubscribe();
  }
}
