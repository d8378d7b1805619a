import { constants } from 'node:fs';
import { open, type FileHandle } from 'node:fs/promises';
import { KernelLog } from '../oom-watcher.js';

const code = (err: unknown) => (err as NodeJS.ErrnoException).code;

/**
 * /dev/kmsg, non-blocking: each read() returns one record, EAGAIN when
 * there is none yet (so no thread of the pool waits on it), EPIPE when the
 * ring buffer overwrote records not yet read (the read goes on after them).
 */
export class DevKmsg extends KernelLog {
  private file?: FileHandle;
  private readonly buf = Buffer.alloc(16 * 1024);

  constructor(private readonly path = '/dev/kmsg') {
    super();
  }

  async open(): Promise<void> {
    this.file = await open(this.path, constants.O_RDONLY | constants.O_NONBLOCK);
    await this.readNew(); // from the end: what is already there was before this watcher
  }

  async readNew(): Promise<string[]> {
    const file = this.file;
    if (!file) return [];
    const records: string[] = [];
    for (;;) {
      try {
        const { bytesRead } = await file.read(this.buf, 0, this.buf.length, null);
        if (bytesRead === 0) return records;
        records.push(this.buf.toString('utf8', 0, bytesRead));
      } catch (err) {
        if (code(err) === 'EAGAIN') return records;
        if (code(err) !== 'EPIPE') throw err;
      }
    }
  }

  async close(): Promise<void> {
    const file = this.file;
    this.file = undefined;
    await file?.close();
  }
}
