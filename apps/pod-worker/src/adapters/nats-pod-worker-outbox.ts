import { MessageTypes, Subjects, type Pod, type ProberCommandMessage, type ProberVerb, type StatusCommandMessage, type StatusVerb } from '@app/contracts';
import type { NatsBus } from '@app/nats';
import { PodWorkerOutbox } from '../ports.js';

/** statusManager calls (`kubelet.<node>.status.<verb>.<uid>`) and probeManager calls (`kubelet.<node>.prober.<verb>`). */
export class NatsPodWorkerOutbox extends PodWorkerOutbox {
  constructor(
    private readonly bus: NatsBus,
    private readonly node: string,
  ) {
    super();
  }
  status(verb: StatusVerb, pod: Pod, args: Record<string, unknown>): void {
    const uid = pod.metadata.uid ?? '';
    const msg: StatusCommandMessage = {
      type: MessageTypes.statusCommand,
      podUid: uid,
      args: {
        ...args,
        podName: pod.metadata.name,
        podNamespace: pod.metadata.namespace,
        // The status manager needs them when the pod's record is already gone from
        // the pods bucket (a static pod's last TerminatePod): static pods never get
        // a terminal phase, and only the config.source annotation says it is one.
        ...(pod.metadata.annotations ? { podAnnotations: pod.metadata.annotations } : {}),
      },
    };
    this.bus.publish(Subjects.status.build(this.node, verb, uid), msg, { podUid: uid });
  }
  prober(verb: ProberVerb, pod: Pod): void {
    const msg: ProberCommandMessage = { type: MessageTypes.proberCommand, pods: [pod] };
    this.bus.publish(Subjects.prober.build(this.node, verb), msg, { podUid: pod.metadata.uid ?? '' });
  }
}
