import { containerLogFile, type CriRuntime } from '@app/cri/client';
import { KubeletLabels } from '@app/kube';
import type { LeaderFence } from '@app/leader-election';
import { ContainerLogRuntime } from '../ports.js';

/** The container log manager's runtime, through the CRI: this node's containers only; reopening a log is the leader's only. */
export class CriContainerLogRuntime extends ContainerLogRuntime {
  constructor(
    private readonly cri: CriRuntime,
    private readonly node: string,
    private readonly fence: LeaderFence,
  ) {
    super();
  }
  async runningContainers(): Promise<string[]> {
    const res = await this.cri.runtime('ListContainers', { filter: { state: { state: 'CONTAINER_RUNNING' }, labelSelector: { [KubeletLabels.node]: this.node } } });
    return res.containers.filter((c) => c.state === 'CONTAINER_RUNNING').map((c) => c.id);
  }
  containerLog(id: string): Promise<{ logPath: string; running: boolean } | undefined> {
    return containerLogFile(this.cri, id);
  }
  async reopenContainerLog(id: string): Promise<void> {
    this.fence.check('reopen a container log');
    await this.cri.runtime('ReopenContainerLog', { containerId: id });
  }
}
