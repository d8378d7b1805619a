import { MessageTypes, Subjects, decodeMessage, type PodResyncRequestMessage } from '@app/contracts';
import type { NatsBus } from '@app/nats';
import { PodResync } from '../ports.js';

/** Subjects.podResync over NATS: a request to the sync loops (a queue group: one of them answers). */
export class NatsPodResync extends PodResync {
  constructor(
    private readonly bus: Pick<NatsBus, 'request'>,
    private readonly node: string,
    private readonly timeoutMs = 2000,
  ) {
    super();
  }
  async resyncAll(reason: string): Promise<{ leading: boolean; pods: number } | undefined> {
    const req: PodResyncRequestMessage = { type: MessageTypes.podResyncRequest, reason };
    try {
      const reply = decodeMessage(MessageTypes.podResync, await this.bus.request(Subjects.podResync.build(this.node), req, { timeoutMs: this.timeoutMs }));
      return { leading: reply.leading, pods: reply.pods };
    } catch {
      return undefined;
    }
  }
}
