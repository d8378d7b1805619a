import { Subjects, type PodLifecycleEventMessage } from '@app/contracts';
import type { NatsBus } from '@app/nats';
import { PlegEventSink } from '../ports.js';

/** plegCh on NATS: `kubelet.<node>.pleg.<uid>`. */
export class NatsPlegEventSink extends PlegEventSink {
  constructor(
    private readonly bus: NatsBus,
    private readonly node: string,
  ) {
    super();
  }
  publish(event: PodLifecycleEventMessage): boolean {
    try {
      this.bus.publish(Subjects.pleg.build(this.node, event.id), event, { podUid: event.id });
      return true;
    } catch {
      return false;
    }
  }
}
