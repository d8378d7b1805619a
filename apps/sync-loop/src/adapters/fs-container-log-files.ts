import { createReadStream, createWriteStream } from 'node:fs';
import { readdir, rename, rm, stat } from 'node:fs/promises';
import { basename, dirname, join, relative, isAbsolute } from 'node:path';
import { pipeline } from 'node:stream/promises';
import { createGzip } from 'node:zlib';
import type { LeaderFence } from '@app/leader-election';
import { ContainerLogFiles } from '../ports.js';

const isMissing = (err: unknown) => (err as NodeJS.ErrnoException).code === 'ENOENT';

/**
 * The container logs on the node's disk, under the pods' log root
 * (POD_LOGS_DIR): a path the runtime reports outside it is refused, and
 * every change is the leader's only.
 */
export class FsContainerLogFiles extends ContainerLogFiles {
  constructor(
    private readonly root: string,
    private readonly fence: LeaderFence,
  ) {
    super();
  }
  async size(path: string): Promise<number | undefined> {
    try {
      return (await stat(this.inRoot(path))).size;
    } catch (err) {
      if (isMissing(err)) return undefined;
      throw err;
    }
  }
  async rotated(path: string): Promise<string[]> {
    const dir = dirname(this.inRoot(path));
    const prefix = `${basename(path)}.`;
    const names = await readdir(dir).catch((err: unknown) => (isMissing(err) ? [] : Promise.reject(err as Error)));
    return names.filter((n) => n.startsWith(prefix)).map((n) => join(dir, n));
  }
  async rename(from: string, to: string): Promise<void> {
    this.fence.check('rotate a container log');
    await rename(this.inRoot(from), this.inRoot(to));
  }
  async remove(path: string): Promise<void> {
    this.fence.check('remove a container log');
    await rm(this.inRoot(path), { force: true });
  }
  async gzip(from: string, to: string): Promise<void> {
    this.fence.check('compress a container log');
    const { mode } = await stat(this.inRoot(from));
    await pipeline(createReadStream(from), createGzip(), createWriteStream(this.inRoot(to), { flags: 'w', mode }));
  }
  /** The path, if it is below the root; throws otherwise. */
  private inRoot(path: string): string {
    const rel = relative(this.root, path);
    if (!isAbsolute(path) || rel === '' || rel.startsWith('..') || isAbsolute(rel)) throw new Error(`not a container log under ${this.root}: ${path}`);
    return path;
  }
}
