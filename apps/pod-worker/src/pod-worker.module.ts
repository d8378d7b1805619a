import { availableParallelism, totalmem } from 'node:os';
import { Inject, Module, type OnApplicationShutdown, type OnModuleInit } from '@nestjs/common';
import { CgroupfsManager, killHostProcess } from '@app/cm';
import { Clock, SystemClock } from '@app/clock';
import { EventRecorder } from '@app/contracts';
import { CriRuntime, DEFAULT_CRI_TIMEOUTS, NatsCriClient } from '@app/cri/client';
import { NatsBus, NatsEventRecorder, type NatsConnection } from '@app/nats';
import type { Logger, Registry } from '@app/observability';
import { KvPodCache, PodCache } from '@app/pod-cache';
import { HealthChecks, METRICS_REGISTRY, NATS_CONNECTION, SERVICE_CONFIG, SERVICE_CONTEXT, SERVICE_LOGGER, bucketOf, type ServiceContext } from '@app/service';
import { CriHookRunner } from './adapters/cri-hook-runner.js';
import { FsContainerLogLinks } from './adapters/fs-container-log-links.js';
import { FsContainerFiles } from './adapters/fs-container-files.js';
import { FsPodDirectories } from './adapters/fs-pod-directories.js';
import { FsVolumeHost } from './adapters/fs-volume-host.js';
import { HOST_RESOLV_CONF, readHostDns, thermalThrottlePaths } from './adapters/host-dns.js';
import { KvDesiredPods } from './adapters/kv-desired-pods.js';
import { KvLeaseStore } from './adapters/kv-lease-store.js';
import { KvWorkerStore } from './adapters/kv-worker-store.js';
import { NatsApiObjects } from './adapters/nats-api-objects.js';
import { NatsServiceAccountTokens } from './adapters/nats-service-account-tokens.js';
import { NatsPodInspector } from './adapters/nats-pod-inspector.js';
import { NatsPodWorkerOutbox } from './adapters/nats-pod-worker-outbox.js';
import { NatsWorkQueue } from './adapters/nats-work-queue.js';
import { NatsWorkSubscriptions } from './adapters/nats-work-subscriptions.js';
import { KvPodStatusProvider } from './adapters/kv-pod-status-provider.js';
import { KvProbeResults } from './adapters/kv-probe-results.js';
import { PromPodWorkerMetrics } from './adapters/prom-pod-worker-metrics.js';
import { CrashLoopBackOff } from './kuberuntime/backoff.js';
import { podTerminationGracePeriod } from './kuberuntime/grace-period.js';
import { KubeletSync } from './kubelet-sync.js';
import type { PodWorkerConfig } from './pod-worker.config.js';
import { PodWorkerController } from './pod-worker.controller.js';
import { PodSyncer, PodWorkers } from './pod-workers.js';
import { CgroupManager, PodContainerManager, podCgroupParent } from './cm/pod-container-manager.js';
import { ApiObjects, DesiredPods, HookRunner, ServiceAccountTokens, LeaseStore, PodDirectories, PodInspector, PodStatusProvider, PodWorkerOutbox, ProbeResultsReader, WorkQueue, WorkSubscriptions, WorkerRecords, WorkerStore } from './ports.js';
import { PlegInspections } from './pleg-inspections.js';
import type { NodeFacts } from './kuberuntime/runtime-config.js';
import { checkLimitsForResolvConf } from './network/dns.js';
import { ImagePuller } from './images/image-puller.js';
import { RuntimeManager } from './kuberuntime/runtime-manager.js';
import { PodWorkerHousekeeping, ShardWork } from './shard-work.js';
import { ShardFences, ShardManager } from './shards.js';
import { PodScope, PodScopedSyncer, ShardFencedCri, StepFences } from './adapters/shard-fenced-cri.js';
import { StaticPodStartGate, StaticPodStarts } from './static-pod-starts.js';
import { VolumeManager } from './volumemanager/volumes.js';

/** The node as the runtime manager sees it (IPs, log and pod roots, the host's DNS). */
export const NODE_FACTS = Symbol('NODE_FACTS');
/** The pod workers' logger (PodWorkers, the shard lease loop, the shard resync). */
const POD_WORKERS_LOGGER = Symbol('POD_WORKERS_LOGGER');

/** The pod cgroups' manager, or null with CGROUPS_PER_QOS=false. */
const POD_CONTAINER_MANAGER = Symbol('POD_CONTAINER_MANAGER');

