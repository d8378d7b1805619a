/**
 * kubelet-server: upstream's pkg/kubelet/server. The kubelet API on HTTPS
 * (KUBELET_SERVER_PORT, 10250: authn/authz, /containerLogs, /exec, /attach,
 * /portForward, /run, /pods, /stats/summary, /metrics/resource) and the
 * plain read port on loopback (PORT: /pods, /containerLogs, /stats/summary,
 * /metrics/resource). Stateless, on every instance: it reads the node's
 * pods from the buckets (@app/pod-manager PodReadModel), the runtime through
 * cri-gateway, and the pods' events from the status manager. Its NATS user
 * is the only one that may call Exec, Attach, PortForward and ExecSync.
 * One provider per port; the adapters are in adapters/ and logs/.
 */
import { Module, type OnModuleDestroy } from '@nestjs/common';
import { connectApiServer, type ApiServer } from '@app/apiserver';
import { Clock, SystemClock } from '@app/clock';
import { DEFAULT_CRI_TIMEOUTS, NatsCriClient, type CriRuntime } from '@app/cri/client';
import { NatsBus } from '@app/nats';
import type { Logger } from '@app/observability';
import { KvPodManager, KvPodReadModel, PodReadModel } from '@app/pod-manager';
import { SERVICE_CONFIG, SERVICE_CONTEXT, SERVICE_LOGGER, bucketOf, type ServiceContext } from '@app/service';
import { CriStatsProvider, HostStats, HostStatsReader, SummaryProvider, VolumeStatsCache, renderResourceMetrics } from '@app/stats';
import { ApiAccessReviewer, ApiTokenReviewer } from './adapters/api-reviews.js';
import { CriStreamingRuntime } from './adapters/cri-streaming-runtime.js';
import { NatsPodEvents } from './adapters/nats-pod-events.js';
import { NetUpgradeProxy } from './adapters/net-upgrade-proxy.js';
import { KubeletServerAgent, kubeletServerAgent, kubeletServerSettings, type KubeletServerSettings } from './kubelet-server-agent.js';
import type { KubeletServerConfig } from './kubelet-server.config.js';
import { ContainerLogs } from './logs/container-logs.js';
import { CriLogRuntime } from './logs/cri-log-runtime.js';
import { FsLogFiles } from './logs/fs-log-files.js';
import { LogsController } from './logs/logs.controller.js';
import { LogFiles, LogPods, LogRuntime } from './logs/ports.js';
import { serveContainerLogs } from './logs/serve-container-logs.js';
import { AccessReviewer, ContainerLogServer, KubeletPods, NodeStats, PodEvents, StreamingRuntime, SyncLoopMonitorReader, TokenReviewer, UpgradeProxy } from './ports.js';
import { ReadPortController } from './read-port.controller.js';
import { KvSyncLoopMonitorReader } from './adapters/kv-sync-loop-monitor.js';
import { StatsController } from './stats/stats.controller.js';

const KUBELET_SERVER_SETTINGS = Symbol('KUBELET_SERVER_SETTINGS');
const API_SERVER = Symbol('API_SERVER');
/** The CRI client of the runtime's reads and the streaming calls, with the default deadlines (ExecSync without a timeout: the runtime request timeout). */
const KUBELET_CRI = Symbol('KUBELET_CRI');

