import { Inject, Module, type OnApplicationShutdown, type OnModuleInit } from '@nestjs/common';
import { CgroupManager, CgroupfsManager } from '@app/cm';
import { Clock, SystemClock } from '@app/clock';
import { EventRecorder, type KillPodOptions, type Pod } from '@app/contracts';
import { CriRuntime, DEFAULT_CRI_TIMEOUTS, NatsCriClient } from '@app/cri/client';
import { RUNTIME_UP_PERIOD_MS, RuntimeState, RuntimeStateUpdater } from '@app/kube';
import { LeaderElector, LeaderFence, restoreThenLead } from '@app/leader-election';
import { NatsBus, NatsEventRecorder, onReconnect, type NatsConnection } from '@app/nats';
import type { Logger, Registry } from '@app/observability';
import { CriKvNodeHealth } from '@app/pod-cache';
import { CriStatsProvider, HostStatsReader, SummaryProvider, VolumeStatsCache } from '@app/stats';
import { HealthChecks, METRICS_REGISTRY, NATS_CONNECTION, SERVICE_CONFIG, SERVICE_CONTEXT, SERVICE_LOGGER, bucketOf, type ServiceContext } from '@app/service';
import { CriRuntimeView } from './adapters/cri-runtime-view.js';
import { KvNodeState } from './adapters/kv-node-state.js';
import { KvNodePressureStore } from './adapters/kv-node-pressure.js';
import { KvNodeLabelsView } from './adapters/kv-node-labels.js';
import { KvSyncLoopMonitorStore } from './adapters/kv-sync-loop-monitor.js';
import { KvPodStore } from './adapters/kv-pod-store.js';
import { NatsSyncLoopOutbox } from './adapters/nats-sync-loop-outbox.js';
import { FsPodLogs } from './adapters/fs-pod-logs.js';
import { CriImageFs, CriImageService } from './adapters/cri-image-service.js';
import { FsPodDirectoriesOnDisk } from './adapters/fs-pod-directories.js';
import { NodeHostProcesses } from './adapters/host-processes.js';
import { CriContainerLogRuntime } from './adapters/cri-container-log-runtime.js';
import { FsContainerLogFiles } from './adapters/fs-container-log-files.js';
import { PromSyncLoopMetrics } from './adapters/prom-sync-loop-metrics.js';
import { ContainerLogManager } from './logs/container-log-manager.js';
import { ContainerGarbageCollector } from './gc/container-gc.js';
import { EVICTION_MONITORING_PERIOD_MS, EvictionManager } from './eviction/eviction-manager.js';
import { ImageGarbageCollector, RealImageGCManager } from './images/image-gc-manager.js';
import { OrphanedPodCleaner } from './orphans.js';
import { PeriodicPasses } from './periodic-passes.js';
import { RuntimeCache } from './runtime-cache.js';
import { ContainerLogFiles, ContainerLogRuntime, HostProcesses, ImageFs, ImageService, NodeHealth, NodeLabelsView, NodePressureStore, NodeState, PodDirectoriesOnDisk, PodLogs, PodStore, RuntimeView, SyncLoopMetrics, SyncLoopOutbox } from './ports.js';
import { evictionThresholdsOf, imageGCPolicyOf, nodeInfoOf, syncLoopHealthThresholdOf, type SyncLoopConfig } from './sync-loop.config.js';
import { PodResyncs } from './pod-resyncs.js';
import { SyncLoopMonitor } from './sync-loop-monitor.js';
import { SyncLoopChannels } from './sync-loop.controller.js';
import { SyncLoopRunner } from './sync-loop-runner.js';
import { SyncLoop } from './sync-loop.js';
import { WORK_ACCEPT_TIMEOUT_MS, WorkDelivery } from './work-delivery.js';

