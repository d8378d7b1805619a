import { Subjects, type PodLifecycleEventMessage } from '@app/contracts';
import type { LeaderFence } from '@app/leader-election';
import type { NatsBus } from '@app/nats';
import { PlegEventSink } from '../ports.js';

/** plegCh on NATS: `kubelet.<node>.pleg.<uid>`; the leader's only, with its fencing token (Kubelet-Leader-Revision). */
export class NatsPlegEventSink extends PlegEventSink {
  constructor(
    private readonly bus: NatsBus,
    private readonly node: string,
    private readonly fence: LeaderFence,
  ) {
    super();
  }
  publish(event: PodLifecycleEventMessage): boolean {
    const leaderRevision = this.fence.fencingToken;
    if (leaderRevision === undefined) return false;
    try {
      this.bus.publish(Subjects.pleg.build(this.node, event.id), event, { podUid: event.id, leaderRevision });
      return true;
    } catch {
      return false;
    }
  }
}
