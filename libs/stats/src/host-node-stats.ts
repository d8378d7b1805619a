import { readFile, readdir, lstat, statfs } from 'node:fs/promises';
import { totalmem } from 'node:os';
import { dirname, join } from 'node:path';
import type { Clock } from '@app/clock';
import { HostStats, type HostFs, type HostMemory, type HostNodeStats } from './ports.js';
import type { InterfaceStats } from './summary-types.js';

const readOr = (path: string, fallback = '') => readFile(path, 'utf8').then((s) => s.trim(), () => fallback);

/**
 * The node as cadvisor's root container: CPU from the root cgroup
 * (cpuacct.usage, cgroup v1; cpu.stat usage_usec, v2; /proc/stat otherwise),
 * memory from the root memory cgroup (usage, working set = usage less
 * inactive file, rss, page faults; v1 or v2), the boot time from /proc/stat,
 * network from /proc/net/dev, the pid limit and count as the eviction
 * manager reads them, statfs for filesystems, and a walk for directories.
 */
export class HostStatsReader extends HostStats {
  constructor(private readonly clock: Clock) {
    super();
  }

  async node(): Promise<HostNodeStats> {
    const procStat = await readOr('/proc/stat');
    const btime = Number(/^btime (\d+)$/m.exec(procStat)?.[1] ?? 0);
    const out: HostNodeStats = { startTimeMs: btime * 1000 };
    const cpu = await rootCpuNs(procStat);
    if (cpu !== undefined) out.cpu = { timestampNs: this.clock.now() * 1e6, usageCoreNanoSeconds: cpu };
    const memory = await rootMemory();
    if (memory) out.memory = memory;
    const pidMax = Math.min(Number(await readOr('/proc/sys/kernel/pid_max', 'NaN')), Number(await readOr('/proc/sys/kernel/threads-max', 'Infinity')));
    const tasks = Number((await readOr('/proc/loadavg')).split(/\s+/)[3]?.split('/')[1]);
    if (Number.isFinite(pidMax) && Number.isFinite(tasks)) out.rlimit = { maxpid: pidMax, curproc: tasks };
    const network = netDev(await readOr('/proc/net/dev'));
    if (network.length > 0) out.network = network;
    return out;
  }

  async fsInfo(path: string): Promise<HostFs | undefined> {
    for (let dir = path; ; dir = dirname(dir)) {
      try {
        const s = await statfs(dir);
        return { capacityBytes: s.blocks * s.bsize, availableBytes: s.bavail * s.bsize, usedBytes: (s.blocks - s.bfree) * s.bsize, inodes: s.files, inodesFree: s.ffree };
      } catch {
        if (dir === dirname(dir)) return undefined;
      }
    }
  }

  async dirUsage(path: string): Promise<{ usedBytes: number; inodesUsed: number } | undefined> {
    try {
      const st = await lstat(path);
      let usedBytes = st.blocks * 512;
      let inodesUsed = 1;
      if (st.isDirectory()) {
        for (const entry of await readdir(path)) {
          const sub = await this.dirUsage(join(path, entry));
          if (sub) {
            usedBytes += sub.usedBytes;
            inodesUsed += sub.inodesUsed;
          }
        }
      }
      return { usedBytes, inodesUsed };
    } catch {
      return undefined;
    }
  }
}

/** The root cgroup's cumulative CPU in ns. */
async function rootCpuNs(procStat: string): Promise<number | undefined> {
  const v1 = Number(await readOr('/sys/fs/cgroup/cpuacct/cpuacct.usage', 'NaN'));
  if (Number.isFinite(v1)) return v1;
  const v2 = /^usage_usec (\d+)$/m.exec(await readOr('/sys/fs/cgroup/cpu.stat'))?.[1];
  if (v2) return Number(v2) * 1000;
  // /proc/stat's cpu line, in USER_HZ (100 on Linux): every field but idle and iowait.
  const f = /^cpu\s+(.*)$/m.exec(procStat)?.[1]?.split(/\s+/).map(Number);
  if (!f || f.length < 8) return undefined;
  const busy = (f[0] ?? 0) + (f[1] ?? 0) + (f[2] ?? 0) + (f[5] ?? 0) + (f[6] ?? 0) + (f[7] ?? 0);
  return busy * 1e7;
}

/** The root memory cgroup (v1, else v2 as the sum of /proc/meminfo's). */
async function rootMemory(): Promise<HostMemory | undefined> {
  const capacity = totalmem();
  const usage = Number(await readOr('/sys/fs/cgroup/memory/memory.usage_in_bytes', 'NaN'));
  if (Number.isFinite(usage)) {
    const stat = await readOr('/sys/fs/cgroup/memory/memory.stat');
    const field = (k: string) => Number(new RegExp(`^${k} (\\d+)$`, 'm').exec(stat)?.[1] ?? 0);
    const workingSet = Math.max(0, usage - field('total_inactive_file'));
    return { usageBytes: usage, workingSetBytes: workingSet, availableBytes: Math.max(0, capacity - workingSet), rssBytes: field('total_rss'), pageFaults: field('total_pgfault'), majorPageFaults: field('total_pgmajfault') };
  }
  const meminfo = await readOr('/proc/meminfo');
  const kb = (k: string) => Number(new RegExp(`^${k}:\\s+(\\d+) kB$`, 'm').exec(meminfo)?.[1] ?? NaN) * 1024;
  const free = kb('MemFree');
  if (!Number.isFinite(free)) return undefined;
  const used = capacity - free;
  const workingSet = Math.max(0, used - (Number.isFinite(kb('Inactive\\(file\\)')) ? kb('Inactive\\(file\\)') : 0));
  const vmstat = await readOr('/proc/vmstat');
  const vm = (k: string) => Number(new RegExp(`^${k} (\\d+)$`, 'm').exec(vmstat)?.[1] ?? 0);
  return { usageBytes: used, workingSetBytes: workingSet, availableBytes: Math.max(0, capacity - workingSet), pageFaults: vm('pgfault'), majorPageFaults: vm('pgmajfault') };
}

/** /proc/net/dev: every interface but loopback. */
export function netDev(text: string): InterfaceStats[] {
  const out: InterfaceStats[] = [];
  for (const line of text.split('\n').slice(2)) {
    const m = /^\s*([^:]+):\s*(.*)$/.exec(line);
    if (!m?.[1] || m[1] === 'lo') continue;
    const f = (m[2] ?? '').split(/\s+/).map(Number);
    out.push({ name: m[1], rxBytes: f[0] ?? 0, rxErrors: f[2] ?? 0, txBytes: f[8] ?? 0, txErrors: f[10] ?? 0 });
  }
  return out;
}
