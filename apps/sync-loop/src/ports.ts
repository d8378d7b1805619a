/**
 * The narrow ports the sync loop depends on; the adapters (KV, NATS, CRI)
 * are in adapters/, the fakes in testing.ts. Events go through
 * @app/contracts' EventRecorder.
 */
import type { GcContainer, GcSandbox } from './gc/container-gc.js';
import type { KillPodOptions, NodePressureRecord, SyncLoopMonitorRecord, Pod, PodRecord, PodStatus, PodSyncStatusRecord, ProberVerb, StatusVerb, SourcesSnapshotMessage, SyncPodType } from '@app/contracts';

/** The `pods` bucket: desired pods and work-queue entries. The sync loop is its only writer. */
export abstract class PodStore {
  abstract loadPods(): Promise<PodRecord[]>;
  abstract putPod(record: PodRecord): Promise<void>;
  abstract deletePod(uid: string): Promise<void>;
  abstract loadQueue(): Promise<Map<string, number>>;
  abstract putQueue(uid: string, dueAt: number): Promise<void>;
  abstract deleteQueue(uid: string): Promise<void>;
}

/** The pod workers' records and the status manager's statuses, by UID. */
export interface NodeStateView {
  workers: ReadonlyMap<string, PodSyncStatusRecord>;
  statuses: ReadonlyMap<string, PodStatus>;
}

/** What other services own that the sync loop reads. */
export abstract class NodeState {
  /** The pod workers' podSyncStatuses (`workers` bucket), each at its value at the call or newer (a listing of the bucket). */
  abstract workerStates(): Promise<Map<string, PodSyncStatusRecord>>;
  /** The status manager's statuses (`pod-status` bucket), by UID, at the call or newer (a listing). */
  abstract podStatuses(): Promise<Map<string, PodStatus>>;
  /**
   * Both, as this process's watch-kept mirrors have them: no listing, each
   * key at most the watch's lag old (docs/adr/0019-kv-mirrors.md). For the
   * periodic passes, which read again (`current`) the pods they act on.
   */
  abstract mirrored(): NodeStateView;
  /** The records and statuses of `uids` only, each at its value at the call or newer (a get each). */
  abstract current(uids: readonly string[]): Promise<NodeStateView>;
}

/** What syncLoop's health gate reads: runtimeState's inputs (@app/kube runtime-state.ts). */
export { NodeHealth } from '@app/kube';

/** A pod as the runtime has it (from the kubelet's labels on its sandboxes and containers). */
export interface RuntimePod {
  uid: string;
  name: string;
  namespace: string;
  /** Anything still running: a ready sandbox or a running container. */
  running: boolean;
}

export interface RuntimeContainer {
  id: string;
  name: string;
  state: string;
  createdAt: number;
}

export abstract class RuntimeView {
  abstract pods(): Promise<RuntimePod[]>;
  abstract containersOf(uid: string): Promise<RuntimeContainer[]>;
  /** This node's containers and sandboxes, for the container GC. */
  abstract inventory(): Promise<{ containers: GcContainer[]; sandboxes: GcSandbox[] }>;
  /** RemoveContainer; resolves to what its logs are found by (ContainerStatus, read first), if it could be read. */
  abstract removeContainer(id: string): Promise<RemovedContainer | undefined>;
  /** RemovePodSandbox (it removes the sandbox's containers too). */
  abstract removePodSandbox(id: string): Promise<void>;
  /** The pod UIDs of every sandbox on the runtime, whichever stack made it (the cgroup tree is the host's). */
  abstract allPodUids(): Promise<Set<string>>;
}

/** The pods' directories under POD_ROOT_DIR (`<root>/<uid>`), for cleanupOrphanedPodDirs. */
export abstract class PodDirectoriesOnDisk {
  /** `<root>/<uid>` */
  abstract path(uid: string): string;
  /** listPodsFromDisk: the UIDs with a directory. */
  abstract list(): Promise<string[]>;
  /** The mount points at or below the pod's directory, from the mount table. */
  abstract mountsUnder(uid: string): Promise<string[]>;
  abstract unmount(path: string): Promise<void>;
  /** Removes the pod's directory and everything in it, never following a symlink. */
  abstract remove(uid: string): Promise<void>;
}

