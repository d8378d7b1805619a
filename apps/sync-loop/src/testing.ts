/** Hand-written fakes of the sync loop's ports (ports.ts), for unit tests only. */
import type { KillPodOptions, NodePressureRecord, SyncLoopMonitorRecord, Pod, PodRecord, PodStatus, PodSyncStatusRecord, ProberVerb, SourcesSnapshotMessage, StatusVerb, SyncPodType } from '@app/contracts';
import type { GcContainer, GcSandbox } from './gc/container-gc.js';
import { ContainerLogFiles, ContainerLogRuntime, HostProcesses, ImageFs, ImageService, NodePressureStore, NodeState, PodDirectoriesOnDisk, PodLogs, PodStore, RuntimeView, SyncLoopMonitorStore, SyncLoopOutbox, type DeadLogLink, type GcImage, type ImageFsStats, type NodeStateView, type RemovedContainer, type RuntimeContainer, type RuntimePod } from './ports.js';

export class MemoryPodStore extends PodStore {
  readonly pods = new Map<string, PodRecord>();
  readonly queue = new Map<string, number>();
  /** Writes of pods reject, as KV does while NATS is away. */
  failWrites = false;
  loadPods(): Promise<PodRecord[]> {
    return Promise.resolve(structuredClone([...this.pods.values()]));
  }
  putPod(r: PodRecord): Promise<void> {
    if (this.failWrites) return Promise.reject(new Error('jetstream is not enabled'));
    this.pods.set(r.pod.metadata.uid ?? '', structuredClone(r));
    return Promise.resolve();
  }
  deletePod(uid: string): Promise<void> {
    if (this.failWrites) return Promise.reject(new Error('jetstream is not enabled'));
    this.pods.delete(uid);
    return Promise.resolve();
  }
  loadQueue(): Promise<Map<string, number>> {
    return Promise.resolve(new Map(this.queue));
  }
  putQueue(uid: string, dueAt: number): Promise<void> {
    this.queue.set(uid, dueAt);
    return Promise.resolve();
  }
  deleteQueue(uid: string): Promise<void> {
    this.queue.delete(uid);
    return Promise.resolve();
  }
}

/**
 * `workers` and `statuses` are the buckets; `lagging`, when set, is what the
 * mirrors still say (a watch behind the writes); `currentReads` records the
 * UIDs each `current` read.
 */
export class FakeNodeState extends NodeState {
  workers = new Map<string, PodSyncStatusRecord>();
  statuses = new Map<string, PodStatus>();
  lagging?: { workers?: Map<string, PodSyncStatusRecord>; statuses?: Map<string, PodStatus> };
  readonly currentReads: string[][] = [];
  workerStates(): Promise<Map<string, PodSyncStatusRecord>> {
    return Promise.resolve(this.workers);
  }
  podStatuses(): Promise<Map<string, PodStatus>> {
    return Promise.resolve(this.statuses);
  }
  mirrored(): NodeStateView {
    return { workers: this.lagging?.workers ?? this.workers, statuses: this.lagging?.statuses ?? this.statuses };
  }
  current(uids: readonly string[]): Promise<NodeStateView> {
    this.currentReads.push([...uids]);
    const pick = <V>(m: Map<string, V>) => new Map(uids.flatMap((uid) => (m.has(uid) ? [[uid, m.get(uid) as V] as const] : [])));
    return Promise.resolve({ workers: pick(this.workers), statuses: pick(this.statuses) });
  }
}

