import { mkdir, rm } from 'node:fs/promises';
import { join } from 'node:path';
import type { Pod } from '@app/contracts';
import { PodDirectories } from '../ports.js';
import { emptyDirPath, podLogDirectory, type NodeFacts } from '../runtime-config.js';

/** The pods' log directories and emptyDir volumes on the node's file system. */
export class FsPodDirectories extends PodDirectories {
  constructor(private readonly node: NodeFacts) {
    super();
  }
  async ensure(pod: Pod): Promise<void> {
    await mkdir(podLogDirectory(pod, this.node.logRoot), { recursive: true });
    for (const v of pod.spec.volumes ?? []) {
      if (v.emptyDir || (!v.hostPath && !v.emptyDir)) await mkdir(emptyDirPath(pod, v.name, this.node.podRoot), { recursive: true, mode: 0o777 });
    }
  }
  async remove(pod: Pod): Promise<void> {
    await rm(join(this.node.podRoot, pod.metadata.uid ?? ''), { recursive: true, force: true });
  }
}
