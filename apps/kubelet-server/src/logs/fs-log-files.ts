import { watch } from 'node:fs';
import { open, stat, type FileHandle } from 'node:fs/promises';
import { basename, dirname } from 'node:path';
import { LogFiles, type LogFile } from './ports.js';

const isMissing = (err: unknown) => (err as NodeJS.ErrnoException).code === 'ENOENT';

/** The log files on the host's disk: read through an open descriptor, changes through fs.watch on the log's directory. */
export class FsLogFiles extends LogFiles {
  async open(path: string): Promise<LogFile | undefined> {
    let fh: FileHandle;
    try {
      fh = await open(path, 'r');
    } catch (err) {
      if (isMissing(err)) return undefined;
      throw err;
    }
    return new FsLogFile(fh, path);
  }

  /**
   * Watches the directory, not the file, as ReadLogs does: a write, the
   * rotation's rename and the runtime's new file all show there, while a
   * watch on the file would stay on the renamed one.
   */
  changed(path: string, signal: AbortSignal): Promise<void> {
    return new Promise((resolve) => {
      let w: ReturnType<typeof watch> | undefined;
      const done = () => {
        w?.close();
        resolve();
      };
      signal.addEventListener('abort', done, { once: true });
      const name = basename(path);
      try {
        w = watch(dirname(path), { persistent: false }, (_event, file) => {
          if (file === null || file === name) done();
        });
        w.on('error', done);
      } catch {
        // No directory yet: the caller's timer looks again.
      }
    });
  }
}

class FsLogFile implements LogFile {
  constructor(
    private readonly fh: FileHandle,
    private readonly path: string,
  ) {}

  async read(offset: number): Promise<Buffer> {
    const { size } = await this.fh.stat();
    if (size <= offset) return Buffer.alloc(0);
    const buf = Buffer.alloc(size - offset);
    const { bytesRead } = await this.fh.read(buf, 0, buf.length, offset);
    return buf.subarray(0, bytesRead);
  }

  async replaced(): Promise<boolean> {
    const [mine, now] = await Promise.all([this.fh.stat(), stat(this.path).catch((err: unknown) => (isMissing(err) ? undefined : Promise.reject(err as Error)))]);
    return now !== undefined && (now.ino !== mine.ino || now.dev !== mine.dev);
  }

  close(): Promise<void> {
    return this.fh.close();
  }
}