const podContainerManagerOf = (cgroups: CgroupManager, cfg: PodWorkerConfig, desired: DesiredPods, logger: Logger) =>
  new PodContainerManager(
    cgroups,
    { cgroupRoot: cfg.CGROUP_ROOT, enforceCPULimits: cfg.CPU_CFS_QUOTA === 'true', cpuPeriodUs: 100_000, podPidsLimit: cfg.POD_PIDS_LIMIT },
    {
      // The node's active pods, as the sync loop's admission counts them: every shard's, from the `pods` bucket.
      activePods: async () => [...(await desired.all()).values()].filter((r) => r.admitted && !r.terminationRequested && r.pod.status?.phase !== 'Succeeded' && r.pod.status?.phase !== 'Failed').map((r) => r.pod),
      onUpdateError: (err) => logger.debug({ err: err.message }, 'Failed to update QoS cgroups'),
    },
    killHostProcess,
  );

/** The sandbox's cgroup parent: the pod's cgroup, as the manager names it (GetPodCgroupParent). */
const podCgroupParentOf = (cfg: PodWorkerConfig): Pick<NodeFacts, 'podCgroupParent'> =>
  cfg.CGROUPS_PER_QOS === 'true' ? { podCgroupParent: (pod) => podCgroupParent(pod, cfg.CGROUP_ROOT) } : {};

const backOffOf = (cfg: PodWorkerConfig) => ({ initialMs: cfg.CRASHLOOP_BACKOFF_INITIAL, maxMs: cfg.CRASHLOOP_BACKOFF_MAX });

