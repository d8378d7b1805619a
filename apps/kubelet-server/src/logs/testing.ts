/** The log server's fakes (STYLE.md 9): a runtime, files and pods held in memory. */
import type { Pod } from '@app/contracts';
import { LogFiles, LogPods, LogRuntime, type LogContainer, type LogFile, type LogSink } from './ports.js';

export class FakeLogRuntime extends LogRuntime {
  readonly instances: (LogContainer & { name: string; logPath: string })[] = [];
  readonly calls: string[] = [];
  containersOf(_pod: { namespace: string; name: string; uid: string }, name: string): Promise<LogContainer[]> {
    this.calls.push(`ListContainers ${name}`);
    return Promise.resolve(this.instances.filter((c) => c.name === name).map(({ id, createdAt, state }) => ({ id, createdAt, state })));
  }
  status(id: string): Promise<{ logPath: string; running: boolean } | undefined> {
    this.calls.push(`ContainerStatus ${id}`);
    const c = this.instances.find((i) => i.id === id);
    return Promise.resolve(c && { logPath: c.logPath, running: c.state === 'CONTAINER_RUNNING' });
  }
}

/** The files as inodes: a path names one, rotate renames it, and an open handle keeps reading it. */
export class FakeLogFiles extends LogFiles {
  private readonly inodes = new Map<string, { text: string }>();
  private waiters: (() => void)[] = [];
  /** The runtime writes: to the file at `path`, made if there is none (its reopen after a rotation). */
  append(path: string, text: string): void {
    const inode = this.inodes.get(path) ?? { text: '' };
    inode.text += text;
    this.inodes.set(path, inode);
    this.wake();
  }
  /** The log manager's rotation: `path` renamed to `to`; the runtime's reopen creates `path` afresh at the next append. */
  rotate(path: string, to: string): void {
    const inode = this.inodes.get(path);
    if (!inode) return;
    this.inodes.set(to, inode);
    this.inodes.delete(path);
    this.wake();
  }
  /** The text of the file at `path` now. */
  text(path: string): string | undefined {
    return this.inodes.get(path)?.text;
  }
  open(path: string): Promise<LogFile | undefined> {
    const inode = this.inodes.get(path);
    if (!inode) return Promise.resolve(undefined);
    return Promise.resolve({
      read: (offset: number) => Promise.resolve(Buffer.from(inode.text).subarray(offset)),
      replaced: () => Promise.resolve(this.inodes.has(path) && this.inodes.get(path) !== inode),
      close: () => Promise.resolve(),
    });
  }
  changed(_path: string, signal: AbortSignal): Promise<void> {
    return new Promise((resolve) => {
      this.waiters.push(resolve);
      signal.addEventListener('abort', () => resolve(), { once: true });
    });
  }
  private wake(): void {
    for (const w of this.waiters.splice(0)) w();
  }
}

export class FakeLogPods extends LogPods {
  readonly pods: Pod[] = [];
  getPod(namespace: string, name: string): Promise<Pod | undefined> {
    return Promise.resolve(this.pods.find((p) => p.metadata.namespace === namespace && p.metadata.name === name));
  }
}

/** Collects what the server writes. */
export class MemorySink implements LogSink {
  text = '';
  write(chunk: Buffer): Promise<void> {
    this.text += chunk.toString('utf8');
    return Promise.resolve();
  }
}
