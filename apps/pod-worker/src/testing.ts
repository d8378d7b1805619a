/** Hand-written fakes of the pod worker's ports (ports.ts), for unit tests only. */
import type { ApiObjectKind, Container, Pod, PodRecord, PodStatus, PodSyncStatusRecord, ProberVerb, ProbeResultValue, ProbeType, Service, StatusVerb } from '@app/contracts';
import { VolumeHost, type FileKind, type PayloadFile } from './volumemanager/volumes.js';
import { CgroupManager, type CgroupName, type ResourceConfig } from './cm/pod-container-manager.js';
import { ApiObjects, ApiObjectsError, ContainerFiles, DesiredPods, HookRunner, ServiceAccountTokens, LeaseStore, PodDirectories, PodInspector, PodStatusProvider, PodWorkerOutbox, ProbeResultsReader, WorkSubscriptions, WorkerStore, type ApiObjectPayload, type KeptPodStatus, type ProbeResultsView, type ReplicaHeartbeat, type ShardLease, type WorkerRecords } from './ports.js';

/** The podManager in memory. */
export class MemoryDesiredPods extends DesiredPods {
  readonly pods = new Map<string, PodRecord>();
  /** When set, what the mirror still says (a watch behind the writes). */
  lagging?: Map<string, PodRecord>;
  /** How many listings (`all`) and gets were made. */
  listings = 0;
  gets = 0;
  /** When set, each listing waits for it (a listing that hangs: a promise that never resolves). */
  holdListings?: Promise<void>;
  all(): Promise<Map<string, PodRecord>> {
    this.listings++;
    return this.holdListings ? this.holdListings.then(() => new Map(this.pods)) : Promise.resolve(new Map(this.pods));
  }
  mirrored(): Map<string, PodRecord> {
    return new Map(this.lagging ?? this.pods);
  }
  get(uid: string): Promise<PodRecord | undefined> {
    this.gets++;
    return Promise.resolve(this.pods.get(uid));
  }
}

/** The `workers` bucket in memory: what a PodWorkers saves and a ShardWork reads and purges; `deletes` records each purge; `loads` counts the gets. */
export class MemoryWorkerStore extends WorkerStore implements WorkerRecords {
  readonly records = new Map<string, PodSyncStatusRecord>();
  readonly deletes: string[] = [];
  loads = 0;
  load(uid: string): Promise<PodSyncStatusRecord | undefined> {
    this.loads++;
    return Promise.resolve(structuredClone(this.records.get(uid)));
  }
  /** When set, every save fails with it (KV away, the shard's fence refusing). */
  failSaves?: Error;
  save(uid: string, record: PodSyncStatusRecord): Promise<void> {
    if (this.failSaves) return Promise.reject(this.failSaves);
    this.records.set(uid, structuredClone(record));
    return Promise.resolve();
  }
  delete(uid: string): Promise<void> {
    this.deletes.push(uid);
    this.records.delete(uid);
    return Promise.resolve();
  }
  /** When set, what the mirror still says (a watch behind the writes). */
  lagging?: Map<string, PodSyncStatusRecord>;
  /** How many listings (`all`) were made. */
  listings = 0;
  all(): Promise<Map<string, PodSyncStatusRecord>> {
    this.listings++;
    return Promise.resolve(structuredClone(this.records));
  }
  mirrored(): Map<string, PodSyncStatusRecord> {
    return structuredClone(this.lagging ?? this.records);
  }
}

/** Work subjects in memory: `deliver` sends a message to a followed shard. */
export class FakeWorkSubscriptions extends WorkSubscriptions {
  private readonly handlers = new Map<number, (subject: string, data: Uint8Array) => boolean | Promise<boolean>>();
  private readonly replies: Promise<boolean>[] = [];

  /** What each delivery's handler answered once settled (true: the work was taken and stored; a rejection: false), in order. */
  answers(): Promise<boolean[]> {
    return Promise.all(this.replies);
  }

  follow(shard: number, onMessage: (subject: string, data: Uint8Array) => boolean | Promise<boolean>): () => void {
    this.handlers.set(shard, onMessage);
    return () => this.handlers.delete(shard);
  }

  /** The shards followed now. */
  get followed(): number[] {
    return [...this.handlers.keys()].sort((a, b) => a - b);
  }

  /** Delivers `body` (JSON-encoded unless a string) on the shard's work subject; false when nobody follows it. */
  deliver(shard: number, body: unknown): boolean {
    const handler = this.handlers.get(shard);
    if (!handler) return false;
    const taken = handler(`kubelet.node-a.work.${shard}.x`, new TextEncoder().encode(typeof body === 'string' ? body : JSON.stringify(body)));
    this.replies.push(Promise.resolve(taken).catch(() => false));
    return true;
  }
}