/** syncLoop / syncLoopIteration, podManager, admission, workQueue, housekeeping. One provider per port; the adapters are in adapters/. */
@Module({
  controllers: [SyncLoopChannels],
  providers: [
    { provide: Clock, useClass: SystemClock },
    { provide: PodStore, inject: [SERVICE_CONTEXT, LeaderFence], useFactory: (ctx: ServiceContext, fence: LeaderFence) => new KvPodStore(bucketOf(ctx, 'pods'), ctx.config.NODE_NAME, fence) },
    {
      provide: KvNodeState,
      inject: [SERVICE_CONTEXT, Clock, SERVICE_LOGGER],
      useFactory: (ctx: ServiceContext, clock: Clock, logger: Logger) => new KvNodeState({ workers: bucketOf(ctx, 'workers'), statuses: bucketOf(ctx, 'podStatus'), clock, logger: logger.child({ component: 'kv-mirror' }) }, ctx.config.NODE_NAME),
    },
    { provide: NodeState, useExisting: KvNodeState },
    { provide: CriRuntime, inject: [NATS_CONNECTION, SERVICE_CONFIG], useFactory: (nc: NatsConnection, cfg: SyncLoopConfig) => new NatsCriClient(nc, cfg.NODE_NAME, 'sync-loop') },
    {
      provide: NodeHealth,
      inject: [SERVICE_CONTEXT],
      // A short deadline for Status: a lost reply must not hold the next health check for the list timeout.
      useFactory: (ctx: ServiceContext) => new CriKvNodeHealth(new NatsCriClient(ctx.connection, ctx.config.NODE_NAME, 'sync-loop', { ...DEFAULT_CRI_TIMEOUTS, listMs: RUNTIME_UP_PERIOD_MS }), bucketOf(ctx, 'podCache'), ctx.config.NODE_NAME),
    },
    {
      provide: RuntimeStateUpdater,
      inject: [NodeHealth, Clock, SERVICE_LOGGER],
      useFactory: (health: NodeHealth, clock: Clock, logger: Logger) => new RuntimeStateUpdater(new RuntimeState(clock), health, clock, logger.child({ component: 'runtime-state' })),
    },
    { provide: RuntimeView, inject: [CriRuntime, SERVICE_CONFIG, LeaderFence], useFactory: (cri: CriRuntime, cfg: SyncLoopConfig, fence: LeaderFence) => new CriRuntimeView(cri, cfg.NODE_NAME, fence) },
    // The runtime cache housekeeping and the orphan cleanup share: upstream's runtimeCacheRefreshPeriod, the housekeeping period + 1 s.
    { provide: RuntimeCache, inject: [RuntimeView, Clock, SERVICE_CONFIG], useFactory: (runtime: RuntimeView, clock: Clock, cfg: SyncLoopConfig) => new RuntimeCache(runtime, clock, cfg.HOUSEKEEPING_PERIOD + 1000) },
    { provide: WorkDelivery, inject: [Clock, SERVICE_LOGGER, SyncLoopMetrics], useFactory: (clock: Clock, logger: Logger, metrics: SyncLoopMetrics) => new WorkDelivery({ clock, logger: logger.child({ component: 'work-delivery' }), metrics: { retried: () => metrics.workDispatchRetried(), dropped: (r) => metrics.workDispatchDropped(r) } }) },
    {
      provide: SyncLoopOutbox,
      inject: [NatsBus, SERVICE_CONFIG, SyncLoopMetrics, LeaderFence, WorkDelivery],
      useFactory: (bus: NatsBus, cfg: SyncLoopConfig, metrics: SyncLoopMetrics, fence: LeaderFence, delivery: WorkDelivery) =>
        new NatsSyncLoopOutbox({ bus, node: cfg.NODE_NAME, shards: cfg.POD_WORKER_SHARDS, fence, delivery, acceptTimeoutMs: WORK_ACCEPT_TIMEOUT_MS, onDispatch: (t) => metrics.workDispatched(t) }),
    },
    { provide: EventRecorder, inject: [NatsBus, SERVICE_CONFIG, Clock], useFactory: (bus: NatsBus, cfg: SyncLoopConfig, clock: Clock) => new NatsEventRecorder(bus, cfg.NODE_NAME, clock) },
    { provide: PodLogs, inject: [SERVICE_CONFIG], useFactory: (cfg: SyncLoopConfig) => new FsPodLogs(cfg.POD_LOGS_DIR, cfg.LEGACY_CONTAINER_LOGS_DIR) },
    { provide: NodeLabelsView, inject: [SERVICE_CONTEXT], useFactory: (ctx: ServiceContext) => new KvNodeLabelsView(bucketOf(ctx, 'leases'), ctx.config.NODE_NAME) },
    { provide: NodePressureStore, inject: [SERVICE_CONTEXT, LeaderFence], useFactory: (ctx: ServiceContext, fence: LeaderFence) => new KvNodePressureStore(bucketOf(ctx, 'pods'), ctx.config.NODE_NAME, fence) },
    {
      provide: SyncLoop,
      inject: [PodStore, NodeState, RuntimeView, SyncLoopOutbox, EventRecorder, SERVICE_CONFIG, Clock, SERVICE_LOGGER, PodLogs, RuntimeCache, NodeLabelsView, RuntimeStateUpdater],
      useFactory: (store: PodStore, state: NodeState, runtime: RuntimeView, out: SyncLoopOutbox, events: EventRecorder, cfg: SyncLoopConfig, clock: Clock, logger: Logger, podLogs: PodLogs, runtimePods: RuntimeCache, nodeLabels: NodeLabelsView, runtimeState: RuntimeStateUpdater) =>
        new SyncLoop({ store, nodeState: state, runtime, out, events, clock, logger: logger.child({ component: 'sync-loop' }), podLogs, runtimePods, nodeLabels, runtimeFeatures: () => runtimeState.state.runtimeFeatures() }, nodeInfoOf(cfg), { resyncIntervalMs: cfg.SYNC_FREQUENCY }),
    },
    {
      // The eviction manager's summaryProvider: the status manager's /stats/summary reader, over the desired pods.
      // It runs on the loop's chain: reads with a short deadline, so a runtime that does not answer holds the loop 5 s at most.
      provide: SummaryProvider,
      inject: [SERVICE_CONTEXT, SyncLoop, Clock],
      useFactory: (ctx: ServiceContext<SyncLoopConfig>, loop: SyncLoop, clock: Clock) => {
        const cfg = ctx.config;
        const cri = new NatsCriClient(ctx.connection, cfg.NODE_NAME, 'sync-loop', { ...DEFAULT_CRI_TIMEOUTS, listMs: RUNTIME_UP_PERIOD_MS });
        const host = new HostStatsReader(clock);
        // The pods' volumes too (their local ones count in the disk ranking), walked at most once a minute (--volume-stats-agg-period's default).
        const volumes = new VolumeStatsCache(host, clock, { podRootDir: cfg.POD_ROOT_DIR, periodMs: 60_000 });
        return new CriStatsProvider(cri, { all: () => Promise.resolve([...loop.desiredPods.values()]) }, host, clock, { nodeName: cfg.NODE_NAME, podRootDir: cfg.POD_ROOT_DIR, podLogsDir: cfg.POD_LOGS_DIR, volumes });
      },
    },
    {
      provide: EvictionManager,
      inject: [SummaryProvider, NodePressureStore, SyncLoop, EventRecorder, Clock, SERVICE_LOGGER, SERVICE_CONFIG, SyncLoopMetrics],
      useFactory: (summary: SummaryProvider, pressure: NodePressureStore, loop: SyncLoop, events: EventRecorder, clock: Clock, logger: Logger, cfg: SyncLoopConfig, metrics: SyncLoopMetrics) => {
        const pods = { activePods: () => loop.activePodsForEviction(), killPod: (pod: Pod, options: KillPodOptions) => loop.killPod(pod, options) };
        const manager = new EvictionManager({ summary, pressure, pods, events, clock, logger: logger.child({ component: 'eviction-manager' }) }, {
          thresholds: evictionThresholdsOf(cfg),
          pressureTransitionPeriodMs: cfg.EVICTION_PRESSURE_TRANSITION_PERIOD,
          onEviction: (signal) => metrics.podEvicted(signal),
        });
        loop.addPodAdmitHandler(manager);
        return manager;
      },
    },
    {
      provide: ContainerGarbageCollector,
      inject: [RuntimeView, PodLogs, NodeState, Clock, SERVICE_CONFIG, SERVICE_LOGGER],
      useFactory: (runtime: RuntimeView, logs: PodLogs, state: NodeState, clock: Clock, cfg: SyncLoopConfig, logger: Logger) =>
        new ContainerGarbageCollector({ runtime, logs, nodeState: state, clock, logger: logger.child({ component: 'container-gc' }) }, {
          minAgeMs: cfg.MINIMUM_CONTAINER_TTL,
          maxPerPodContainer: cfg.MAXIMUM_DEAD_CONTAINERS_PER_CONTAINER,
          maxContainers: cfg.MAXIMUM_DEAD_CONTAINERS,
        }),
    },
    { provide: ContainerLogRuntime, inject: [CriRuntime, SERVICE_CONFIG, LeaderFence], useFactory: (cri: CriRuntime, cfg: SyncLoopConfig, fence: LeaderFence) => new CriContainerLogRuntime(cri, cfg.NODE_NAME, fence) },
    { provide: ContainerLogFiles, inject: [SERVICE_CONFIG, LeaderFence], useFactory: (cfg: SyncLoopConfig, fence: LeaderFence) => new FsContainerLogFiles(cfg.POD_LOGS_DIR, fence) },
    {
      provide: ContainerLogManager,
      inject: [ContainerLogRuntime, ContainerLogFiles, Clock, SERVICE_CONFIG, SERVICE_LOGGER],
      useFactory: (runtime: ContainerLogRuntime, files: ContainerLogFiles, clock: Clock, cfg: SyncLoopConfig, logger: Logger) =>
        new ContainerLogManager({ runtime, files, clock, logger: logger.child({ component: 'container-log-manager' }) }, {
          policy: { maxSize: cfg.CONTAINER_LOG_MAX_SIZE, maxFiles: cfg.CONTAINER_LOG_MAX_FILES },
          monitorIntervalMs: cfg.CONTAINER_LOG_MONITOR_INTERVAL,
          maxWorkers: cfg.CONTAINER_LOG_MAX_WORKERS,
        }),
    },
    { provide: ImageService, inject: [CriRuntime, LeaderFence], useFactory: (cri: CriRuntime, fence: LeaderFence) => new CriImageService(cri, fence) },
    { provide: ImageFs, inject: [CriRuntime], useFactory: (cri: CriRuntime) => new CriImageFs(cri) },
    {
      provide: ImageGarbageCollector,
      inject: [ImageService, ImageFs, EventRecorder, Clock, SERVICE_CONFIG, SERVICE_LOGGER, SyncLoopMetrics],
      useFactory: (images: ImageService, fs: ImageFs, events: EventRecorder, clock: Clock, cfg: SyncLoopConfig, logger: Logger, metrics: SyncLoopMetrics) => {
        const log = logger.child({ component: 'image-gc' });
        const manager = new RealImageGCManager({ images, imageFs: fs, events, clock, logger: log, onImageRemoved: (reason) => metrics.imageGarbageCollected(reason) }, imageGCPolicyOf(cfg));
        return new ImageGarbageCollector({ manager, events, clock, logger: log });
      },
    },
    { provide: PodDirectoriesOnDisk, inject: [SERVICE_CONFIG], useFactory: (cfg: SyncLoopConfig) => new FsPodDirectoriesOnDisk(cfg.POD_ROOT_DIR) },
    { provide: CgroupManager, inject: [SERVICE_CONFIG], useFactory: (cfg: SyncLoopConfig) => new CgroupfsManager(cfg.CGROUP_MOUNT) },
    { provide: HostProcesses, useClass: NodeHostProcesses },
    { provide: SyncLoopMetrics, inject: [METRICS_REGISTRY], useFactory: (registry: Registry) => new PromSyncLoopMetrics(registry) },
    {
      provide: OrphanedPodCleaner,
      inject: [RuntimeCache, NodeState, PodDirectoriesOnDisk, CgroupManager, HostProcesses, Clock, SERVICE_CONFIG, SERVICE_LOGGER],
      useFactory: (runtime: RuntimeCache, state: NodeState, dirs: PodDirectoriesOnDisk, cgroups: CgroupManager, processes: HostProcesses, clock: Clock, cfg: SyncLoopConfig, logger: Logger) =>
        new OrphanedPodCleaner({ runtime, nodeState: state, dirs, ...(cfg.CGROUPS_PER_QOS === 'true' ? { cgroups } : {}), processes, clock, logger: logger.child({ component: 'orphans' }) }, {
          graceMs: cfg.ORPHAN_GRACE_PERIOD,
          ...(cfg.CGROUPS_PER_QOS === 'true' ? { cgroupRoot: cfg.CGROUP_ROOT } : {}),
        }),
    },
    {
      provide: SyncLoopRunner,
      inject: [SyncLoop, Clock, SERVICE_LOGGER],
      useFactory: (loop: SyncLoop, clock: Clock, logger: Logger) => new SyncLoopRunner(loop, clock, logger.child({ component: 'sync-loop' })),
    },
    {
      provide: PodResyncs,
      inject: [SyncLoopRunner, Clock],
      useFactory: (runner: SyncLoopRunner, clock: Clock) =>
        new PodResyncs({
          clock,
          resync: async () => {
            let pods: number | undefined;
            await runner.run('podResync', () => void (pods = runner.loop.resyncAll()));
            return pods;
          },
        }),
    },
    {
      provide: SyncLoopMonitor,
      inject: [SERVICE_CONTEXT, LeaderFence, Clock, SERVICE_LOGGER],
      useFactory: (ctx: ServiceContext<SyncLoopConfig>, fence: LeaderFence, clock: Clock, logger: Logger) =>
        new SyncLoopMonitor({
          store: new KvSyncLoopMonitorStore(bucketOf(ctx, 'pods'), ctx.config.NODE_NAME, fence),
          clock,
          logger: logger.child({ component: 'sync-loop-monitor' }),
          healthThresholdMs: syncLoopHealthThresholdOf(ctx.config),
          writer: ctx.identity.connectionName,
        }),
    },
    {
      provide: PeriodicPasses,
      inject: [SyncLoopRunner, ContainerGarbageCollector, ImageGarbageCollector, OrphanedPodCleaner, EvictionManager, ContainerLogManager, SyncLoopMetrics, SyncLoopMonitor, SERVICE_CONFIG],
      useFactory: (runner: SyncLoopRunner, containerGC: ContainerGarbageCollector, imageGC: ImageGarbageCollector, orphans: OrphanedPodCleaner, eviction: EvictionManager, containerLogs: ContainerLogManager, metrics: SyncLoopMetrics, monitor: SyncLoopMonitor, cfg: SyncLoopConfig) =>
        new PeriodicPasses({
          runner,
          loop: runner.loop,
          containerGC,
          imageGC,
          orphans,
          eviction,
          containerLogs,
          metrics,
          monitor,
          periods: {
            syncTickMs: cfg.SYNC_TICK,
            housekeepingMs: cfg.HOUSEKEEPING_PERIOD,
            containerGcMs: cfg.CONTAINER_GC_PERIOD,
            imageGcMs: cfg.IMAGE_GC_PERIOD,
            sourcesResyncMs: cfg.SOURCES_RESYNC_PERIOD,
            evictionMs: EVICTION_MONITORING_PERIOD_MS,
          },
        }),
    },
  ],
})
export class SyncLoopModule implements OnModuleInit, OnApplicationShutdown {
  constructor(
    private readonly runner: SyncLoopRunner,
    private readonly passes: PeriodicPasses,
    private readonly containerLogManager: ContainerLogManager,
    private readonly evictionManager: EvictionManager,
    private readonly runtimeState: RuntimeStateUpdater,
    private readonly clock: Clock,
    @Inject(SERVICE_CONFIG) private readonly cfg: SyncLoopConfig,
    @Inject(HealthChecks) private readonly health: HealthChecks,
    @Inject(SERVICE_LOGGER) private readonly logger: Logger,
    @Inject(SERVICE_CONTEXT) private readonly ctx: ServiceContext,
    @Inject(LeaderElector) private readonly leadership: LeaderElector,
    private readonly delivery: WorkDelivery,
    private readonly nodeState: KvNodeState,
  ) {}

