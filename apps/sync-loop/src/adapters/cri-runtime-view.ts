import type { CriRuntime } from '@app/cri';
import { KubeletLabels } from '@app/kube';
import type { LeaderFence } from '@app/leader-election';
import type { GcContainer, GcSandbox } from '../gc/container-gc.js';
import { RuntimeView, type RemovedContainer, type RuntimeContainer, type RuntimePod } from '../ports.js';

/** The runtime's pods and containers, through the CRI; removing a container is the leader's only. */
export class CriRuntimeView extends RuntimeView {
  constructor(
    private readonly cri: CriRuntime,
    private readonly node: string,
    private readonly fence: LeaderFence,
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
  async inventory(): Promise<{ containers: GcContainer[]; sandboxes: GcSandbox[] }> {
    const mine = { labelSelector: { [KubeletLabels.node]: this.node } };
    const [sandboxes, containers] = await Promise.all([this.cri.runtime('ListPodSandbox', { filter: mine }), this.cri.runtime('ListContainers', { filter: mine })]);
    return {
      sandboxes: sandboxes.items.map((sb) => ({ id: sb.id, podUid: sb.labels[KubeletLabels.podUid] ?? sb.metadata?.uid ?? '', ready: sb.state === 'SANDBOX_READY', createdAt: Number(sb.createdAt) / 1e6 })),
      containers: containers.containers.map((c) => ({
        id: c.id,
        podUid: c.labels[KubeletLabels.podUid] ?? '',
        name: c.labels[KubeletLabels.containerName] ?? c.metadata?.name ?? '',
        sandboxId: c.podSandboxId,
        running: c.state === 'CONTAINER_RUNNING',
        createdAt: Number(c.createdAt) / 1e6,
      })),
    };
  }
  async removeContainer(id: string): Promise<RemovedContainer | undefined> {
    this.fence.check('remove a container');
    // The log path and the labels are only known while the container exists.
    const removed = await this.cri
      .runtime('ContainerStatus', { containerId: id })
      .then(({ status }): RemovedContainer | undefined =>
        status
          ? {
              logPath: status.logPath,
              name: status.labels[KubeletLabels.containerName] ?? status.metadata?.name ?? '',
              podName: status.labels[KubeletLabels.podName] ?? '',
              podNamespace: status.labels[KubeletLabels.podNamespace] ?? '',
            }
          : undefined,
      )
      .catch(() => undefined);
    await this.cri.runtime('RemoveContainer', { containerId: id });
    return removed;
  }
  async allPodUids(): Promise<Set<string>> {
    const sandboxes = await this.cri.runtime('ListPodSandbox', {});
    return new Set(sandboxes.items.map((sb) => sb.labels[KubeletLabels.podUid] ?? sb.metadata?.uid ?? '').filter((uid) => uid !== ''));
  }
  async removePodSandbox(id: string): Promise<void> {
    this.fence.check('remove a sandbox');
    await this.cri.runtime('RemovePodSandbox', { podSandboxId: id });
  }
}