/** The host's processes: an orphaned pod cgroup's are killed before it is removed. */
export abstract class HostProcesses {
  /** SIGKILL; a process already gone is fine. */
  abstract kill(pid: number): Promise<void>;
}

/** A removed container's log file and the names its legacy log symlink is made of (its labels). */
export interface RemovedContainer {
  /** Empty when it had none. */
  logPath: string;
  name: string;
  podName: string;
  podNamespace: string;
}

/** A legacy log symlink whose log file is gone (/var/log/containers). */
export interface DeadLogLink {
  /** The link's file name in the directory. */
  name: string;
  /** The container ID its name ends with; undefined when the name is not one of the kubelet's. */
  containerId?: string;
}

/**
 * The pods' log files on the node (the kubelet's /var/log/pods), and their
 * legacy symlinks (/var/log/containers): the container GC removes them with
 * what they belong to.
 */
export abstract class PodLogs {
  /** The directory names under the log root (`<namespace>_<name>_<uid>`). */
  abstract directories(): Promise<string[]>;
  /** removeContainerLog: the container's log file and its rotated ones (`<path>.*`). */
  abstract removeContainerLog(path: string): Promise<void>;
  abstract removeDirectory(name: string): Promise<void>;
  /** removeContainerLog's second half: the container's link in /var/log/containers, if there is one. */
  abstract removeLegacyLogSymlink(container: { id: string; name: string; podName: string; podNamespace: string }): Promise<void>;
  /** The links in /var/log/containers whose log file is gone. */
  abstract deadLegacyLogSymlinks(): Promise<DeadLogLink[]>;
  abstract removeLegacyLogSymlinkNamed(name: string): Promise<void>;
}

/** The runtime's side of the container log manager (logs/container-log-manager.ts): CRI ListContainers, ContainerStatus, ReopenContainerLog. */
export abstract class ContainerLogRuntime {
  /** The IDs of this node's running containers (ListContainers, by the kubelet's node label). */
  abstract runningContainers(): Promise<string[]>;
  /** ContainerStatus: its log file (empty when it has none) and whether it runs; undefined once it is gone. */
  abstract containerLog(id: string): Promise<{ logPath: string; running: boolean } | undefined>;
  /** ReopenContainerLog: the runtime closes the container's log and opens a new file at its path; fails unless it runs. */
  abstract reopenContainerLog(id: string): Promise<void>;
}

/** The container log files the log manager rotates (upstream's OSInterface, as container_log_manager.go uses it). */
export abstract class ContainerLogFiles {
  /** The file's size in bytes; undefined when there is none. */
  abstract size(path: string): Promise<number | undefined>;
  /** The paths named `<path>.*` beside it: rotated logs, compressed or not, and a failed rotation's leftovers. */
  abstract rotated(path: string): Promise<string[]>;
  abstract rename(from: string, to: string): Promise<void>;
  /** Removes the file; one already gone is not an error. */
  abstract remove(path: string): Promise<void>;
  /** Writes `from` gzip-compressed to `to` (created or truncated, with `from`'s mode). */
  abstract gzip(from: string, to: string): Promise<void>;
}

/** Everything the sync loop sends out. */
export abstract class SyncLoopOutbox {
  /** dispatchWork: `kubelet.<node>.work.<shard>.<uid>`. */
  abstract dispatch(pod: Pod, updateType: SyncPodType, startTime: Date, killPodOptions?: KillPodOptions, runningPodOnly?: boolean): void;
  abstract status(verb: StatusVerb, uid: string, args: Record<string, unknown>): void;
  abstract prober(verb: ProberVerb, pods: Pod[], podUids?: string[]): void;
  /** The config sources' current listings, or undefined when config-source does not answer. */
  abstract sourcesSnapshot(): Promise<SourcesSnapshotMessage | undefined>;
}