  private stopReconnectWatch?: () => void;

  async onModuleInit(): Promise<void> {
    const { runner } = this;
    // The `workers` and `pod-status` mirrors the passes read, loaded before the first pass (and before leading).
    await this.nodeState.start();
    this.health.addReadiness('podManager', () => {
      if (!runner.isActive) return { ok: true, detail: 'standby: not acting' };
      // A leader still restoring is as ready as a standby (connected, subscribed, about to act): a 503 here would
      // flap every takeover and make a probe restart the one instance about to lead.
      return runner.restored ? { ok: true, detail: `${runner.loop.desiredPods.size} pods; sources ${runner.loop.areSourcesReady ? 'ready' : 'not ready yet'}` } : { ok: true, detail: 'leader: restoring from KV' };
    });
    // syncLoop's gate: the ticks wait while the runtime or the PLEG is unhealthy.
    this.runtimeState.start();
    runner.tickGate = () => this.runtimeState.state.runtimeErrors();
    this.health.addReadiness('runtime', () => {
      const err = this.runtimeState.state.runtimeErrors();
      const net = this.runtimeState.state.networkErrors();
      return { ok: true, detail: `${err === undefined ? 'runtime and PLEG healthy' : `skipping pod synchronization: ${err}`}${net ? `; ${net}` : ''}` };
    });
    // Config operations sent while NATS was away are lost: reconcile with the sources' listings at once.
    // config-source may come back a moment later than this service: ask until it answers (a few times).
    this.stopReconnectWatch = onReconnect(this.ctx.connection, () => void this.reconcileAfterReconnect());
    this.leadership.subscribe({
      onStartedLeading: (token) => this.lead(token),
      onStoppedLeading: () => {
        runner.deactivate();
        void this.containerLogManager.stop();
      },
    });
  }

