import { open } from 'node:fs/promises';
import { ContainerFileReader } from '../ports.js';

/** ContainerFileReader on node:fs (tail.ReadAtMost). */
export class FsContainerFileReader extends ContainerFileReader {
  async readTail(path: string, maxBytes: number): Promise<{ text: string; truncated: boolean } | undefined> {
    let f;
    try {
      f = await open(path, 'r');
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
      throw err;
    }
    try {
      const { size } = await f.stat();
      const length = Math.min(size, maxBytes);
      const buf = Buffer.alloc(length);
      const { bytesRead } = await f.read(buf, 0, length, size - length);
      return { text: buf.subarray(0, bytesRead).toString('utf8'), truncated: size > maxBytes };
    } finally {
      await f.close();
    }
  }
}