/**
 * The `leases` bucket in memory, with the compare-and-set of JetStream KV
 * (every write bumps one revision counter; a put or release at a stale
 * revision loses), shared by the replicas a test runs, recording every call,
 * and able to lose a race on demand.
 */
export class FakeLeaseStore extends LeaseStore {
  private readonly leases = new Map<number, { lease: ShardLease; revision: number }>();
  private revision = 0;
  /** Every call, as `get 0`, `put 1 @3 owner=a -> true`, `release 2 @5`. */
  readonly calls: string[] = [];
  private readonly raceLost = new Set<number>();

  /** Every call fails, as when NATS is away. */
  unreachable = false;

  get(shard: number): Promise<{ lease: ShardLease; revision: number } | undefined> {
    if (this.unreachable) return Promise.reject(new Error('the leases bucket is unreachable'));
    this.calls.push(`get ${shard}`);
    const l = this.leases.get(shard);
    return Promise.resolve(l ? { lease: { ...l.lease }, revision: l.revision } : undefined);
  }

  put(shard: number, lease: ShardLease, revision: number): Promise<boolean> {
    if (this.unreachable) return Promise.reject(new Error('the leases bucket is unreachable'));
    const current = this.leases.get(shard)?.revision ?? 0;
    let ok = current === revision;
    if (this.raceLost.delete(shard)) {
      // Another replica's write lands first: the revision moves under the caller.
      this.write(shard, { owner: 'racer', expiresAt: lease.expiresAt });
      ok = false;
    }
    if (ok) this.leases.set(shard, { lease: { ...lease }, revision: ++this.revision });
    this.calls.push(`put ${shard} @${revision} owner=${lease.owner} -> ${ok}`);
    return Promise.resolve(ok);
  }

  release(shard: number, revision: number): Promise<void> {
    this.calls.push(`release ${shard} @${revision}`);
    if (this.leases.get(shard)?.revision === revision) {
      this.leases.delete(shard);
      // As the bucket's watch tells every replica (after the call returns).
      queueMicrotask(() => {
        for (const l of this.releaseListeners) l();
      });
    }
    return Promise.resolve();
  }

  private readonly releaseListeners = new Set<() => void>();

  onRelease(listener: () => void): () => void {
    this.releaseListeners.add(listener);
    return () => this.releaseListeners.delete(listener);
  }

  private readonly heartbeats = new Map<string, ReplicaHeartbeat>();

  announce(owner: string, expiresAt: number): Promise<void> {
    if (this.unreachable) return Promise.reject(new Error('the leases bucket is unreachable'));
    this.calls.push(`announce ${owner}`);
    this.heartbeats.set(owner, { owner, expiresAt, revision: ++this.revision });
    return Promise.resolve();
  }

  replicas(): Promise<ReplicaHeartbeat[]> {
    return Promise.resolve([...this.heartbeats.values()].map((h) => ({ ...h })));
  }

  withdraw(owner: string, revision?: number): Promise<void> {
    this.calls.push(`withdraw ${owner}`);
    if (revision === undefined || this.heartbeats.get(owner)?.revision === revision) this.heartbeats.delete(owner);
    return Promise.resolve();
  }

  /** The replicas with a heartbeat, live or not. */
  get announced(): string[] {
    return [...this.heartbeats.keys()].sort();
  }

  /** Writes a lease behind the replicas' backs (another replica taking or renewing it). */
  write(shard: number, lease: ShardLease): void {
    this.leases.set(shard, { lease: { ...lease }, revision: ++this.revision });
  }

  /** The next put on `shard` loses the compare-and-set to another replica's write. */
  loseNextRace(shard: number): void {
    this.raceLost.add(shard);
  }

  /** The owner of each shard's lease (undefined when there is none), by shard. */
  owners(shards: number): (string | undefined)[] {
    return Array.from({ length: shards }, (_, s) => this.leases.get(s)?.lease.owner);
  }

  lease(shard: number): ShardLease | undefined {
    return this.leases.get(shard)?.lease;
  }
}

/**
 * The cgroups in memory, by their cgroupfs name (`/kubepods/burstable/pod<uid>`), with what each was
 * limited to; `create` and `destroy` go into `calls` as `cgroup create <name>` / `cgroup destroy <name>`
 * (only names that existed), and `fail` makes every create fail with that message.
 */
