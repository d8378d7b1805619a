import { Subjects, type ProbeResultMessage } from '@app/contracts';
import type { NatsBus } from '@app/nats';
import { ResultSink } from '../ports.js';

/** The results managers' Updates(): `kubelet.<node>.probe.<type>.<uid>`. */
export class NatsResultSink extends ResultSink {
  constructor(
    private readonly bus: NatsBus,
    private readonly node: string,
  ) {
    super();
  }
  publish(msg: ProbeResultMessage): void {
    this.bus.publish(Subjects.probeResult.build(this.node, msg.probeType, msg.podUid), msg, { podUid: msg.podUid });
  }
}