export class FakeRuntimeView extends RuntimeView {
  runtimePods: RuntimePod[] = [];
  containers = new Map<string, RuntimeContainer[]>();
  removed: string[] = [];
  pods(): Promise<RuntimePod[]> {
    return Promise.resolve(this.runtimePods);
  }
  containersOf(uid: string): Promise<RuntimeContainer[]> {
    return Promise.resolve(this.containers.get(uid) ?? []);
  }
  gcContainers: GcContainer[] = [];
  gcSandboxes: GcSandbox[] = [];
  removedSandboxes: string[] = [];
  inventory(): Promise<{ containers: GcContainer[]; sandboxes: GcSandbox[] }> {
    return Promise.resolve({ containers: this.gcContainers, sandboxes: this.gcSandboxes });
  }
  /** What a removed container's logs are found by: `/logs/<id>.log`, its name `c-<id>` in pod `p`/`ns`. */
  removeContainer(id: string): Promise<RemovedContainer | undefined> {
    this.removed.push(id);
    this.gcContainers = this.gcContainers.filter((c) => c.id !== id);
    return Promise.resolve({ logPath: `/logs/${id}.log`, name: `c-${id}`, podName: 'p', podNamespace: 'ns' });
  }
  /** UIDs of other stacks' sandboxes on the same runtime (allPodUids adds this node's). */
  otherStacksUids = new Set<string>();
  allPodUids(): Promise<Set<string>> {
    return Promise.resolve(new Set([...this.otherStacksUids, ...this.runtimePods.map((p) => p.uid), ...this.gcSandboxes.map((s) => s.podUid)]));
  }
  removePodSandbox(id: string): Promise<void> {
    this.removedSandboxes.push(id);
    this.gcSandboxes = this.gcSandboxes.filter((s) => s.id !== id);
    this.gcContainers = this.gcContainers.filter((c) => c.sandboxId !== id);
    return Promise.resolve();
  }
}

export class FakePodLogs extends PodLogs {
  dirs: string[] = [];
  removedLogs: string[] = [];
  directories(): Promise<string[]> {
    return Promise.resolve([...this.dirs]);
  }
  removeContainerLog(path: string): Promise<void> {
    this.removedLogs.push(path);
    return Promise.resolve();
  }
  removeDirectory(name: string): Promise<void> {
    this.dirs = this.dirs.filter((d) => d !== name);
    return Promise.resolve();
  }
  /** The links in /var/log/containers by name, and whether each one's log file is there. */
  links = new Map<string, { containerId?: string; dead: boolean }>();
  removedLinks: string[] = [];
  removeLegacyLogSymlink(c: { id: string; name: string; podName: string; podNamespace: string }): Promise<void> {
    const name = `${c.podName}_${c.podNamespace}_${c.name}-${c.id}.log`;
    this.links.delete(name);
    this.removedLinks.push(name);
    return Promise.resolve();
  }
  deadLegacyLogSymlinks(): Promise<DeadLogLink[]> {
    return Promise.resolve([...this.links].filter(([, l]) => l.dead).map(([name, l]) => ({ name, ...(l.containerId ? { containerId: l.containerId } : {}) })));
  }
  removeLegacyLogSymlinkNamed(name: string): Promise<void> {
    this.links.delete(name);
    this.removedLinks.push(name);
    return Promise.resolve();
  }
}

/** A directory of log files in memory; records every change, and can be told to fail one. */
export class FakeContainerLogFiles extends ContainerLogFiles {
  /** path -> content; gzip makes `gzip(<content>)`. */
  readonly files = new Map<string, string>();
  /** What changed, in order: `rename a b`, `remove a`, `gzip a b`. */
  readonly ops: string[] = [];
  private readonly failures = new Map<string, number>();
  /** The next `count` calls of `op` (rename, remove, gzip) fail. */
  failNext(op: 'rename' | 'remove' | 'gzip', count = 1): void {
    this.failures.set(op, (this.failures.get(op) ?? 0) + count);
  }
  write(path: string, text: string): void {
    this.files.set(path, (this.files.get(path) ?? '') + text);
  }
  /** The file names, sorted, relative to `dir`. */
  list(dir: string): string[] {
    return [...this.files.keys()].filter((p) => p.startsWith(`${dir}/`)).map((p) => p.slice(dir.length + 1)).sort();
  }
  size(path: string): Promise<number | undefined> {
    const text = this.files.get(path);
    return Promise.resolve(text === undefined ? undefined : Buffer.byteLength(text));
  }
  rotated(path: string): Promise<string[]> {
    return Promise.resolve([...this.files.keys()].filter((p) => p.startsWith(`${path}.`)));
  }
  rename(from: string, to: string): Promise<void> {
    this.fail('rename');
    const text = this.files.get(from);
    if (text === undefined) return Promise.reject(new Error(`ENOENT: no such file, rename '${from}' -> '${to}'`));
    this.ops.push(`rename ${from} ${to}`);
    this.files.delete(from);
    this.files.set(to, text);
    return Promise.resolve();
  }
  remove(path: string): Promise<void> {
    this.fail('remove');
    if (this.files.delete(path)) this.ops.push(`remove ${path}`);
    return Promise.resolve();
  }
  gzip(from: string, to: string): Promise<void> {
    this.fail('gzip');
    const text = this.files.get(from);
    if (text === undefined) return Promise.reject(new Error(`ENOENT: no such file, open '${from}'`));
    this.ops.push(`gzip ${from} ${to}`);
    this.files.set(to, `gzip(${text})`);
    return Promise.resolve();
  }
  private fail(op: string): void {
    const n = this.failures.get(op) ?? 0;
    if (n <= 0) return;
    this.failures.set(op, n - 1);
    throw new Error(`${op} failed`);
  }
}

