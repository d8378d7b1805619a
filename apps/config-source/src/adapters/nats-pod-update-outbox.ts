import { Subjects, type PodUpdateMessage, type SourcesReadyMessage } from '@app/contracts';
import type { NatsBus } from '@app/nats';
import { PodUpdateOutbox } from '../ports.js';

export class NatsPodUpdateOutbox extends PodUpdateOutbox {
  constructor(
    private readonly bus: Pick<NatsBus, 'publish'>,
    private readonly node: string,
  ) {
    super();
  }
  podUpdate(msg: PodUpdateMessage): void {
    this.bus.publish(Subjects.podUpdate.build(this.node, msg.op), msg, msg.pods.length === 1 ? { podUid: msg.pods[0]?.metadata.uid ?? '' } : {});
  }
  sourcesReady(msg: SourcesReadyMessage): void {
    this.bus.publish(Subjects.sourcesReady.build(this.node), msg);
  }
}
