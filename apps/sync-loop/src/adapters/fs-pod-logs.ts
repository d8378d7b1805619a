import { readdir, rm } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
import { PodLogs } from '../ports.js';

/** The pods' log root on the node's file system (POD_LOGS_DIR, the pod worker's). */
export class FsPodLogs extends PodLogs {
  constructor(private readonly root: string) {
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
}
