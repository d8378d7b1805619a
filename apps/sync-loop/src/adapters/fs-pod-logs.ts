import { lstat, readdir, rm, stat } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
import { containerIdOfLegacyLogSymlink, legacyLogSymlink } from '@app/kube';
import { PodLogs, type DeadLogLink } from '../ports.js';

const missing = (err: unknown) => (err as NodeJS.ErrnoException).code === 'ENOENT';

/**
 * The pods' log root on the node's file system (POD_LOGS_DIR, the pod
 * worker's), and the legacy symlinks' directory (LEGACY_CONTAINER_LOGS_DIR,
 * the pod worker's too).
 */
export class FsPodLogs extends PodLogs {
  constructor(
    private readonly root: string,
    private readonly linksDir: string,
  ) {
    super();
  }
  async directories(): Promise<string[]> {
    const entries = await readdir(this.root, { withFileTypes: true }).catch((err: NodeJS.ErrnoException) => {
      if (err.code === 'ENOENT') return [];
      throw err;
    });
    return entries.filter((e) => e.isDirectory()).map((e) => e.name);
  }
  /** The file and its rotated siblings (`0.log.20250101-000000`, `0.log.1.gz`, ...), as the log manager's Clean. */
  async removeContainerLog(path: string): Promise<void> {
    const dir = dirname(path);
    const name = basename(path);
    const siblings = await readdir(dir).catch(() => [] as string[]);
    for (const f of siblings) if (f === name || f.startsWith(`${name}.`)) await rm(join(dir, f), { force: true });
  }
  async removeDirectory(name: string): Promise<void> {
    if (name.includes('/') || name === '..' || name === '.') throw new Error(`not a pod log directory: ${name}`);
    await rm(join(this.root, name), { recursive: true, force: true });
  }
  async removeLegacyLogSymlink(c: { id: string; name: string; podName: string; podNamespace: string }): Promise<void> {
    await rm(legacyLogSymlink(this.linksDir, c.id, c.name, c.podName, c.podNamespace), { force: true });
  }
  /** The `*.log` symlinks whose target does not exist (stat follows the link, lstat does not). */
  async deadLegacyLogSymlinks(): Promise<DeadLogLink[]> {
    const names = await readdir(this.linksDir).catch((err: unknown) => {
      if (missing(err)) return [] as string[];
      throw err;
    });
    const dead: DeadLogLink[] = [];
    for (const name of names) {
      if (!name.endsWith('.log')) continue;
      const path = join(this.linksDir, name);
      const link = await lstat(path).catch(() => undefined);
      if (!link?.isSymbolicLink()) continue;
      const alive = await stat(path).then(
        () => true,
        (err: unknown) => !missing(err),
      );
      if (!alive) dead.push({ name, containerId: containerIdOfLegacyLogSymlink(name) });
    }
    return dead;
  }
  async removeLegacyLogSymlinkNamed(name: string): Promise<void> {
    if (name.includes('/') || name === '..' || name === '.') throw new Error(`not a log symlink: ${name}`);
    const path = join(this.linksDir, name);
    // Never anything but a symlink: a file someone put there is not ours.
    if ((await lstat(path).catch(() => undefined))?.isSymbolicLink()) await rm(path, { force: true });
  }
}