export class FakeCgroupManager extends CgroupManager {
  readonly cgroups = new Map<string, ResourceConfig>();
  /** Processes by the literal name of the cgroup they are in. */
  readonly procs = new Map<string, number[]>();
  fail?: string;
  constructor(readonly calls: string[] = []) {
    super();
  }
  exists(name: CgroupName): Promise<boolean> {
    return Promise.resolve(this.cgroups.has(`/${name.join('/')}`));
  }
  create(name: CgroupName, resources: ResourceConfig): Promise<void> {
    if (this.fail) return Promise.reject(new Error(this.fail));
    const key = `/${name.join('/')}`;
    if (!this.cgroups.has(key) && key.includes('/pod')) this.calls.push(`cgroup create ${key}`);
    this.cgroups.set(key, resources);
    return Promise.resolve();
  }
  destroy(name: CgroupName): Promise<void> {
    const key = `/${name.join('/')}`;
    if (this.cgroups.delete(key)) this.calls.push(`cgroup destroy ${key}`);
    return Promise.resolve();
  }
  pids(name: CgroupName): Promise<number[]> {
    const key = `/${name.join('/')}`;
    return Promise.resolve([...this.procs].filter(([k]) => k === key || k.startsWith(`${key}/`)).flatMap(([, p]) => p));
  }
  children(name: CgroupName): Promise<string[]> {
    const prefix = `/${name.join('/')}/`;
    return Promise.resolve([...this.cgroups.keys()].filter((k) => k.startsWith(prefix) && !k.slice(prefix.length).includes('/')).map((k) => k.slice(prefix.length)));
  }
}

/**
 * Records each hook run as `<container> <containerId>`; `fail` makes every run fail with that message;
 * while `hold` is set, a run waits for it.
 */
export class FakeHookRunner extends HookRunner {
  readonly runs: string[] = [];
  fail?: string;
  hold?: Promise<void>;
  async run(_pod: Pod, container: Container, containerId: string): Promise<string | undefined> {
    this.runs.push(`${container.name} ${containerId}`);
    await this.hold;
    return this.fail;
  }
}

/** Records `dirs ensure <uid>` and `dirs remove <uid>` into `calls` (which a test may share with other fakes). */
export class FakePodDirectories extends PodDirectories {
  constructor(readonly calls: string[] = []) {
    super();
  }
  /** When set, ensure fails with it (a volume that cannot be mounted). */
  ensureError: Error | undefined;
  /** What ensure resolves with: volumes set up before whose refresh failed. */
  remountFailures: { volume: string; message: string }[] = [];
  ensure(pod: Pod): Promise<{ volume: string; message: string }[]> {
    this.calls.push(`dirs ensure ${pod.metadata.uid ?? ''}`);
    if (this.ensureError) return Promise.reject(this.ensureError);
    return Promise.resolve(this.remountFailures);
  }
  remove(pod: Pod): Promise<void> {
    this.calls.push(`dirs remove ${pod.metadata.uid ?? ''}`);
    return Promise.resolve();
  }
}

/** Records each inspection asked of the PLEG, and calls `onInspect` (a test's PLEG writing the pod's entry). */
export class FakePodInspector extends PodInspector {
  readonly asked: { uid: string; syncEnd: number }[] = [];
  onInspect?: (uid: string, syncEnd: number) => void;
  /** Every call throws, as when NATS is away. */
  unreachable = false;
  inspect(uid: string, syncEnd: number): void {
    if (this.unreachable) throw new Error('NATS is away');
    this.asked.push({ uid, syncEnd });
    this.onInspect?.(uid, syncEnd);
  }
}

/** Records `status <verb> <phase>[/<reason>]` and `prober <verb>`, into `log` (which a test may share with other fakes). */
export class RecordingOutbox extends PodWorkerOutbox {
  readonly statuses: { verb: StatusVerb; pod: Pod; status: PodStatus }[] = [];
  constructor(readonly log: string[] = []) {
    super();
  }
  status(verb: StatusVerb, pod: Pod, args: Record<string, unknown>): void {
    const status = (args['status'] ?? {}) as PodStatus;
    this.statuses.push({ verb, pod, status });
    this.log.push(`status ${verb} ${status.phase ?? ''}${status.reason ? `/${status.reason}` : ''}`);
  }
  prober(verb: ProberVerb, _pod: Pod): void {
    this.log.push(`prober ${verb}`);
  }
  /** The last status sent. */
  get last(): PodStatus | undefined {
    return this.statuses.at(-1)?.status;
  }
}

