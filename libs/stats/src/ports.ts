/** What the stats provider reads besides the CRI; the host adapter is host-node-stats.ts, the fakes testing.ts. */
import type { PodRecord } from '@app/contracts';
import type { InterfaceStats } from './summary-types.js';

/** The pods whose stats are served: the desired pods (the sync loop's podManager, the `pods` bucket). */
export abstract class StatsPods {
  abstract all(): Promise<PodRecord[]>;
}

/** A cumulative CPU figure and when it was read (ns since the epoch). */
export interface CpuSample {
  timestampNs: number;
  usageCoreNanoSeconds: number;
}

export interface HostMemory {
  usageBytes: number;
  workingSetBytes: number;
  availableBytes?: number;
  rssBytes?: number;
  pageFaults?: number;
  majorPageFaults?: number;
}

export interface HostFs {
  capacityBytes: number;
  availableBytes: number;
  usedBytes: number;
  inodes?: number;
  inodesFree?: number;
}

/** The node as cadvisor's root container sees it. */
export interface HostNodeStats {
  /** Boot time (ms since the epoch): the root cgroup's start. */
  startTimeMs: number;
  cpu?: CpuSample;
  memory?: HostMemory;
  rlimit?: { maxpid: number; curproc: number };
  network?: InterfaceStats[];
}

/** The host's files: /proc, the root cgroup, statfs and the log directories. */
export abstract class HostStats {
  /** The node's figures, read now. */
  abstract node(): Promise<HostNodeStats>;
  /** statfs of the filesystem holding `path` (or its nearest existing ancestor). */
  abstract fsInfo(path: string): Promise<HostFs | undefined>;
  /** Bytes and inodes under a directory (a container's logs); undefined when it does not exist. */
  abstract dirUsage(path: string): Promise<{ usedBytes: number; inodesUsed: number } | undefined>;
}
