import { execFile } from 'node:child_process';
import { readFile, readdir, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { PodDirectoriesOnDisk } from '../ports.js';

const run = promisify(execFile);

/** /proc/self/mountinfo escapes space, tab, newline and backslash as octal. */
function unescapeMountPath(s: string): string {
  return s.replace(/\\([0-7]{3})/g, (_, o: string) => String.fromCharCode(parseInt(o, 8)));
}

/** The pods' directories on the host's file system, its mount table and the `umount` command. */
export class FsPodDirectoriesOnDisk extends PodDirectoriesOnDisk {
  constructor(private readonly root: string) {
    super();
  }
  path(uid: string): string {
    return join(this.root, uid);
  }
  async list(): Promise<string[]> {
    const entries = await readdir(this.root, { withFileTypes: true }).catch((err: NodeJS.ErrnoException) => {
      if (err.code === 'ENOENT') return [];
      throw err;
    });
    return entries.filter((e) => e.isDirectory()).map((e) => e.name);
  }
  async mountsUnder(uid: string): Promise<string[]> {
    const dir = this.path(uid);
    const text = await readFile('/proc/self/mountinfo', 'utf8');
    return text.split('\n').flatMap((line) => {
      const field = line.split(' ')[4];
      const point = field ? unescapeMountPath(field) : '';
      return point === dir || point.startsWith(`${dir}/`) ? [point] : [];
    });
  }
  async unmount(path: string): Promise<void> {
    await run('umount', [path]);
  }
  async remove(uid: string): Promise<void> {
    await rm(this.path(uid), { recursive: true, force: true }); // rm unlinks symlinks, never follows them
  }
}
