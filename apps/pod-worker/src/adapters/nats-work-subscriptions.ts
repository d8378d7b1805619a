import { SystemClock } from '@app/clock';
import { MessageTypes, Subjects, type WorkAcceptedMessage } from '@app/contracts';
import { FencingTokenFilter } from '@app/leader-election';
import { continueTrace, readMeta, replyHeaders } from '@app/tracing';
import { senderOf, type NatsConnection } from '@app/nats';
import type { Logger } from '@app/observability';
import { WorkSubscriptions } from '../ports.js';

const encoder = new TextEncoder();

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
 * highest seen) is dropped here, before it reaches a pod worker. Work
 * taken is answered when it came as a request (sync-loop's work delivery),
 * once the pod worker stored it: a failed save leaves it unanswered.
 */
export class NatsWorkSubscriptions extends WorkSubscriptions {
  private readonly fence: FencingTokenFilter;

  constructor(private readonly deps: NatsWorkSubscriptionsDeps) {
    super();
    this.fence = deps.fence ?? new FencingTokenFilter(new SystemClock());
  }

  follow(shard: number, onMessage: (subject: string, data: Uint8Array) => boolean | Promise<boolean>): () => void {
    const subject = Subjects.work.wildcard(this.deps.node, shard);
    const sub = this.deps.nc.subscribe(subject, {
      callback: (err, msg) => {
        if (err) return;
        const meta = readMeta(msg.headers);
        const verdict = this.fence.accept(meta.leaderRevision);
        if (!verdict.ok) {
          this.deps.logger?.warn({ subject: msg.subject, token: meta.leaderRevision, highest: verdict.highest }, 'dropped work from a deposed sync-loop leader');
          return;
        }
        let taken: boolean | Promise<boolean>;
        try {
          taken = continueTrace(msg, () => onMessage(msg.subject, msg.data), this.deps.logger);
        } catch (e) {
          taken = Promise.reject(e instanceof Error ? e : new Error(String(e)));
        }
        // A request (dispatchWork from sync-loop) is answered once the work is ours and stored; left unanswered, it is sent again.
        void Promise.resolve(taken).then(
          (ok) => {
            if (!ok || !msg.reply) return;
            const accepted: WorkAcceptedMessage = { type: MessageTypes.workAccepted, podUid: Subjects.work.parse(msg.subject)?.uid ?? meta.podUid ?? '', shard };
            const sender = senderOf(this.deps.nc);
            msg.respond(encoder.encode(JSON.stringify(accepted)), { headers: replyHeaders({ service: 'pod-worker', ...(sender ? { sender } : {}) }) });
          },
          (e: unknown) => this.deps.logger?.warn({ subject: msg.subject, err: (e as Error).message }, 'work not taken: left unanswered, the sync loop sends it again'),
        );
      },
    });
    this.deps.addSubjects([subject]);
    return () => sub.unsubscribe();
  }
}
