import { containerLogFile, type CriRuntime } from '@app/cri/client';
import { KubeletLabels } from '@app/kube';
import { LogRuntime, type LogContainer } from './ports.js';

/** The instances of a pod's container and their log files, through the CRI (ListContainers, ContainerStatus: reads). */
export class CriLogRuntime extends LogRuntime {
  constructor(private readonly cri: CriRuntime) {
    super();
  }
  async containersOf(pod: { namespace: string; name: string; uid: string }, name: string): Promise<LogContainer[]> {
    const labelSelector = { [KubeletLabels.podNamespace]: pod.namespace, [KubeletLabels.podName]: pod.name, [KubeletLabels.podUid]: pod.uid, [KubeletLabels.containerName]: name };
    const res = await this.cri.runtime('ListContainers', { filter: { labelSelector } });
    return res.containers.map((c) => ({ id: c.id, createdAt: Number(c.createdAt) / 1e6, state: c.state as LogContainer['state'] }));
  }
  status(id: string): Promise<{ logPath: string; running: boolean } | undefined> {
    return containerLogFile(this.cri, id);
  }
}
