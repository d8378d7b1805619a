import { randomUUID } from 'node:crypto';
import { chmod, mkdir, open, readFile, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { ContainerFiles } from '../ports.js';

/** ContainerFiles on node:fs. */
export class FsContainerFiles extends ContainerFiles {
  constructor(private readonly nodeHostsPath = '/etc/hosts') {
    super();
  }
  async writeHostsFile(path: string, content: string): Promise<void> {
    await mkdir(dirname(path), { recursive: true });
    await writeFile(path, content, { mode: 0o644 });
    await chmod(path, 0o644);
  }
  async nodeHostsFile(): Promise<string> {
    return await readFile(this.nodeHostsPath, 'utf8');
  }
  async createTerminationMessageFile(dir: string): Promise<string> {
    await mkdir(dir, { recursive: true, mode: 0o750 });
    // A new name per instance, as upstream's makeUID: the previous instance's message stays with it.
    const path = join(dir, randomUUID().replaceAll('-', '').slice(0, 8));
    const f = await open(path, 'w', 0o666);
    await f.close();
    await chmod(path, 0o666);
    return path;
  }
}
