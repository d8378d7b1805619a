/** The log server's fakes (STYLE.md 9): a runtime, files and pods held in memory. */
import type { Pod } from '@app/contracts';
import { LogFiles, LogPods, LogRuntime, type LogContainer, type LogSink } from './ports.js';

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

export class FakeLogFiles extends LogFiles {
  readonly files = new Map<string, string>();
  private waiters: (() => void)[] = [];
  append(path: string, text: string): void {
    this.files.set(path, (this.files.get(path) ?? '') + text);
    for (const w of this.waiters.splice(0)) w();
  }
  read(path: string, offset: number): Promise<Buffer> {
    return Promise.resolve(Buffer.from(this.files.get(path) ?? '').subarray(offset));
  }
  changed(_path: string, signal: AbortSignal): Promise<void> {
    return new Promise((resolve) => {
      this.waiters.push(resolve);
      signal.addEventListener('abort', () => resolve(), { once: true });
    });
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
