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
} from '@app/contracts';
import type { LeaderFence } from '@app/leader-election';
import type { NatsBus } from '@app/nats';
import { SyncLoopOutbox } from '../ports.js';

/**
 * What the sync loop sends: work by shard, statusManager and probeManager
 * calls, and its one request (the sources' listings). Only the leader sends:
 * each message carries its term's fencing token (Kubelet-Leader-Revision,
 * which the pod workers check on work), and is refused (NotLeaderError) once
 * this instance may no longer act as leader.
 */
export class NatsSyncLoopOutbox extends SyncLoopOutbox {
  constructor(
    private readonly bus: NatsBus,
    private readonly node: string,
    private readonly shards: number,
    private readonly fence: LeaderFence,
    private readonly onDispatch?: (updateType: SyncPodType) => void,
  ) {
    super();
  }

  dispatch(pod: Pod, updateType: SyncPodType, startTime: Date, killPodOptions?: KillPodOptions, runningPodOnly = false): void {
    const uid = pod.metadata.uid ?? '';
    const leaderRevision = this.fence.check('dispatch work');
    const msg: UpdatePodOptionsMessage = {
      type: MessageTypes.updatePodOptions,
      updateType,
      startTime: startTime.toISOString(),
      pod,
      ...(killPodOptions && Object.keys(killPodOptions).length > 0 ? { killPodOptions } : {}),
      ...(runningPodOnly ? { runningPodOnly } : {}),
    };
    this.bus.publish(Subjects.work.build(this.node, shardOf(uid, this.shards), uid), msg, { podUid: uid, leaderRevision });
    this.onDispatch?.(updateType);
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
