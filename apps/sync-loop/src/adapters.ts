/** The sync loop's ports on KV, NATS and the CRI. */
import {
  MessageTypes,
  Subjects,
  podEvent,
  shardOf,
  type KillPodOptions,
  type Pod,
  type PodRecord,
  type PodStatus,
  type PodSyncStatusRecord,
  type ProberCommandMessage,
  type ProberVerb,
  type SourcesSnapshotMessage,
  type StatusCommandMessage,
  type StatusVerb,
  type SyncPodType,
  type UpdatePodOptionsMessage,
  type VersionedPodStatusRecord,
  type WorkQueueRecord,
} from '@app/contracts';
import type { CriRuntime } from '@app/cri';
import { KubeletLabels } from '@app/kube';
import { kvKey, readEntries, type KV, type NatsBus } from '@app/nats';
import { NodeState, PodStore, RuntimeView, SyncLoopOutbox, type RuntimeContainer, type RuntimePod } from './ports.js';

export class KvPodStore extends PodStore {
  constructor(
    private readonly kv: KV,
    private readonly node: string,
  ) {
    super();
  }
  async loadPods(): Promise<PodRecord[]> {
    return [...(await readEntries<PodRecord>(this.kv, kvKey(this.node, 'pod'))).values()];
  }
  async putPod(record: PodRecord): Promise<void> {
    await this.kv.put(kvKey(this.node, 'pod', record.pod.metadata.uid ?? ''), JSON.stringify(record));
  }
  async deletePod(uid: string): Promise<void> {
    await this.kv.delete(kvKey(this.node, 'pod', uid));
  }
  async loadQueue(): Promise<Map<string, number>> {
    const q = await readEntries<WorkQueueRecord>(this.kv, kvKey(this.node, 'queue'));
    return new Map([...q].map(([uid, r]) => [uid, r.dueAt]));
  }
  async putQueue(uid: string, dueAt: number): Promise<void> {
    await this.kv.put(kvKey(this.node, 'queue', uid), JSON.stringify({ dueAt } satisfies WorkQueueRecord));
  }
  async deleteQueue(uid: string): Promise<void> {
    await this.kv.delete(kvKey(this.node, 'queue', uid));
  }
}

export class KvNodeState extends NodeState {
  constructor(
    private readonly workers: KV,
    private readonly statuses: KV,
    private readonly node: string,
  ) {
    super();
  }
  async workerStates(): Promise<Map<string, PodSyncStatusRecord>> {
    return readEntries<PodSyncStatusRecord>(this.workers, kvKey(this.node));
  }
  async podStatuses(): Promise<Map<string, PodStatus>> {
    const all = await readEntries<VersionedPodStatusRecord>(this.statuses, kvKey(this.node));
    return new Map([...all].map(([uid, r]) => [uid, r.status]));
  }
}

export class CriRuntimeView extends RuntimeView {
  constructor(
    private readonly cri: CriRuntime,
    private readonly node: string,
  ) {
    super();
  }
  /** The runtime pods this node's stack made (KubeletLabels.node): never another stack's. */
  async pods(): Promise<RuntimePod[]> {
    const mine = { labelSelector: { [KubeletLabels.node]: this.node } };
    const [sandboxes, containers] = await Promise.all([this.cri.runtime('ListPodSandbox', { filter: mine }), this.cri.runtime('ListContainers', { filter: mine })]);
    const byUid = new Map<string, RuntimePod>();
    for (const sb of sandboxes.items) {
      const uid = sb.labels[KubeletLabels.podUid] ?? sb.metadata?.uid;
      if (!uid) continue;
      const rp = byUid.get(uid) ?? { uid, name: sb.labels[KubeletLabels.podName] ?? sb.metadata?.name ?? '', namespace: sb.labels[KubeletLabels.podNamespace] ?? sb.metadata?.namespace ?? '', running: false };
      rp.running ||= sb.state === 'SANDBOX_READY';
      byUid.set(uid, rp);
    }
    for (const c of containers.containers) {
      const uid = c.labels[KubeletLabels.podUid];
      if (!uid) continue;
      const rp = byUid.get(uid) ?? { uid, name: c.labels[KubeletLabels.podName] ?? '', namespace: c.labels[KubeletLabels.podNamespace] ?? '', running: false };
      rp.running ||= c.state === 'CONTAINER_RUNNING';
      byUid.set(uid, rp);
    }
    return [...byUid.values()];
  }
  async containersOf(uid: string): Promise<RuntimeContainer[]> {
    const res = await this.cri.runtime('ListContainers', { filter: { labelSelector: { [KubeletLabels.podUid]: uid, [KubeletLabels.node]: this.node } } });
    return res.containers.map((c) => ({ id: c.id, name: c.labels[KubeletLabels.containerName] ?? c.metadata?.name ?? '', state: c.state, createdAt: Number(c.createdAt) / 1e6 }));
  }
  async removeContainer(id: string): Promise<void> {
    await this.cri.runtime('RemoveContainer', { containerId: id });
  }
}

export class NatsSyncLoopOutbox extends SyncLoopOutbox {
  constructor(
    private readonly bus: NatsBus,
    private readonly node: string,
    private readonly shards: number,
    private readonly onDispatch?: (updateType: SyncPodType) => void,
  ) {
    super();
  }

  dispatch(pod: Pod, updateType: SyncPodType, startTime: Date, killPodOptions?: KillPodOptions, runningPodOnly = false): void {
    const uid = pod.metadata.uid ?? '';
    const msg: UpdatePodOptionsMessage = {
      type: MessageTypes.updatePodOptions,
      updateType,
      startTime: startTime.toISOString(),
      pod,
      ...(killPodOptions && Object.keys(killPodOptions).length > 0 ? { killPodOptions } : {}),
      ...(runningPodOnly ? { runningPodOnly } : {}),
    };
    this.bus.publish(Subjects.work.build(this.node, shardOf(uid, this.shards), uid), msg, { podUid: uid });
    this.onDispatch?.(updateType);
  }

  status(verb: StatusVerb, uid: string, args: Record<string, unknown>): void {
    const msg: StatusCommandMessage = { type: MessageTypes.statusCommand, podUid: uid, args };
    this.bus.publish(Subjects.status.build(this.node, verb, uid), msg, { podUid: uid });
  }

  prober(verb: ProberVerb, pods: Pod[], podUids?: string[]): void {
    const msg: ProberCommandMessage = { type: MessageTypes.proberCommand, pods, ...(podUids ? { podUids } : {}) };
    this.bus.publish(Subjects.prober.build(this.node, verb), msg);
  }

  event(pod: Pod, type: 'Normal' | 'Warning', reason: string, message: string): void {
    const uid = pod.metadata.uid ?? '';
    this.bus.publish(Subjects.events.build(this.node, uid), podEvent(pod, type, reason, message, this.node), { podUid: uid });
  }

  async sourcesSnapshot(): Promise<SourcesSnapshotMessage | undefined> {
    try {
      return await this.bus.request<SourcesSnapshotMessage>(Subjects.sourcesSnapshot.build(this.node), {}, { timeoutMs: 5000 });
    } catch {
      return undefined;
    }
  }
}
