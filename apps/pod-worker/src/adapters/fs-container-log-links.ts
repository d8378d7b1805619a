import { mkdir, stat, symlink } from 'node:fs/promises';
import { legacyLogSymlink } from '@app/kube';
import { ContainerLogLinks } from '../ports.js';

/**
 * ContainerLogLinks on node:fs, in `dir` (LEGACY_CONTAINER_LOGS_DIR, the
 * kubelet's /var/log/containers, made 0755 as initializeModules makes it).
 * No link to a log file that does not exist: it would only dangle until the
 * container GC removed it (startContainer's Stat check).
 */
export class FsContainerLogLinks extends ContainerLogLinks {
  constructor(private readonly dir: string) {
    super();
  }
  async link(container: { id: string; name: string; podName: string; podNamespace: string }, logFile: string): Promise<void> {
    const exists = await stat(logFile).then(
      () => true,
      (err: NodeJS.ErrnoException) => err.code !== 'ENOENT',
    );
    if (!exists) return;
    await mkdir(this.dir, { recursive: true, mode: 0o755 });
    await symlink(logFile, legacyLogSymlink(this.dir, container.id, container.name, container.podName, container.podNamespace));
  }
}
