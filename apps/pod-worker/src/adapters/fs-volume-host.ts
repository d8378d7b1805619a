import { execFile } from 'node:child_process';
import { chmod, lchown, lstat, mkdir, open, readFile, readdir, readlink, rename, rm, stat, symlink, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { promisify } from 'node:util';
import { VolumeHost, fsGroupFileMode, type FileKind, type PayloadFile } from '../volumemanager/volumes.js';

const run = promisify(execFile);

/** /proc/self/mountinfo escapes space, tab, newline and backslash as octal. */
function unescapeMountPath(s: string): string {
  return s.replace(/\\([0-7]{3})/g, (_, o: string) => String.fromCharCode(parseInt(o, 8)));
}

/** The volume plugins' host: node:fs, the `mount`/`umount` commands and /proc/self/mountinfo. */
export class FsVolumeHost extends VolumeHost {
  async fileKind(path: string): Promise<FileKind> {
    try {
      const s = await stat(path);
      if (s.isDirectory()) return 'directory';
      if (s.isFile()) return 'file';
      if (s.isSocket()) return 'socket';
      if (s.isCharacterDevice()) return 'char';
      if (s.isBlockDevice()) return 'block';
      return 'other';
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') return 'missing';
      throw err;
    }
  }
  async mkdir(path: string, mode: number): Promise<void> {
    const created = await mkdir(path, { recursive: true, mode });
    if (created !== undefined) await chmod(path, mode); // the umask must not narrow an emptyDir's 0777
  }
  async createFile(path: string, mode: number): Promise<void> {
    const f = await open(path, 'a', mode);
    await f.close();
  }
  async mountPoints(): Promise<string[]> {
    const text = await readFile('/proc/self/mountinfo', 'utf8');
    return text.split('\n').flatMap((line) => {
      const field = line.split(' ')[4];
      return field ? [unescapeMountPath(field)] : [];
    });
  }
  async mountTmpfs(path: string, sizeBytes: number): Promise<void> {
    await run('mount', ['-t', 'tmpfs', '-o', `size=${sizeBytes}`, 'tmpfs', path]);
  }
  async unmount(path: string): Promise<void> {
    await run('umount', [path]);
  }
  /**
   * AtomicWriter: the payload in a fresh `..<timestamp>` directory, `..data`
   * switched to it by a rename, and a symlink `<file> -> ..data/<file>` per
   * top-level name; the links of names no longer in the payload and the
   * previous directory removed after the switch. Nothing is written when
   * every file is there with its content and mode.
   */
  async writeAtomic(dir: string, files: Map<string, PayloadFile>): Promise<boolean> {
    const dataLink = join(dir, '..data');
    const old = await readlink(dataLink).catch(() => undefined);
    if (old !== undefined && (await this.samePayload(join(dir, old), files))) return false;
    const ts = `..${new Date().toISOString().replace(/[:.]/g, '_')}.${process.pid}`;
    const tsDir = join(dir, ts);
    await mkdir(tsDir, { mode: 0o755 });
    await chmod(tsDir, 0o755);
    for (const [path, f] of files) {
      const target = join(tsDir, path);
      await mkdir(dirname(target), { recursive: true });
      await writeFile(target, f.content, { mode: f.mode });
      await chmod(target, f.mode);
    }
    const tmpLink = join(dir, '..data_tmp');
    await rm(tmpLink, { force: true });
    await symlink(ts, tmpLink);
    await rename(tmpLink, dataLink);
    const tops = new Set([...files.keys()].map((p) => p.split('/')[0] ?? p));
    for (const top of tops) {
      const link = join(dir, top);
      if ((await readlink(link).catch(() => undefined)) !== join('..data', top)) {
        await rm(link, { recursive: true, force: true });
        await symlink(join('..data', top), link);
      }
    }
    // A key gone from the object: its user-visible link goes too (upstream's pathsToRemove).
    for (const name of await readdir(dir)) {
      if (name.startsWith('..') || tops.has(name)) continue;
      if ((await readlink(join(dir, name)).catch(() => undefined))?.startsWith('..data/')) await rm(join(dir, name), { force: true });
    }
    if (old !== undefined && old !== ts) await rm(join(dir, old), { recursive: true, force: true });
    return true;
  }
  private async samePayload(dataDir: string, files: Map<string, PayloadFile>): Promise<boolean> {
    try {
      const names = await readdir(dataDir, { recursive: true });
      const regular = [];
      for (const n of names) if ((await lstat(join(dataDir, n))).isFile()) regular.push(n);
      if (regular.length !== files.size) return false;
      for (const [path, f] of files) {
        const file = join(dataDir, path);
        if (((await stat(file)).mode & 0o7777) !== f.mode) return false;
        if (!Buffer.from(f.content).equals(await readFile(file))) return false;
      }
      return true;
    } catch {
      return false;
    }
  }
  async removeAll(path: string): Promise<void> {
    await rm(path, { recursive: true, force: true }); // rm unlinks symlinks, never follows them
  }
  async setOwnership(dir: string, fsGroup: number, readOnly: boolean): Promise<void> {
    const walk = async (path: string): Promise<void> => {
      const info = await lstat(path);
      await lchown(path, -1, fsGroup); // -1: the owner stays
      if (info.isSymbolicLink()) return; // no mode (nor setgid) on a link
      const mode = info.mode & 0o7777;
      const want = info.isDirectory() ? fsGroupFileMode(mode, readOnly) | 0o110 | 0o2000 : fsGroupFileMode(mode, readOnly);
      if (want !== mode) await chmod(path, want);
      if (info.isDirectory()) for (const name of await readdir(path)) await walk(join(path, name));
    };
    await walk(dir);
  }
}