/**
 * The `probe-results` bucket in memory: the test sets a result by probe type
 * and container ID (none by default); each read is a snapshot, as the
 * bucket's is. `failNext` makes the next read reject.
 */
export class FakeProbeResults extends ProbeResultsReader {
  private readonly results: Record<ProbeType, Map<string, ProbeResultValue>> = { liveness: new Map(), readiness: new Map(), startup: new Map() };
  /** The UIDs read, in order. */
  readonly reads: string[] = [];
  private failures = 0;

  set(probeType: ProbeType, containerId: string, result: ProbeResultValue | undefined): this {
    if (result === undefined) this.results[probeType].delete(containerId);
    else this.results[probeType].set(containerId, result);
    return this;
  }

  failNext(): this {
    this.failures++;
    return this;
  }

  forPod(pod: Pod): Promise<ProbeResultsView> {
    this.reads.push(pod.metadata.uid ?? '');
    if (this.failures > 0) {
      this.failures--;
      return Promise.reject(new Error('probe-results read failed'));
    }
    const snapshot = structuredClone(this.results);
    const known = (r: ProbeResultValue | undefined) => (r === 'Unknown' ? undefined : r);
    return Promise.resolve({
      liveness: (id) => known(snapshot.liveness.get(id)),
      readiness: (id) => known(snapshot.readiness.get(id)),
      startup: (id) => known(snapshot.startup.get(id)),
    });
  }
}

/**
 * The status manager's `pod-status` bucket as a pod worker reads it: what
 * `follow` (a RecordingOutbox) sent last for the UID, TerminatePod marking
 * it finished, as a status manager that keeps every status would; or what
 * the test puts in `kept`, which wins.
 */
export class FakePodStatusProvider extends PodStatusProvider {
  readonly kept = new Map<string, KeptPodStatus>();

  constructor(private readonly follow?: RecordingOutbox) {
    super();
  }

  getPodStatus(uid: string): Promise<KeptPodStatus | undefined> {
    const kept = this.kept.get(uid);
    if (kept) return Promise.resolve(structuredClone(kept));
    const sent = this.follow?.statuses.filter((s) => s.pod.metadata.uid === uid).at(-1);
    return Promise.resolve(sent && { status: structuredClone(sent.status), podIsFinished: sent.verb === 'TerminatePod' });
  }
}

/** Records `hosts <path>` and `termination-log <path>` into `calls`; the hosts files written are in `hostsFiles`. */
export class FakeContainerFiles extends ContainerFiles {
  readonly calls: string[] = [];
  readonly hostsFiles = new Map<string, string>();
  nodeHosts = '127.0.0.1\tlocalhost\n10.0.0.1\tnode-1\n';
  private made = 0;
  writeHostsFile(path: string, content: string): Promise<void> {
    this.calls.push(`hosts ${path}`);
    this.hostsFiles.set(path, content);
    return Promise.resolve();
  }
  nodeHostsFile(): Promise<string> {
    return Promise.resolve(this.nodeHosts);
  }
  createTerminationMessageFile(dir: string): Promise<string> {
    const path = `${dir}/msg-${++this.made}`;
    this.calls.push(`termination-log ${path}`);
    return Promise.resolve(path);
  }
}

// Each fake is its port, checked by the compiler.
const _ports: [LeaseStore, HookRunner, PodDirectories, PodWorkerOutbox, ProbeResultsReader, PodStatusProvider, WorkerStore, WorkerRecords, ContainerFiles] = [
  new FakeLeaseStore(),
  new FakeHookRunner(),
  new FakePodDirectories(),
  new RecordingOutbox(),
  new FakeProbeResults(),
  new FakePodStatusProvider(),
  new MemoryWorkerStore(),
  new MemoryWorkerStore(),
  new FakeContainerFiles(),
];
void _ports;

/**
 * The apiserver's objects as config-source would answer for them: `put` an
 * object, `remove` it, `failWith` an error code for every request
 * (`NotJoined`, `Unavailable`); `asked` records `<kind> <namespace>/<name>`.
 */
export class FakeApiObjects extends ApiObjects {
  readonly objects = new Map<string, ApiObjectPayload>();
  readonly asked: string[] = [];
  failure?: { code: string; message: string };