/** The `pods` bucket's `<node>.node-pressure` (ADR 0014): what the eviction manager observed, for the status manager's Node. */
export abstract class NodePressureStore {
  /** The record the last leader wrote, if any. */
  abstract get(): Promise<NodePressureRecord | undefined>;
  abstract put(record: NodePressureRecord): Promise<void>;
}

/** The `leases` bucket's `<node>.node-labels`: the API Node's labels, as node-status last read them (admission matches against them). */
export abstract class NodeLabelsView {
  /** The labels, or undefined while node-status has written none (no cluster, or not registered yet). */
  abstract read(): Promise<Record<string, string> | undefined>;
}

/** The `pods` bucket's `<node>.sync-loop-monitor`: the loop's latest entry time, for the kubelet server's `/healthz`. */
export abstract class SyncLoopMonitorStore {
  /** Writes the record (the leader's only: NotLeaderError otherwise). */
  abstract put(record: SyncLoopMonitorRecord): Promise<void>;
}

/** An image as the image GC sees it (CRI Image; size in bytes). */
export interface GcImage {
  id: string;
  repoTags: string[];
  repoDigests: string[];
  size: number;
  pinned: boolean;
}

/** The runtime's images, for the image GC (images/image-gc-manager.ts). */
export abstract class ImageService {
  /** ListImages. */
  abstract listImages(): Promise<GcImage[]>;
  /** The image of every container in the runtime, whatever its state or node (imageId, else imageRef): upstream's GetPods(all=true). */
  abstract containerImages(): Promise<string[]>;
  /** The image the runtime makes sandboxes from (containerd: Status verbose, config.sandboxImage), when it says. */
  abstract sandboxImage(): Promise<string | undefined>;
  /** RemoveImage, by id; the leader's only. */
  abstract removeImage(id: string): Promise<void>;
}

/** The image filesystem: capacity and available bytes (statfs of its mountpoint), what the runtime says it uses. */
export interface ImageFsStats {
  capacityBytes: number;
  availableBytes: number;
  usedBytes?: number;
  mountpoint?: string;
}

/** ImageFsStats (the stats provider's): CRI ImageFsInfo bounded by the filesystem holding its mountpoint. */
export abstract class ImageFs {
  abstract stats(): Promise<ImageFsStats>;
}

/** The sync loop's Prometheus series, under upstream's names where it has them (adapters/prom-sync-loop-metrics.ts). */
export abstract class SyncLoopMetrics {
  /** kubelet_split_dispatched_work_total{update_type}: one dispatchWork. */
  abstract workDispatched(updateType: SyncPodType): void;
  /** kubelet_split_work_dispatch_retries_total: a dispatch sent again, no shard owner had accepted it (work-delivery.ts). */
  abstract workDispatchRetried(): void;
  /** kubelet_split_work_dispatch_dropped_total{reason}: a dispatch no owner accepted, given up. */
  abstract workDispatchDropped(reason: 'expired' | 'displaced' | 'not-leader'): void;
  /** metrics.Evictions (kubelet_evictions{eviction_signal}): a pod evicted for `signal`. */
  abstract podEvicted(signal: string): void;
  /** metrics.ImageGarbageCollectedTotal (kubelet_image_garbage_collected_total{reason}): an image removed. */
  abstract imageGarbageCollected(reason: 'age' | 'space'): void;
  /**
   * metrics.OrphanPodCleanedVolumes and OrphanPodCleanedVolumesErrors
   * (kubelet_orphan_pod_cleaned_volumes, ..._errors), set by each
   * cleanupOrphanedPodDirs pass: the orphaned pods whose directories it
   * tried to clean, and those it could not.
   */
  abstract orphanedPodDirsCleaned(cleaned: number, errors: number): void;
}
