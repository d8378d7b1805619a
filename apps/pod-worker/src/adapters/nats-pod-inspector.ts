import { MessageTypes, Subjects, type InspectPodMessage } from '@app/contracts';
import type { NatsBus } from '@app/nats';
import { PodInspector } from '../ports.js';

/** The PLEG's per-pod inspection: `kubelet.<node>.pleg.inspect.<uid>`, published (the PLEG's leader acts on it, a standby ignores it). */
export class NatsPodInspector extends PodInspector {
  constructor(
    private readonly bus: NatsBus,
    private readonly node: string,
  ) {
    super();
  }
  inspect(uid: string, syncEnd: number): void {
    const msg: InspectPodMessage = { type: MessageTypes.inspectPod, podUid: uid, syncEnd };
    this.bus.publish(Subjects.plegInspect.build(this.node, uid), msg, { podUid: uid });
  }
}