/** The runtime's containers and their logs: ReopenContainerLog makes a new (empty) file at the log path, as containerd does, and fails unless the container runs. */
export class FakeContainerLogRuntime extends ContainerLogRuntime {
  readonly containers = new Map<string, { logPath: string; running: boolean }>();
  readonly reopened: string[] = [];
  /** ContainerStatus and ListContainers fail while set. */
  unavailable = false;
  /** Called inside ReopenContainerLog, before it answers (a container exiting meanwhile). */
  beforeReopen?: (id: string) => void;
  constructor(private readonly files: FakeContainerLogFiles) {
    super();
  }
  runningContainers(): Promise<string[]> {
    if (this.unavailable) return Promise.reject(new Error('cri-gateway: no responders'));
    return Promise.resolve([...this.containers].filter(([, c]) => c.running).map(([id]) => id));
  }
  containerLog(id: string): Promise<{ logPath: string; running: boolean } | undefined> {
    if (this.unavailable) return Promise.reject(new Error('cri-gateway: no responders'));
    const c = this.containers.get(id);
    return Promise.resolve(c && { ...c });
  }
  reopenContainerLog(id: string): Promise<void> {
    this.beforeReopen?.(id);
    const c = this.containers.get(id);
    if (!c?.running) return Promise.reject(new Error(`failed to reopen container log "${id}": container is not running`));
    this.reopened.push(id);
    if (!this.files.files.has(c.logPath)) this.files.files.set(c.logPath, '');
    return Promise.resolve();
  }
}

/** Pod directories by UID, each with its mount points; records unmounts and removals. */
export class FakePodDirectories extends PodDirectoriesOnDisk {
  readonly dirs = new Map<string, string[]>();
  readonly unmounted: string[] = [];
  readonly removed: string[] = [];
  /** Mount points `unmount` refuses (busy). */
  readonly busy = new Set<string>();
  path(uid: string): string {
    return `/pods/${uid}`;
  }
  list(): Promise<string[]> {
    return Promise.resolve([...this.dirs.keys()]);
  }
  mountsUnder(uid: string): Promise<string[]> {
    return Promise.resolve([...(this.dirs.get(uid) ?? [])]);
  }
  unmount(path: string): Promise<void> {
    if (this.busy.has(path)) return Promise.reject(new Error(`umount: ${path}: target is busy.`));
    this.unmounted.push(path);
    for (const [uid, mounts] of this.dirs) this.dirs.set(uid, mounts.filter((m) => m !== path));
    return Promise.resolve();
  }
  remove(uid: string): Promise<void> {
    this.dirs.delete(uid);
    this.removed.push(uid);
    return Promise.resolve();
  }
}

/** Records the processes killed; those in `survivors` cannot be killed. */
export class FakeHostProcesses extends HostProcesses {
  readonly killed: number[] = [];
  readonly survivors = new Set<number>();
  kill(pid: number): Promise<void> {
    if (this.survivors.has(pid)) return Promise.reject(new Error('operation not permitted'));
    this.killed.push(pid);
    return Promise.resolve();
  }
}

export interface Dispatched {
  uid: string;
  updateType: SyncPodType;
  killPodOptions?: KillPodOptions;
  runningPodOnly: boolean;
}

export class RecordingOutbox extends SyncLoopOutbox {
  dispatched: Dispatched[] = [];
  statuses: { verb: StatusVerb; uid: string; args: Record<string, unknown> }[] = [];
  probers: { verb: ProberVerb; podUids?: string[] }[] = [];
  snapshot?: SourcesSnapshotMessage;