  put(kind: ApiObjectKind, namespace: string, name: string, obj: Partial<ApiObjectPayload>): void {
    this.objects.set(`${kind} ${namespace}/${name}`, { data: {}, binaryData: {}, ...obj });
  }
  remove(kind: ApiObjectKind, namespace: string, name: string): void {
    this.objects.delete(`${kind} ${namespace}/${name}`);
  }
  failWith(code: string, message: string): void {
    this.failure = { code, message };
  }
  get(kind: ApiObjectKind, namespace: string, name: string): Promise<ApiObjectPayload | undefined> {
    const key = `${kind} ${namespace}/${name}`;
    this.asked.push(key);
    if (this.failure) return Promise.reject(new ApiObjectsError(this.failure.code, this.failure.message));
    const obj = this.objects.get(key);
    return Promise.resolve(obj ? structuredClone(obj) : undefined);
  }

  /** The cluster's services (`serviceList`), and the failure of the services' request alone (`servicesFailure`). */
  readonly serviceList: Service[] = [];
  servicesFailure?: { code: string; message: string };
  services(namespace: string): Promise<Service[]> {
    if (this.servicesFailure) return Promise.reject(new ApiObjectsError(this.servicesFailure.code, this.servicesFailure.message));
    return Promise.resolve(structuredClone(this.serviceList.filter((s) => s.metadata?.namespace === namespace || s.metadata?.namespace === 'default')));
  }
}

/** Records `<verb> <path>` into `calls`; `kinds` says what is at a path; `failUnmount` leaves a mount in place. */
export class FakeVolumeHost extends VolumeHost {
  readonly calls: string[] = [];
  readonly mounts = new Set<string>();
  readonly written = new Map<string, Map<string, PayloadFile>>();
  failUnmount = false;
  constructor(readonly kinds: Record<string, FileKind> = {}) {
    super();
  }
  fileKind(path: string): Promise<FileKind> {
    return Promise.resolve(this.kinds[path] ?? 'missing');
  }
  mkdir(path: string, mode: number): Promise<void> {
    this.calls.push(`mkdir ${path} ${mode.toString(8)}`);
    return Promise.resolve();
  }
  createFile(path: string): Promise<void> {
    this.calls.push(`createFile ${path}`);
    return Promise.resolve();
  }
  mountPoints(): Promise<string[]> {
    return Promise.resolve([...this.mounts]);
  }
  mountTmpfs(path: string, sizeBytes: number): Promise<void> {
    this.calls.push(`mountTmpfs ${path} ${sizeBytes}`);
    this.mounts.add(path);
    return Promise.resolve();
  }
  unmount(path: string): Promise<void> {
    this.calls.push(`unmount ${path}`);
    if (!this.failUnmount) this.mounts.delete(path);
    return Promise.resolve();
  }
  writeAtomic(dir: string, files: Map<string, PayloadFile>): Promise<boolean> {
    this.calls.push(`writeAtomic ${dir}`);
    const same = sameFiles(this.written.get(dir), files);
    this.written.set(dir, files);
    this.kinds[`${dir}/..data`] = 'directory';
    return Promise.resolve(!same);
  }
  removeAll(path: string): Promise<void> {
    this.calls.push(`removeAll ${path}`);
    return Promise.resolve();
  }
  setOwnership(dir: string, fsGroup: number, readOnly: boolean): Promise<void> {
    this.calls.push(`setOwnership ${dir} ${fsGroup} ${readOnly ? 'ro' : 'rw'}`);
    return Promise.resolve();
  }
}
const _volumeHost = new FakeVolumeHost() satisfies VolumeHost;

/** Whether two payloads hold the same files with the same content and modes (the writer's "nothing to write"). */
function sameFiles(a: Map<string, PayloadFile> | undefined, b: Map<string, PayloadFile>): boolean {
  if (!a || a.size !== b.size) return false;
  for (const [path, f] of b) {
    const g = a.get(path);
    if (!g || g.mode !== f.mode || !Buffer.from(g.content).equals(Buffer.from(f.content))) return false;
  }
  return true;
}

/** Tokens as config-source would mint them: `token-of-<sa>-for-<pod>(<audience>,<seconds>)`; `failWith` makes every request fail. */
export class FakeServiceAccountTokens extends ServiceAccountTokens {
  readonly asked: string[] = [];
  failure?: { code: string; message: string };
  failWith(code: string, message: string): void {
    this.failure = { code, message };
  }
  get(pod: Pod, audience: string | undefined, expirationSeconds: number): Promise<string> {
    const sa = pod.spec.serviceAccountName || 'default';
    this.asked.push(`${pod.metadata.namespace ?? ''}/${sa}`);
    if (this.failure) return Promise.reject(new ApiObjectsError(this.failure.code, this.failure.message));
    return Promise.resolve(`token-of-${sa}-for-${pod.metadata.name ?? ''}(${audience ?? ''},${expirationSeconds})`);
  }
}