@Module({
  controllers: [ReadPortController, LogsController, StatsController],
  providers: [
    { provide: Clock, useClass: SystemClock },
    { provide: KUBELET_SERVER_SETTINGS, inject: [SERVICE_CONFIG], useFactory: (cfg: KubeletServerConfig) => kubeletServerSettings(cfg) ?? null },
    { provide: API_SERVER, inject: [SERVICE_CONFIG], useFactory: (cfg: KubeletServerConfig) => connectApiServer(cfg.KUBECONFIG, 'kubelet-server') },
    { provide: KUBELET_CRI, inject: [SERVICE_CONTEXT], useFactory: (ctx: ServiceContext) => new NatsCriClient(ctx.connection, ctx.config.NODE_NAME, 'kubelet-server', DEFAULT_CRI_TIMEOUTS) },
    {
      provide: KvPodReadModel,
      inject: [SERVICE_CONTEXT, Clock, SERVICE_LOGGER],
      useFactory: (ctx: ServiceContext, clock: Clock, logger: Logger) =>
        new KvPodReadModel({ pods: bucketOf(ctx, 'pods'), podStatus: bucketOf(ctx, 'podStatus'), probeResults: bucketOf(ctx, 'probeResults'), node: ctx.config.NODE_NAME, clock, logger: logger.child({ component: 'pod-read-model' }) }),
    },
    { provide: PodReadModel, useExisting: KvPodReadModel },
    { provide: PodEvents, inject: [NatsBus, SERVICE_CONFIG], useFactory: (bus: NatsBus, cfg: KubeletServerConfig) => new NatsPodEvents(bus, cfg.NODE_NAME) },
    { provide: KubeletPods, useExisting: PodReadModel },
    { provide: LogPods, useExisting: PodReadModel },
    // The log server (logs/).
    { provide: LogRuntime, inject: [KUBELET_CRI], useFactory: (cri: CriRuntime) => new CriLogRuntime(cri) },
    { provide: LogFiles, useClass: FsLogFiles },
    {
      provide: ContainerLogs,
      inject: [LogPods, LogRuntime, LogFiles, Clock, SERVICE_CONFIG],
      useFactory: (pods: LogPods, runtime: LogRuntime, files: LogFiles, clock: Clock, cfg: KubeletServerConfig) => new ContainerLogs(pods, runtime, files, clock, cfg.POD_LOGS_DIR),
    },
    // /stats/summary and /metrics/resource (@app/stats).
    { provide: HostStats, inject: [Clock], useFactory: (clock: Clock) => new HostStatsReader(clock) },
    {
      provide: SummaryProvider,
      inject: [KUBELET_CRI, SERVICE_CONTEXT, HostStats, Clock, SERVICE_CONFIG],
      useFactory: (cri: CriRuntime, ctx: ServiceContext, host: HostStats, clock: Clock, cfg: KubeletServerConfig) =>
        new CriStatsProvider(cri, new KvPodManager(bucketOf(ctx, 'pods'), cfg.NODE_NAME), host, clock, {
          nodeName: cfg.NODE_NAME,
          podRootDir: cfg.POD_ROOT_DIR,
          podLogsDir: cfg.POD_LOGS_DIR,
          volumes: new VolumeStatsCache(host, clock, { podRootDir: cfg.POD_ROOT_DIR, periodMs: cfg.VOLUME_STATS_AGG_PERIOD }),
        }),
    },
    // The kubelet API server on its HTTPS port.
    { provide: TokenReviewer, inject: [API_SERVER], useFactory: (api: ApiServer | null) => api && new ApiTokenReviewer(api) },
    { provide: AccessReviewer, inject: [API_SERVER], useFactory: (api: ApiServer | null) => api && new ApiAccessReviewer(api) },
    { provide: StreamingRuntime, inject: [KUBELET_CRI], useFactory: (cri: NatsCriClient) => new CriStreamingRuntime(cri) },
    { provide: UpgradeProxy, useFactory: () => new NetUpgradeProxy() },
    { provide: SyncLoopMonitorReader, inject: [SERVICE_CONTEXT], useFactory: (ctx: ServiceContext) => new KvSyncLoopMonitorReader(bucketOf(ctx, 'pods'), ctx.config.NODE_NAME) },
    {
      provide: ContainerLogServer,
      inject: [ContainerLogs, Clock, SERVICE_LOGGER],
      useFactory: (logs: ContainerLogs, clock: Clock, logger: Logger): ContainerLogServer => ({
        serve: (target, query, req, res) => serveContainerLogs({ logs, clock, logger }, target, query, req, res),
      }),
    },
    {
      provide: NodeStats,
      inject: [SummaryProvider, SERVICE_CONTEXT],
      useFactory: (provider: SummaryProvider, ctx: ServiceContext): NodeStats => ({
        summary: () => provider.summary(),
        resourceMetrics: async () => renderResourceMetrics(await provider.summary().catch(() => undefined)),
        metrics: () => ctx.metrics.metrics(),
      }),
    },
    {
      provide: KubeletServerAgent,
      inject: [KUBELET_SERVER_SETTINGS, TokenReviewer, AccessReviewer, KubeletPods, StreamingRuntime, ContainerLogServer, NodeStats, UpgradeProxy, SyncLoopMonitorReader, Clock, SERVICE_CONFIG, SERVICE_LOGGER],
      useFactory: (
        settings: KubeletServerSettings | null,
        tokens: TokenReviewer | null,
        access: AccessReviewer | null,
        pods: KubeletPods,
        runtime: StreamingRuntime,
        logs: ContainerLogServer,
        stats: NodeStats,
        proxy: UpgradeProxy,
        syncLoopMonitor: SyncLoopMonitorReader,
        clock: Clock,
        cfg: KubeletServerConfig,
        logger: Logger,
      ) => kubeletServerAgent(settings, { tokens, access, pods, runtime, logs, stats, proxy, syncLoopMonitor, clock, cfg, logger }),
    },
  ],
})
export class KubeletServerModule implements OnModuleDestroy {
  /** The read model's watches, stopped with the module. */
  constructor(private readonly pods: KvPodReadModel) {}

  onModuleDestroy(): void {
    this.pods.stop();
  }
}
