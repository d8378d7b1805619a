import type { CriRuntime } from './client.js';
import { isNotFound } from './errors.js';

/** A container's CRI log file and whether it still runs (ContainerStatus); undefined once the runtime no longer knows it. */
export async function containerLogFile(cri: CriRuntime, containerId: string): Promise<{ logPath: string; running: boolean } | undefined> {
  try {
    const res = await cri.runtime('ContainerStatus', { containerId, verbose: false });
    return res.status ? { logPath: res.status.logPath, running: res.status.state === 'CONTAINER_RUNNING' } : undefined;
  } catch (err) {
    if (isNotFound(err)) return undefined;
    throw err;
  }
}