/** podWorkers, syncPod, the runtime manager's SyncPod / computePodActions, killPod. One provider per port; the adapters are in adapters/. */
@Module({
  controllers: [PodWorkerController],
  providers: [
    { provide: Clock, useClass: SystemClock },
    { provide: POD_WORKERS_LOGGER, inject: [SERVICE_LOGGER], useFactory: (logger: Logger) => logger.child({ component: 'pod-workers' }) },
    {
      provide: NODE_FACTS,
      inject: [SERVICE_CONFIG],
      useFactory: (cfg: PodWorkerConfig): NodeFacts => ({
        nodeName: cfg.NODE_NAME,
        hostIP: cfg.NODE_IP,
        logRoot: cfg.POD_LOGS_DIR,
        podRoot: cfg.POD_ROOT_DIR,
        hostDns: readHostDns(),
        clusterDns: cfg.CLUSTER_DNS,
        ...(cfg.CLUSTER_DOMAIN ? { clusterDomain: cfg.CLUSTER_DOMAIN } : {}),
        hostMaskedPaths: thermalThrottlePaths(),
        allocatable: { memoryBytes: totalmem(), cpuMillis: availableParallelism() * 1000 },
        ...podCgroupParentOf(cfg),
      }),
    },
    // The ports and their adapters.
    // Everything done in a pod's name is fenced by its shard's lease (shards.ts ShardFences): the CRI calls that change the runtime made in a pod's step, its
    // `workers` writes, its status and work-done messages; within a step, in the term of the shard the step began in (StepFences).
    { provide: ShardFences, inject: [Clock, SERVICE_CONFIG], useFactory: (clock: Clock, cfg: PodWorkerConfig) => new ShardFences({ clock, leaseMs: cfg.SHARD_LEASE_DURATION, shardCount: cfg.POD_WORKER_SHARDS }) },
    { provide: PodScope, inject: [ShardFences], useFactory: (fences: ShardFences) => new PodScope((uid) => fences.termOf(uid)) },
    { provide: StepFences, inject: [ShardFences, PodScope], useFactory: (fences: ShardFences, scope: PodScope) => new StepFences(fences, scope) },
    {
      provide: CriRuntime,
      inject: [NATS_CONNECTION, SERVICE_CONFIG, StepFences, PodScope],
      useFactory: (nc: NatsConnection, cfg: PodWorkerConfig, fences: StepFences, scope: PodScope) =>
        new ShardFencedCri(new NatsCriClient(nc, cfg.NODE_NAME, 'pod-worker', { ...DEFAULT_CRI_TIMEOUTS, requestMs: cfg.RUNTIME_REQUEST_TIMEOUT, pullMs: cfg.IMAGE_PULL_TIMEOUT }), fences, scope),
    },
    { provide: EventRecorder, inject: [NatsBus, SERVICE_CONFIG, Clock], useFactory: (bus: NatsBus, cfg: PodWorkerConfig, clock: Clock) => new NatsEventRecorder(bus, cfg.NODE_NAME, clock) },
    { provide: HookRunner, inject: [CriRuntime, SERVICE_CONFIG, Clock, EventRecorder], useFactory: (cri: CriRuntime, cfg: PodWorkerConfig, clock: Clock, events: EventRecorder) => new CriHookRunner(cri, cfg.NODE_IP, clock, { events }) },
    { provide: CgroupManager, inject: [SERVICE_CONFIG], useFactory: (cfg: PodWorkerConfig) => new CgroupfsManager(cfg.CGROUP_MOUNT) },
    {
      provide: POD_CONTAINER_MANAGER,
      inject: [CgroupManager, SERVICE_CONFIG, DesiredPods, SERVICE_LOGGER],
      useFactory: (cgroups: CgroupManager, cfg: PodWorkerConfig, desired: DesiredPods, logger: Logger) => (cfg.CGROUPS_PER_QOS === 'true' ? podContainerManagerOf(cgroups, cfg, desired, logger) : null),
    },
    // configMaps, secrets and RuntimeClasses from config-source (ADR 0014).
    { provide: ApiObjects, inject: [NatsBus, SERVICE_CONFIG], useFactory: (bus: NatsBus, cfg: PodWorkerConfig) => new NatsApiObjects(bus, cfg.NODE_NAME) },
    { provide: ServiceAccountTokens, inject: [NatsBus, SERVICE_CONFIG], useFactory: (bus: NatsBus, cfg: PodWorkerConfig) => new NatsServiceAccountTokens(bus, cfg.NODE_NAME) },
    {
      provide: PodDirectories,
      inject: [NODE_FACTS, ApiObjects, ServiceAccountTokens],
      // emptyDir tmpfs size and resourceFieldRef fall back to the node's memory and CPUs (its capacity: no reservations known here).
      useFactory: (node: NodeFacts, objects: ApiObjects, tokens: ServiceAccountTokens) =>
        new FsPodDirectories(node, new VolumeManager(new FsVolumeHost(), node.podRoot, node.allocatable ?? { memoryBytes: totalmem(), cpuMillis: availableParallelism() * 1000 }, objects, tokens)),
    },
    {
      provide: PodWorkerOutbox,
      inject: [NatsBus, SERVICE_CONFIG, StepFences, POD_WORKERS_LOGGER],
      useFactory: (bus: NatsBus, cfg: PodWorkerConfig, fences: StepFences, logger: Logger) => new NatsPodWorkerOutbox(bus, cfg.NODE_NAME, { fences, logger }),
    },
    { provide: PodInspector, inject: [NatsBus, SERVICE_CONFIG], useFactory: (bus: NatsBus, cfg: PodWorkerConfig) => new NatsPodInspector(bus, cfg.NODE_NAME) },
    { provide: ProbeResultsReader, inject: [SERVICE_CONTEXT], useFactory: (ctx: ServiceContext) => new KvProbeResults(bucketOf(ctx, 'probeResults'), ctx.config.NODE_NAME) },
    { provide: PodStatusProvider, inject: [SERVICE_CONTEXT], useFactory: (ctx: ServiceContext) => new KvPodStatusProvider(bucketOf(ctx, 'podStatus'), ctx.config.NODE_NAME) },
    // `workers` and `pods` are each kept in memory by one watch (docs/adr/0019-kv-mirrors.md), started in onModuleInit.
    {
      provide: KvWorkerStore,
      inject: [SERVICE_CONTEXT, Clock, SERVICE_LOGGER, StepFences],
      useFactory: (ctx: ServiceContext, clock: Clock, logger: Logger, fences: StepFences) => new KvWorkerStore({ kv: bucketOf(ctx, 'workers'), node: ctx.config.NODE_NAME, clock, logger: logger.child({ component: 'kv-mirror' }), fences }),
    },
    { provide: WorkerStore, useExisting: KvWorkerStore },
    { provide: WorkerRecords, useExisting: KvWorkerStore },
    {
      provide: WorkQueue,
      inject: [NatsBus, SERVICE_CONFIG, ShardFences, POD_WORKERS_LOGGER],
      useFactory: (bus: NatsBus, cfg: PodWorkerConfig, fences: ShardFences, logger: Logger) => new NatsWorkQueue(bus, cfg.NODE_NAME, { fences, logger }),
    },
    {
      provide: KvPodCache,
      inject: [SERVICE_CONTEXT, Clock, SERVICE_LOGGER],
      useFactory: (ctx: ServiceContext, clock: Clock, logger: Logger) => new KvPodCache({ kv: bucketOf(ctx, 'podCache'), node: ctx.config.NODE_NAME, clock, logger: logger.child({ component: 'pod-cache' }) }),
    },
    { provide: PodCache, useExisting: KvPodCache },
    { provide: LeaseStore, inject: [SERVICE_CONTEXT], useFactory: (ctx: ServiceContext) => new KvLeaseStore(bucketOf(ctx, 'leases'), ctx.config.NODE_NAME) },
    {
      provide: KvDesiredPods,
      inject: [SERVICE_CONTEXT, Clock, SERVICE_LOGGER],
      useFactory: (ctx: ServiceContext, clock: Clock, logger: Logger) => new KvDesiredPods(bucketOf(ctx, 'pods'), ctx.config.NODE_NAME, clock, logger.child({ component: 'kv-mirror' })),
    },
    { provide: DesiredPods, useExisting: KvDesiredPods },
    { provide: WorkSubscriptions, inject: [SERVICE_CONTEXT], useFactory: (ctx: ServiceContext) => new NatsWorkSubscriptions({ nc: ctx.connection, node: ctx.config.NODE_NAME, addSubjects: ctx.addSubjects, logger: ctx.logger }) },
    { provide: PromPodWorkerMetrics, inject: [METRICS_REGISTRY], useFactory: (r: Registry) => new PromPodWorkerMetrics(r) },
    // The kubelet's pieces, each built from the ports above.
    { provide: PlegInspections, inject: [PodInspector], useFactory: (inspector: PodInspector) => new PlegInspections(inspector) },
    { provide: CrashLoopBackOff, inject: [SERVICE_CONFIG], useFactory: (cfg: PodWorkerConfig) => new CrashLoopBackOff(backOffOf(cfg)) },
    {
      provide: ImagePuller,
      inject: [CriRuntime, EventRecorder, Clock, SERVICE_CONFIG, ApiObjects],
      useFactory: (cri: CriRuntime, events: EventRecorder, clock: Clock, cfg: PodWorkerConfig, objects: ApiObjects) => new ImagePuller({ cri, events, clock, pullBackOff: backOffOf(cfg), objects }),
    },
    {
      provide: RuntimeManager,
      inject: [CriRuntime, ImagePuller, CrashLoopBackOff, HookRunner, EventRecorder, NODE_FACTS, Clock, SERVICE_LOGGER, PromPodWorkerMetrics, ApiObjects, PlegInspections, SERVICE_CONFIG],
      useFactory: (cri: CriRuntime, images: ImagePuller, backOff: CrashLoopBackOff, hooks: HookRunner, events: EventRecorder, node: NodeFacts, clock: Clock, logger: Logger, metrics: PromPodWorkerMetrics, objects: ApiObjects, inspections: PlegInspections, cfg: PodWorkerConfig) =>
        new RuntimeManager({ cri, images, backOff, hooks, events, node, clock, logger: logger.child({ component: 'runtime-manager' }), metrics, objects, inspections, files: new FsContainerFiles(), logLinks: new FsContainerLogLinks(cfg.LEGACY_CONTAINER_LOGS_DIR) }),
    },
    {
      provide: PodSyncer,
      inject: [RuntimeManager, CriRuntime, PodDirectories, PodWorkerOutbox, ProbeResultsReader, PodStatusProvider, Clock, SERVICE_LOGGER, SERVICE_CONFIG, PromPodWorkerMetrics, EventRecorder, POD_CONTAINER_MANAGER, PodScope],
      useFactory: (runtime: RuntimeManager, cri: CriRuntime, dirs: PodDirectories, out: PodWorkerOutbox, probes: ProbeResultsReader, statuses: PodStatusProvider, clock: Clock, logger: Logger, cfg: PodWorkerConfig, metrics: PromPodWorkerMetrics, events: EventRecorder, pcm: PodContainerManager | null, scope: PodScope) =>
        // Each sync runs in its pod's scope, so the CRI calls it makes are fenced by the pod's shard.
        new PodScopedSyncer(new KubeletSync({ runtime, cri, dirs, out, probes, statuses, clock, logger: logger.child({ component: 'sync' }), hostIP: cfg.NODE_IP, observePodStart: (s) => metrics.podStarted(s), events, pcm: pcm ?? undefined }), scope),
    },
    // allowStaticPodStart over the node's buckets: the generations of a static pod may be on two replicas.
    { provide: StaticPodStartGate, inject: [DesiredPods, WorkerRecords, Clock], useFactory: (desired: DesiredPods, records: WorkerRecords, clock: Clock) => new StaticPodStarts({ desired, records, clock }) },
    {
      provide: PodWorkers,
      inject: [PodSyncer, WorkerStore, WorkQueue, PodCache, Clock, POD_WORKERS_LOGGER, SERVICE_CONFIG, PromPodWorkerMetrics, PlegInspections, StaticPodStartGate],
      useFactory: (syncer: PodSyncer, store: WorkerStore, queue: WorkQueue, cache: PodCache, clock: Clock, logger: Logger, cfg: PodWorkerConfig, metrics: PromPodWorkerMetrics, inspections: PlegInspections, staticPods: StaticPodStartGate) =>
        new PodWorkers({ syncer, store, queue, cache, clock, logger, gracePeriodOf: podTerminationGracePeriod, options: { resyncIntervalMs: cfg.SYNC_FREQUENCY, backOffMs: cfg.POD_SYNC_BACKOFF }, metrics, inspections, staticPods }),
    },
    {
      provide: ShardWork,
      inject: [PodWorkers, DesiredPods, WorkerRecords, PodCache, WorkSubscriptions, Clock, POD_WORKERS_LOGGER, SERVICE_CONFIG, ShardFences],
      useFactory: (workers: PodWorkers, desired: DesiredPods, records: WorkerRecords, cache: PodCache, subs: WorkSubscriptions, clock: Clock, logger: Logger, cfg: PodWorkerConfig, fences: ShardFences) =>
        new ShardWork({ workers, desired, records, cache, subscriptions: subs, clock, logger, options: { shardCount: cfg.POD_WORKER_SHARDS, settleMs: cfg.HOUSEKEEPING_PERIOD }, fences }),
    },
    {
      provide: PodWorkerHousekeeping,
      inject: [ShardWork, CrashLoopBackOff, Clock, POD_WORKERS_LOGGER, SERVICE_CONFIG],
      useFactory: (work: ShardWork, backOff: CrashLoopBackOff, clock: Clock, logger: Logger, cfg: PodWorkerConfig) => new PodWorkerHousekeeping({ work, backOff, clock, logger, periodMs: cfg.HOUSEKEEPING_PERIOD }),
    },
    {
      provide: ShardManager,
      inject: [LeaseStore, Clock, POD_WORKERS_LOGGER, SERVICE_CONTEXT, ShardWork, ShardFences],
      useFactory: (leases: LeaseStore, clock: Clock, logger: Logger, ctx: ServiceContext<PodWorkerConfig>, work: ShardWork, fences: ShardFences) => {
        const cfg = ctx.config;
        const options = { shards: cfg.POD_WORKER_SHARDS, instance: ctx.identity.connectionName, leaseMs: cfg.SHARD_LEASE_DURATION, renewMs: Math.max(1000, Math.floor(cfg.SHARD_LEASE_DURATION / 3)) };
        return new ShardManager({ store: leases, clock, logger, options, onAcquire: (s) => work.acquire(s), onLose: (s) => work.lose(s), onYield: (s) => work.handBack(s), fences });
      },
    },
  ],
})
export class PodWorkerModule implements OnModuleInit, OnApplicationShutdown {
  constructor(
    private readonly cache: KvPodCache,
    private readonly shards: ShardManager,
    private readonly workers: PodWorkers,
    private readonly metrics: PromPodWorkerMetrics,
    private readonly housekeeping: PodWorkerHousekeeping,
    private readonly workerRecords: KvWorkerStore,
    private readonly desiredPods: KvDesiredPods,
    @Inject(HealthChecks) private readonly health: HealthChecks,
    @Inject(NODE_FACTS) private readonly node: NodeFacts,
    private readonly events: EventRecorder,
  ) {}

  async onModuleInit(): Promise<void> {
    // CheckLimitsForResolvConf, which the kubelet's syncLoop does once as it starts.
    const resolvConfProblem = checkLimitsForResolvConf(HOST_RESOLV_CONF, this.node.hostDns.searches, this.node.clusterDomain);
    if (resolvConfProblem) this.events.nodeEvent('Warning', 'CheckLimitsForResolvConf', resolvConfProblem);
    this.metrics.collectWorking(this.workers);
    this.health.addReadiness('shards', () => ({ ok: true, detail: `owns shards [${this.shards.ownedShards.join(', ')}]` }));
    await Promise.all([this.cache.start(), this.workerRecords.start(), this.desiredPods.start()]);
    this.shards.start();
    this.housekeeping.start();
  }

  /** The shards are handed back first (their pods' steps in flight finish, then the leases go), then the rest stops. */
  async onApplicationShutdown(): Promise<void> {
    this.housekeeping.stop();
    await this.shards.stop();
    await this.workers.stop();
    this.cache.stop();
    this.workerRecords.stop();
    this.desiredPods.stop();
  }
}
