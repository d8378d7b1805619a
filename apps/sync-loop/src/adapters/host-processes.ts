import { killHostProcess } from '@app/cm';
import { HostProcesses } from '../ports.js';

/** process.kill on the host's processes (the sync loop shares the host's PID namespace where it runs in a container). */
export class NodeHostProcesses extends HostProcesses {
  kill(pid: number): Promise<void> {
    return killHostProcess(pid);
  }
}
