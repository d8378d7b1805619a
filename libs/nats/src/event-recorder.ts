/** The EventRecorder of every service: events on `kubelet.<node>.events.<uid>` (the node's token for node events). */
import type { Clock } from '@app/clock';
import { EventRecorder, MessageTypes, Subjects, nodeToken, podEvent, type EventMessage, type EventType, type Pod } from '@app/contracts';
import type { NatsBus } from './bus.js';

export class NatsEventRecorder extends EventRecorder {
  constructor(
    private readonly bus: Pick<NatsBus, 'publish'>,
    private readonly node: string,
    private readonly clock: Clock,
  ) {
    super();
  }

  event(pod: Pod, type: EventType, reason: string, message: string, fieldPath?: string): void {
    const uid = pod.metadata.uid ?? '';
    const msg = podEvent(pod, type, reason, message, this.node, { at: this.clock.date(), ...(fieldPath ? { fieldPath } : {}) });
    this.bus.publish(Subjects.events.build(this.node, uid), msg, { podUid: uid });
  }

  nodeEvent(type: EventType, reason: string, message: string): void {
    const msg: EventMessage = {
      type: MessageTypes.event,
      involvedObject: { kind: 'Node', name: this.node, uid: this.node },
      eventType: type,
      reason,
      message,
      source: { component: 'kubelet', host: this.node },
      timestamp: this.clock.date().toISOString(),
    };
    this.bus.publish(Subjects.events.build(this.node, nodeToken(this.node)), msg);
  }
}
