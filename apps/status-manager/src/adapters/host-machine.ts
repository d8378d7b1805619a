import { readFile, statfs } from 'node:fs/promises';
import { release, totalmem } from 'node:os';
import { dirname } from 'node:path';
import { machineHugePages } from '@app/config';
import type { SignalObservations } from '../node/eviction.js';
import { Machine, type MachineInfo } from '../node/ports.js';

const read = (path: string) => readFile(path, 'utf8').then((s) => s.trim());
const readOr = (path: string, fallback = '') => read(path).catch(() => fallback);

/**
 * This machine, as cadvisor's MachineInfo and the eviction manager's summary
 * stats see it: /etc/machine-id, the DMI product UUID, the boot id, the
 * kernel, /etc/os-release, the huge pages pre-allocated, and the node
 * filesystem (the one holding `rootDir`, the pods' directories, as upstream's
 * nodefs is the one holding the kubelet's root directory).
 *
 * Signals: memory.available is the capacity less the root cgroup's working
 * set (usage less inactive file pages, cgroup v1; /proc/meminfo's
 * MemAvailable where that cannot be read); nodefs from statfs; pid.available
 * is pid_max (or threads-max, if lower) less the tasks the kernel counts.
 * imagefs is not observed: the runtime's images are taken to be on the node
 * filesystem, where upstream too reads no separate imagefs signals.
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

  async observe(): Promise<SignalObservations> {
    const out: SignalObservations = {};
    const capacity = totalmem();
    const workingSet = await rootWorkingSet();
    if (workingSet !== undefined) out['memory.available'] = { available: Math.max(0, capacity - workingSet), capacity };
    else {
      const available = meminfo(await readOr('/proc/meminfo'), 'MemAvailable');
      if (available !== undefined) out['memory.available'] = { available, capacity };
    }
    const fs = await this.nodeFs();
    if (fs) {
      out['nodefs.available'] = { available: fs.available, capacity: fs.capacity };
      if (fs.inodes > 0) out['nodefs.inodesFree'] = { available: fs.inodesFree, capacity: fs.inodes };
    }
    const pidMax = Math.min(Number(await readOr('/proc/sys/kernel/pid_max', 'NaN')), Number(await readOr('/proc/sys/kernel/threads-max', 'Infinity')));
    const tasks = Number((await readOr('/proc/loadavg')).split(/\s+/)[3]?.split('/')[1]);
    if (Number.isFinite(pidMax) && Number.isFinite(tasks)) out['pid.available'] = { available: pidMax - tasks, capacity: pidMax };
    return out;
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

/** A /proc/meminfo field in bytes. */
export function meminfo(text: string, field: string): number | undefined {
  const m = new RegExp(`^${field}:\\s+(\\d+) kB$`, 'm').exec(text);
  return m?.[1] ? Number(m[1]) * 1024 : undefined;
}

/** The root memory cgroup's working set (cgroup v1): usage less total_inactive_file. */
async function rootWorkingSet(): Promise<number | undefined> {
  const usage = Number(await readOr('/sys/fs/cgroup/memory/memory.usage_in_bytes', 'NaN'));
  if (!Number.isFinite(usage)) return undefined;
  const stat = await readOr('/sys/fs/cgroup/memory/memory.stat');
  const inactive = Number(/^total_inactive_file (\d+)$/m.exec(stat)?.[1] ?? 0);
  return Math.max(0, usage - inactive);
}
