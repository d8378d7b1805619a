import { HostProcesses } from '../ports.js';

/** process.kill on the host's processes (the sync loop shares the host's PID namespace where it runs in a container). */
export class NodeHostProcesses extends HostProcesses {
  async kill(pid: number): Promise<void> {
    try {
      process.kill(pid, 'SIGKILL');
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'ESRCH') throw err;
    }
    await Promise.resolve();
  }
}