  /**
   * Leadership won (at start, or taking over): the podManager and the work
   * queue from KV, the sources' listings diffed in, then the ticks. What
   * arrived while no one led was dropped and is repaired as any lost message
   * is (docs/adr/0008-delivery-by-reconciliation.md): config ops by the
   * listings now, PLEG events by the shard owners' reconciliation, a lost
   * work-done by housekeeping's requeue.
   */
  private async lead(token: number): Promise<void> {
    const { runner } = this;
    runner.activate();
    await restoreThenLead({
      clock: this.clock,
      // This term's: a later term (lost and won again meanwhile) starts its own.
      isLeader: () => this.leadership.fencingToken === token && runner.isActive,
      // On the loop's chain, before anything else of the term; a leader without its pods would admit them as new.
      restore: () =>
        runner.attempt('restore', async () => {
          await runner.loop.restore();
          // The eviction manager's conditions before any admission of this term.
          await this.evictionManager.restore();
          runner.restored = true;
        }),
      ifRestoreFails: 'retry',
      onRestoreError: (err) => this.logger.warn({ err: err.message }, 'leading, but the pods bucket could not be read; trying again'),
      lead: () => this.passes.startTerm(),
    });
  }

  private async reconcileAfterReconnect(): Promise<void> {
    for (let attempt = 0; attempt < 10 && this.runner.isActive; attempt++) {
      let answered = false;
      await this.runner.run('reconcileWithSources', async () => void (answered = await this.runner.loop.reconcileWithSources()));
      if (answered) return;
      await this.clock.sleep(1000).catch(() => undefined);
    }
  }

  async onApplicationShutdown(): Promise<void> {
    this.stopReconnectWatch?.();
    this.delivery.stop();
    this.runtimeState.stop();
    this.nodeState.stop();
    await Promise.all([this.runner.stop(), this.containerLogManager.stop()]);
  }
}