  dispatch(pod: Pod, updateType: SyncPodType, _start: Date, killPodOptions?: KillPodOptions, runningPodOnly = false): void {
    this.dispatched.push({ uid: pod.metadata.uid ?? '', updateType, ...(killPodOptions && Object.keys(killPodOptions).length > 0 ? { killPodOptions } : {}), runningPodOnly });
  }
  status(verb: StatusVerb, uid: string, args: Record<string, unknown>): void {
    this.statuses.push({ verb, uid, args });
  }
  prober(verb: ProberVerb, _pods: Pod[], podUids?: string[]): void {
    this.probers.push({ verb, ...(podUids ? { podUids } : {}) });
  }
  sourcesSnapshot(): Promise<SourcesSnapshotMessage | undefined> {
    return Promise.resolve(this.snapshot);
  }
  /** "uid:updateType" of each dispatch, then forgets them. */
  take(): string[] {
    const out = this.dispatched.map((d) => `${d.uid}:${d.updateType}`);
    this.dispatched = [];
    return out;
  }
}

/** The runtime's Status and the PLEG's relist as the test sets them (runtimeState's inputs, shared in @app/kube). */
export { FakeNodeHealth } from '@app/kube/testing';

/** The node-pressure records written, newest last; can be told to fail. */
export class MemoryNodePressureStore extends NodePressureStore {
  readonly records: NodePressureRecord[] = [];
  fail = false;
  get(): Promise<NodePressureRecord | undefined> {
    return Promise.resolve(this.last && structuredClone(this.last));
  }
  put(record: NodePressureRecord): Promise<void> {
    if (this.fail) return Promise.reject(new Error('not leader'));
    this.records.push(structuredClone(record));
    return Promise.resolve();
  }
  get last(): NodePressureRecord | undefined {
    return this.records.at(-1);
  }
}
MemoryNodePressureStore satisfies new () => NodePressureStore;

/** The runtime's images: `removeImage` takes the image out of `images` and frees its size on `fs` (when given). */
export class FakeImageService extends ImageService {
  images: GcImage[] = [];
  /** The images the runtime's containers use (ids or names). */
  inUse: string[] = [];
  sandbox?: string;
  removed: string[] = [];
  /** Ids whose removal fails. */
  failRemove = new Set<string>();
  failList = false;
  constructor(private readonly fs?: FakeImageFs) {
    super();
  }
  listImages(): Promise<GcImage[]> {
    if (this.failList) return Promise.reject(new Error('rpc error: code = Unavailable desc = connection refused'));
    return Promise.resolve(this.images.map((i) => ({ ...i })));
  }
  containerImages(): Promise<string[]> {
    return Promise.resolve([...this.inUse]);
  }
  sandboxImage(): Promise<string | undefined> {
    return Promise.resolve(this.sandbox);
  }
  removeImage(id: string): Promise<void> {
    if (this.failRemove.has(id)) return Promise.reject(new Error(`rpc error: code = Unknown desc = failed to remove ${id}`));
    const image = this.images.find((i) => i.id === id);
    if (!image) return Promise.reject(new Error(`rpc error: code = NotFound desc = image ${id} not found`));
    this.removed.push(id);
    this.images = this.images.filter((i) => i.id !== id);
    if (this.fs) this.fs.current.availableBytes += image.size;
    return Promise.resolve();
  }
}

export class FakeImageFs extends ImageFs {
  current: ImageFsStats = { capacityBytes: 1000, availableBytes: 1000 };
  fail?: string;
  stats(): Promise<ImageFsStats> {
    return this.fail ? Promise.reject(new Error(this.fail)) : Promise.resolve({ ...this.current });
  }
}

/** The sync loop monitor's records as written; `fail` makes each write reject. */
export class MemorySyncLoopMonitorStore extends SyncLoopMonitorStore {
  readonly records: SyncLoopMonitorRecord[] = [];
  fail = false;
  put(record: SyncLoopMonitorRecord): Promise<void> {
    if (this.fail) return Promise.reject(new Error('not the leader: refused to write the sync loop monitor'));
    this.records.push({ ...record });
    return Promise.resolve();
  }
}
