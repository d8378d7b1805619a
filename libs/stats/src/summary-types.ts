/**
 * The Summary API (k8s.io/kubelet/pkg/apis/stats/v1alpha1/types.go), as
 * `GET /stats/summary` serves it: the same field names, times as RFC 3339
 * strings, every figure optional (absent when the source did not say it),
 * as the Go pointers are.
 */

/** Summary is a top-level container for holding NodeStats and PodStats. */
export interface Summary {
  node: NodeStats;
  pods: PodStats[];
}

export interface NodeStats {
  nodeName: string;
  systemContainers?: ContainerStats[];
  startTime: string;
  cpu?: CPUStats;
  memory?: MemoryStats;
  network?: NetworkStats;
  fs?: FsStats;
  runtime?: RuntimeStats;
  rlimit?: RlimitStats;
}

export interface RlimitStats {
  time: string;
  maxpid?: number;
  curproc?: number;
}

export interface RuntimeStats {
  /** The filesystem the runtime keeps its images on (CRI ImageFsInfo). */
  imageFs?: FsStats;
  containerFs?: FsStats;
}

export interface PodReference {
  name: string;
  namespace: string;
  uid: string;
}

export interface PodStats {
  podRef: PodReference;
  startTime: string;
  containers: ContainerStats[];
  cpu?: CPUStats;
  memory?: MemoryStats;
  network?: NetworkStats;
  volume?: VolumeStats[];
  'ephemeral-storage'?: FsStats;
  process_stats?: ProcessStats;
}

export interface ContainerStats {
  name: string;
  startTime: string;
  cpu?: CPUStats;
  memory?: MemoryStats;
  rootfs?: FsStats;
  logs?: FsStats;
}

export interface CPUStats {
  time: string;
  /** Total CPU usage (sum of all cores) averaged over the sample window, in nanocores. */
  usageNanoCores?: number;
  /** Cumulative CPU usage (sum of all cores) since object creation. */
  usageCoreNanoSeconds?: number;
}

export interface MemoryStats {
  time: string;
  availableBytes?: number;
  usageBytes?: number;
  workingSetBytes?: number;
  rssBytes?: number;
  pageFaults?: number;
  majorPageFaults?: number;
}

export interface NetworkStats extends InterfaceStats {
  time: string;
  interfaces?: InterfaceStats[];
}

export interface InterfaceStats {
  name: string;
  rxBytes?: number;
  rxErrors?: number;
  txBytes?: number;
  txErrors?: number;
}

export interface ProcessStats {
  process_count?: number;
}

export interface FsStats {
  time: string;
  availableBytes?: number;
  capacityBytes?: number;
  usedBytes?: number;
  inodesFree?: number;
  inodes?: number;
  inodesUsed?: number;
}

export interface VolumeStats extends FsStats {
  name: string;
  pvcRef?: { name: string; namespace: string };
}
