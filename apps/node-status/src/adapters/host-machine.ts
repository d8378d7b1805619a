import { readFile, statfs } from 'node:fs/promises';
import { release } from 'node:os';
import { dirname } from 'node:path';
import { machineHugePages } from '@app/config';
import { Machine, type MachineInfo } from '../ports.js';

const read = (path: string) => readFile(path, 'utf8').then((s) => s.trim());
const readOr = (path: string, fallback = '') => read(path).catch(() => fallback);

/**
 * This machine, as cadvisor's MachineInfo sees it: /etc/machine-id, the DMI
 * product UUID, the boot id, the kernel, /etc/os-release, the huge pages
 * pre-allocated, and the node filesystem's size (the one holding `rootDir`,
 * the pods' directories, as upstream's nodefs is the one holding the
 * kubelet's root directory). The eviction signals are the sync loop's
 * eviction manager's (NodePressureView).
 */
export class HostMachine extends Machine {
  constructor(private readonly rootDir: string) {
    super();
  }

  async info(): Promise<MachineInfo> {
    const fs = await this.nodeFs();
    return {
      machineID: (await readOr('/etc/machine-id')) || (await readOr('/var/lib/dbus/machine-id')),
      systemUUID: await readOr('/sys/class/dmi/id/product_uuid'),
      bootID: await readOr('/proc/sys/kernel/random/boot_id'),
      kernelVersion: release(),
      osImage: osImage(await readOr('/etc/os-release')),
      hugePages: machineHugePages(),
      ...(fs ? { nodeFsCapacityBytes: fs.capacity } : {}),
    };
  }

  /** statfs of the root directory, or of its nearest ancestor that exists (the pods' directory may not yet). */
  private async nodeFs(): Promise<{ capacity: number; available: number; inodes: number; inodesFree: number } | undefined> {
    for (let dir = this.rootDir; ; dir = dirname(dir)) {
      try {
        const s = await statfs(dir);
        return { capacity: s.blocks * s.bsize, available: s.bavail * s.bsize, inodes: s.files, inodesFree: s.ffree };
      } catch {
        if (dir === dirname(dir)) return undefined;
      }
    }
  }
}

/** /etc/os-release's PRETTY_NAME (cadvisor's OS image), "Linux" without one. */
export function osImage(osRelease: string): string {
  const m = /^PRETTY_NAME=(.*)$/m.exec(osRelease);
  return m?.[1] ? m[1].replace(/^["']|["']$/g, '') : 'Linux';
}
