import { watch } from 'node:fs';
import { open } from 'node:fs/promises';
import { LogFiles } from './ports.js';

/** The log files on the host's disk: read from an offset, changes through fs.watch. */
export class FsLogFiles extends LogFiles {
  async read(path: string, offset: number): Promise<Buffer> {
    let fh;
    try {
      fh = await open(path, 'r');
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') return Buffer.alloc(0);
      throw err;
    }
    try {
      const { size } = await fh.stat();
      if (size <= offset) return Buffer.alloc(0);
      const buf = Buffer.alloc(size - offset);
      const { bytesRead } = await fh.read(buf, 0, buf.length, offset);
      return buf.subarray(0, bytesRead);
    } finally {
      await fh.close();
    }
  }
  changed(path: string, signal: AbortSignal): Promise<void> {
    return new Promise((resolve) => {
      let w: ReturnType<typeof watch> | undefined;
      const done = () => {
        w?.close();
        resolve();
      };
      signal.addEventListener('abort', done, { once: true });
      try {
        w = watch(path, { persistent: false }, done);
        w.on('error', done);
      } catch {
        // No file yet: the caller's timer looks again.
      }
    });
  }
}
