import { mkdir } from 'node:fs/promises';
import type { Pod } from '@app/contracts';
import { PodDirectories } from '../ports.js';
import { podLogDirectory, type NodeFacts } from '../kuberuntime/runtime-config.js';
import type { VolumeFailure, VolumeManager } from '../volumemanager/volumes.js';

/** The pods' log directories, and their volumes through the volume manager. */
export class FsPodDirectories extends PodDirectories {
  constructor(
    private readonly node: NodeFacts,
    private readonly volumes: VolumeManager,
  ) {
    super();
  }
  /** Throws a VolumeMountError when a volume cannot be set up; the refreshes that failed otherwise. */
  async ensure(pod: Pod): Promise<VolumeFailure[]> {
    await mkdir(podLogDirectory(pod, this.node.logRoot), { recursive: true });
    return await this.volumes.mountPod(pod);
  }
  async remove(pod: Pod): Promise<void> {
    await this.volumes.unmountPod(pod);
  }
}
