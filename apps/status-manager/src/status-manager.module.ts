import { Inject, Module, type OnModuleDestroy, type OnModuleInit } from '@nestjs/common';
import { ReflectorApiPods, connectApiServer, type ApiServer } from '@app/apiserver';
import { Clock, SystemClock } from '@app/clock';
import { LeaderElector, LeaderFence, restoreThenLead } from '@app/leader-election';
import { NatsBus, ensureEventStream } from '@app/nats';
import { podEvent } from '@app/contracts';
import type { Logger, Registry } from '@app/observability';
import { HealthChecks, METRICS_REGISTRY, SERVICE_CONFIG, SERVICE_CONTEXT, SERVICE_LOGGER, bucketOf, leaderElectionOf, type ServiceContext } from '@app/service';
import { KvProbeResults } from './adapters/kv-probe-results.js';
import { KvStatusStore } from './adapters/kv-status-store.js';
import { PromStatusMetrics } from './adapters/prom-status-metrics.js';
import { ApiServerEventSink } from './adapters/api-server-event-sink.js';
import { ApiServerPodStatus } from './adapters/api-server-pod-status.js';
import { KvPodWorkerRecords } from './adapters/kv-pod-worker-records.js';
import { ApiEventPoster } from './api-event-poster.js';
import { API_SERVER, ApiPods, DurableEvents, EventSink, PodStatusApi, PodWorkerRecords } from './api-ports.js';
import { JetStreamEvents } from './adapters/jetstream-events.js';
import { ApiStatusSync } from './api-status-sync.js';
import { DesiredPods, PodResync, ProbeResultsReader, StatusMetrics, StatusStore } from './ports.js';
import { NatsPodResync } from './adapters/nats-pod-resync.js';
import { repairStatuses } from './status-repair.js';
import type { StatusManagerConfig } from './status-manager.config.js';
import { StatusManagerController } from './status-manager.controller.js';
import { StatusManager } from './status-manager.js';
import { OOM_KILLED_REASON, oomKillMessage } from './oom-kills.js';
import { LeaderGate, TakeoverReplay } from './takeover-replay.js';
import { KvPodManager, KvPodReadModel, PodReadModel } from '@app/pod-manager';

/**
 * status.Manager: the versioned API pod status, its sync to the apiserver,
 * the pods' events and their relay to the apiserver. One provider per port;
 * the adapters are in adapters/. The kubelet server, the Node and the
 * console are apps of their own (kubelet-server, node-status, console).
 */
