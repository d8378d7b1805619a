import {
  MessageTypes,
  Subjects,
  shardOf,
  type KillPodOptions,
  type Pod,
  type ProberCommandMessage,
  type ProberVerb,
  type SourcesSnapshotMessage,
  type StatusCommandMessage,
  type StatusVerb,
  type SyncPodType,
  type UpdatePodOptionsMessage,
  type WorkAcceptedMessage,
} from '@app/contracts';
import type { LeaderFence } from '@app/leader-election';
import type { NatsBus } from '@app/nats';
import { SyncLoopOutbox } from '../ports.js';
import type { WorkDelivery } from '../work-delivery.js';

/** What a NatsSyncLoopOutbox is built from. */
export interface NatsSyncLoopOutboxDeps {
  bus: NatsBus;
  node: string;
  shards: number;
  fence: LeaderFence;
  /** Sends each dispatch until the shard's owner accepts it (work-delivery.ts). */
  delivery: WorkDelivery;
  /** How long one try waits for the owner's answer. */
  acceptTimeoutMs: number;
  onDispatch?: (updateType: SyncPodType) => void;
}

/**
 * What the sync loop sends: work by shard, statusManager and probeManager
 * calls, and its one request (the sources' listings). Only the leader sends:
 * each message carries its term's fencing token (Kubelet-Leader-Revision,
 * which the pod workers check on work), and is refused (NotLeaderError) once
 * this instance may no longer act as leader. Work is a request the shard's
 * owner answers (`kubelet.v1.work_accepted`), sent again until one does.
 */
export class NatsSyncLoopOutbox extends SyncLoopOutbox {
  private readonly bus: NatsBus;
  private readonly node: string;
  private readonly fence: LeaderFence;

  constructor(private readonly deps: NatsSyncLoopOutboxDeps) {
    super();
    ({ bus: this.bus, node: this.node, fence: this.fence } = deps);
  }

  dispatch(pod: Pod, updateType: SyncPodType, startTime: Date, killPodOptions?: KillPodOptions, runningPodOnly = false): void {
    const uid = pod.metadata.uid ?? '';
    this.fence.check('dispatch work');
    const msg: UpdatePodOptionsMessage = {
      type: MessageTypes.updatePodOptions,
      updateType,
      startTime: startTime.toISOString(),
      pod,
      ...(killPodOptions && Object.keys(killPodOptions).length > 0 ? { killPodOptions } : {}),
      ...(runningPodOnly ? { runningPodOnly } : {}),
    };
    const subject = Subjects.work.build(this.node, shardOf(uid, this.deps.shards), uid);
    this.deps.delivery.deliver(uid, updateType, async () => {
      // Checked again at every try: a deposed leader stops sending.
      const leaderRevision = this.fence.check('dispatch work');
      try {
        const reply = await this.bus.request<WorkAcceptedMessage>(subject, msg, { timeoutMs: this.deps.acceptTimeoutMs, meta: { podUid: uid, leaderRevision } });
        return reply.type === MessageTypes.workAccepted && reply.podUid === uid;
      } catch {
        return false; // no owner (no responders), or none answered in time
      }
    }, { kill: updateType === 'SyncPodKill' });
    this.deps.onDispatch?.(updateType);
  }

  status(verb: StatusVerb, uid: string, args: Record<string, unknown>): void {
    const leaderRevision = this.fence.check(`send ${verb}`);
    const msg: StatusCommandMessage = { type: MessageTypes.statusCommand, podUid: uid, args };
    this.bus.publish(Subjects.status.build(this.node, verb, uid), msg, { podUid: uid, leaderRevision });
  }

  prober(verb: ProberVerb, pods: Pod[], podUids?: string[]): void {
    const leaderRevision = this.fence.check(`send ${verb}`);
    const msg: ProberCommandMessage = { type: MessageTypes.proberCommand, pods, ...(podUids ? { podUids } : {}) };
    this.bus.publish(Subjects.prober.build(this.node, verb), msg, { leaderRevision });
  }

  async sourcesSnapshot(): Promise<SourcesSnapshotMessage | undefined> {
    try {
      return await this.bus.request<SourcesSnapshotMessage>(Subjects.sourcesSnapshot.build(this.node), {}, { timeoutMs: 5000 });
    } catch {
      return undefined;
    }
  }
}
