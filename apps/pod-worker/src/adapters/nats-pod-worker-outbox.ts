import { MessageTypes, Subjects, type Pod, type ProberCommandMessage, type ProberVerb, type StatusCommandMessage, type StatusVerb } from '@app/contracts';
import type { NatsBus } from '@app/nats';
import type { Logger } from '@app/observability';
import { PodWorkerOutbox } from '../ports.js';
import type { ShardFences } from '../shards.js';

/**
 * statusManager calls (`kubelet.<node>.status.<verb>.<uid>`) and
 * probeManager calls (`kubelet.<node>.prober.<verb>`). Neither is sent for
 * a pod unless the fence of its shard holds: a stalled replica does not
 * speak for a pod another one owns now (dropped with a log line).
 */
export class NatsPodWorkerOutbox extends PodWorkerOutbox {
  constructor(
    private readonly bus: NatsBus,
    private readonly node: string,
    private readonly fenced?: { fences: Pick<ShardFences, 'forPod'>; logger: Logger },
  ) {
    super();
  }
  /** Whether this replica may speak for the pod now. */
  private mayAct(uid: string, what: string): boolean {
    if (!this.fenced || this.fenced.fences.forPod(uid).fencingToken !== undefined) return true;
    this.fenced.logger.warn({ podUid: uid, what }, 'did not send: the pod\'s shard lease may be another replica\'s by now');
    return false;
  }
  status(verb: StatusVerb, pod: Pod, args: Record<string, unknown>): void {
    const uid = pod.metadata.uid ?? '';
    if (!this.mayAct(uid, verb)) return;
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
    if (!this.mayAct(pod.metadata.uid ?? '', verb)) return;
    const msg: ProberCommandMessage = { type: MessageTypes.proberCommand, pods: [pod] };
    this.bus.publish(Subjects.prober.build(this.node, verb), msg, { podUid: pod.metadata.uid ?? '' });
  }
}