@Module({
  controllers: [StatusManagerController],
  providers: [
    { provide: Clock, useClass: SystemClock },
    { provide: StatusStore, inject: [SERVICE_CONTEXT, LeaderFence], useFactory: (ctx: ServiceContext, fence: LeaderFence) => new KvStatusStore(bucketOf(ctx, 'podStatus'), ctx.config.NODE_NAME, fence) },
    {
      provide: LeaderGate,
      inject: [Clock, SERVICE_CONFIG],
      // What a standby heard in the last three lease durations: more than a takeover after a crash can take.
      useFactory: (clock: Clock, cfg: StatusManagerConfig) => new LeaderGate(new TakeoverReplay(clock, 3 * leaderElectionOf(cfg).leaseDurationMs)),
    },
    { provide: DesiredPods, inject: [SERVICE_CONTEXT], useFactory: (ctx: ServiceContext) => new KvPodManager(bucketOf(ctx, 'pods'), ctx.config.NODE_NAME) },
    // What a standby serves reads from: the buckets as the leader wrote them, without loading them into the manager.
    {
      provide: KvPodReadModel,
      inject: [SERVICE_CONTEXT, Clock, SERVICE_LOGGER],
      useFactory: (ctx: ServiceContext, clock: Clock, logger: Logger) =>
        new KvPodReadModel({ pods: bucketOf(ctx, 'pods'), podStatus: bucketOf(ctx, 'podStatus'), probeResults: bucketOf(ctx, 'probeResults'), node: ctx.config.NODE_NAME, clock, logger: logger.child({ component: 'pod-read-model' }) }),
    },
    { provide: PodReadModel, useExisting: KvPodReadModel },
    { provide: ProbeResultsReader, inject: [SERVICE_CONTEXT], useFactory: (ctx: ServiceContext) => new KvProbeResults(bucketOf(ctx, 'probeResults'), ctx.config.NODE_NAME) },
    { provide: PromStatusMetrics, inject: [METRICS_REGISTRY], useFactory: (r: Registry) => new PromStatusMetrics(r) },
    { provide: StatusMetrics, useExisting: PromStatusMetrics },
    { provide: DurableEvents, inject: [SERVICE_CONTEXT, SERVICE_LOGGER], useFactory: (ctx: ServiceContext, logger: Logger) => new JetStreamEvents(ctx.connection, ctx.config.NODE_NAME, logger.child({ component: 'events' })) },
    { provide: PodResync, inject: [NatsBus, SERVICE_CONFIG], useFactory: (bus: NatsBus, cfg: StatusManagerConfig) => new NatsPodResync(bus, cfg.NODE_NAME) },
    // The API side: every provider below is null when KUBECONFIG is unset.
    { provide: API_SERVER, inject: [SERVICE_CONFIG], useFactory: (cfg: StatusManagerConfig) => connectApiServer(cfg.KUBECONFIG, 'status-manager') },
    {
      provide: ReflectorApiPods,
      inject: [API_SERVER, Clock, SERVICE_LOGGER, SERVICE_CONFIG],
      useFactory: (api: ApiServer | null, clock: Clock, logger: Logger, cfg: StatusManagerConfig) => api && new ReflectorApiPods(api, clock, logger.child({ component: 'api-pods' }), cfg.NODE_NAME),
    },
    { provide: ApiPods, useExisting: ReflectorApiPods },
    { provide: PodStatusApi, inject: [API_SERVER, LeaderFence], useFactory: (api: ApiServer | null, fence: LeaderFence) => api && new ApiServerPodStatus(api, fence) },
    { provide: PodWorkerRecords, inject: [SERVICE_CONTEXT], useFactory: (ctx: ServiceContext) => new KvPodWorkerRecords(bucketOf(ctx, 'workers'), ctx.config.NODE_NAME) },
    {
      provide: ApiStatusSync,
      inject: [StatusManager, ApiPods, PodStatusApi, DesiredPods, PodWorkerRecords, Clock, SERVICE_LOGGER],
      useFactory: (manager: StatusManager, pods: ApiPods | null, api: PodStatusApi | null, desired: DesiredPods, workers: PodWorkerRecords, clock: Clock, logger: Logger) =>
        pods && api && new ApiStatusSync(manager, pods, api, desired, workers, clock, logger.child({ component: 'api-status' })),
    },
    { provide: EventSink, inject: [API_SERVER, LeaderFence], useFactory: (api: ApiServer | null, fence: LeaderFence) => api && new ApiServerEventSink(api, fence) },
    {
      provide: ApiEventPoster,
      inject: [EventSink, Clock, SERVICE_LOGGER],
      useFactory: (sink: EventSink | null, clock: Clock, logger: Logger) => sink && new ApiEventPoster(sink, clock, logger.child({ component: 'api-events' })),
    },
    {
      provide: StatusManager,
      inject: [StatusStore, DesiredPods, ProbeResultsReader, Clock, SERVICE_LOGGER, SERVICE_CONFIG, StatusMetrics],
      useFactory: (store: StatusStore, desired: DesiredPods, probes: ProbeResultsReader, clock: Clock, logger: Logger, cfg: StatusManagerConfig, metrics: StatusMetrics) =>
        new StatusManager(store, desired, probes, clock, logger.child({ component: 'status' }), cfg.EVENTS_PER_POD, metrics),
    },
  ],
})
export class StatusManagerModule implements OnModuleInit, OnModuleDestroy {
  constructor(
    private readonly manager: StatusManager,
    private readonly desired: DesiredPods,
    private readonly metrics: PromStatusMetrics,
    private readonly gate: LeaderGate,
    @Inject(Clock) private readonly clock: Clock,
    @Inject(HealthChecks) private readonly health: HealthChecks,
    @Inject(SERVICE_LOGGER) private readonly logger: Logger,
    @Inject(LeaderElector) private readonly leadership: LeaderElector,
    @Inject(ReflectorApiPods) private readonly apiPods: ReflectorApiPods | null,
    @Inject(ApiStatusSync) private readonly apiStatus: ApiStatusSync | null,
    @Inject(ApiEventPoster) private readonly apiEvents: ApiEventPoster | null,
    @Inject(SERVICE_CONFIG) private readonly cfg: StatusManagerConfig,
    @Inject(KvPodReadModel) private readonly readModel: KvPodReadModel,
    @Inject(PodResync) private readonly resync: PodResync,
    @Inject(DurableEvents) private readonly durableEvents: DurableEvents,
    @Inject(SERVICE_CONTEXT) private readonly ctx: ServiceContext,
  ) {}

  async onModuleInit(): Promise<void> {
    // KUBELET_EVENTS and the node's consumer, before anything is heard: from now on no event is lost while no one leads.
    await ensureEventStream(this.ctx.connection, this.cfg.NODE_NAME);
    this.metrics.collectFrom(this.manager, this.desired);
    this.health.addReadiness('statuses', () => ({
      ok: true,
      detail: this.gate.isActing ? `${this.manager.statuses().length} pod statuses` : `not acting; ${this.gate.remembered} calls kept for a takeover`,
    }));
    this.leadership.subscribe({ onStartedLeading: (token) => this.lead(token), onStoppedLeading: () => this.stopLeading() });
    const apiStatus = this.apiStatus;
    if (apiStatus) this.manager.onStatusChanged(() => apiStatus.notify());
    // A container killed for memory: an event on its pod (oom-kills.ts), in KUBELET_EVENTS before the status that
    // shows it is saved, once per container instance (its message ID), however often a new leader sees that status.
    this.manager.onOomKilled((uid, pod, kill) =>
      this.durableEvents.publish(
        podEvent(
          { apiVersion: 'v1', kind: 'Pod', metadata: { name: pod.name, namespace: pod.namespace, uid }, spec: pod.spec ?? { containers: [] } },
          'Warning',
          OOM_KILLED_REASON,
          oomKillMessage(kill),
          this.cfg.NODE_NAME,
          { at: this.clock.date(), fieldPath: `spec.${kill.init ? 'initContainers' : 'containers'}{${kill.container}}` },
        ),
        `oom.${uid}.${kill.container}.${kill.containerId}`,
      ),
    );
    const apiPods = this.apiPods;
    if (apiPods) {
      // Read by every instance, a standby too: a takeover starts with the apiserver's view.
      apiPods.start();
      this.health.addReadiness('apiPods', () => ({ ok: true, detail: apiPods.hasSynced ? `${apiPods.all().length} pods of the node in the apiserver` : 'waiting for the first list of the node\'s pods' }));
    }
  }

  onModuleDestroy(): void {
    this.durableEvents.stop();
    this.apiEvents?.stop();
    this.apiStatus?.stop();
    this.apiPods?.stop();
    // A standby's watches of the buckets (opened by its first read), closed before the connection drains.
    this.readModel.stop();
  }

  private stopLeading(): void {
    this.gate.close();
    this.durableEvents.stop();
    this.apiEvents?.stop();
    this.apiStatus?.stop();
  }

  /**
   * The node's events to the apiserver for this term, from KUBELET_EVENTS:
   * what was published while no one led first, then each as it comes. A
   * consumer that cannot be read (JetStream away) is tried again each
   * second while this term lasts.
   */
  private relayEvents(isLeader: () => boolean): void {
    const apiEvents = this.apiEvents;
    if (!apiEvents) return;
    apiEvents.start();
    void (async () => {
      while (isLeader()) {
        try {
          await this.durableEvents.consume((event, seq, working) => apiEvents.record(event, seq, working));
        } catch (err) {
          this.logger.warn({ err: (err as Error).message }, 'KUBELET_EVENTS cannot be read; trying again');
        }
        if (isLeader()) await this.clock.sleep(1000).catch(() => undefined);
      }
    })();
  }

  /**
   * Leadership won (at start, or taking over): every status from
   * `pod-status` (tried again each second until it loads, for a leader
   * without them would version statuses from scratch), then the calls heard
   * while no one led, then acting, and every pod synced now so that the pod
   * workers send each status again (status-repair.ts).
   */
  private async lead(token: number): Promise<void> {
    // This term's: a later term (lost and won again meanwhile) starts its own.
    const isLeader = () => this.leadership.fencingToken === token;
    await restoreThenLead({
      clock: this.clock,
      isLeader,
      restore: async () => {
        const n = await this.manager.restore();
        this.logger.info({ statuses: n }, 'leading: pod statuses restored from KV');
      },
      ifRestoreFails: 'retry',
      onRestoreError: (err) => this.logger.warn({ err: err.message }, 'leading, but pod-status could not be read; trying again'),
      lead: async () => {
        const replayed = this.gate.open();
        const results = await Promise.allSettled(replayed);
        const failed = results.filter((r) => r.status === 'rejected').length;
        this.logger.info({ replayed: replayed.length, failed }, 'leading: replayed the calls heard while no one led');
        if (!isLeader()) return;
        this.apiStatus?.start();
        this.relayEvents(isLeader);
        // Every pod's status sent again now: what no one heard while no one led (repairStatuses' header).
        void repairStatuses({ resync: this.resync, clock: this.clock, logger: this.logger, isLeader, reason: `${this.ctx.identity.connectionName} started leading` });
      },
    });
  }
}
