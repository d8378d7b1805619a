import { Inject, Module, type OnApplicationShutdown, type OnModuleInit } from '@nestjs/common';
import { Clock, SystemClock } from '@app/clock';
import { CriRuntime, NatsCriClient } from '@app/cri/client';
import { LeaderElector, LeaderFence, restoreThenLead } from '@app/leader-election';
import { EventRecorder } from '@app/contracts';
import { NatsBus, NatsEventRecorder, type NatsConnection } from '@app/nats';
import { Gauge, type Logger, type Registry } from '@app/observability';
import { HealthChecks, METRICS_REGISTRY, NATS_CONNECTION, SERVICE_CONFIG, SERVICE_CONTEXT, SERVICE_LOGGER, bucketOf, type ServiceContext } from '@app/service';
import { EventedPlegReporter } from './adapters/evented-pleg-reporter.js';
import { FsContainerFileReader } from './adapters/fs-container-file-reader.js';
import { KvPodCacheStore } from './adapters/kv-pod-cache-store.js';
import { NatsPlegEventSink } from './adapters/nats-pleg-event-sink.js';
import { NatsRelayStatus } from './adapters/nats-relay-status.js';
import { PromPlegMetrics } from './adapters/prom-pleg-metrics.js';
import { GenericPleg } from './generic-pleg.js';
import type { PlegConfig } from './pleg.config.js';
import { PlegController } from './pleg.controller.js';
import { PlegRunner } from './pleg-runner.js';
import { PlegEventSink, PlegMetrics, PlegModeReporter, PodCacheStore, RelayStatus } from './ports.js';

/** GenericPLEG (and Evented PLEG where the runtime streams events) and the pod cache. One provider per port; the adapters are in adapters/. */
@Module({
  controllers: [PlegController],
  providers: [
    { provide: Clock, useClass: SystemClock },
    {
      provide: CriRuntime,
      inject: [NATS_CONNECTION, SERVICE_CONFIG],
      useFactory: (nc: NatsConnection, cfg: PlegConfig) => new NatsCriClient(nc, cfg.NODE_NAME, 'pleg', { requestMs: 120_000, listMs: 30_000, pullMs: 120_000 }),
    },
    { provide: PodCacheStore, inject: [SERVICE_CONTEXT, LeaderFence], useFactory: (ctx: ServiceContext, fence: LeaderFence) => new KvPodCacheStore(bucketOf(ctx, 'podCache'), ctx.config.NODE_NAME, fence) },
    { provide: PlegEventSink, inject: [NatsBus, SERVICE_CONFIG, LeaderFence], useFactory: (bus: NatsBus, cfg: PlegConfig, fence: LeaderFence) => new NatsPlegEventSink(bus, cfg.NODE_NAME, fence) },
    { provide: RelayStatus, inject: [NatsBus, SERVICE_CONFIG], useFactory: (bus: NatsBus, cfg: PlegConfig) => new NatsRelayStatus(bus, cfg.NODE_NAME) },
    { provide: PromPlegMetrics, inject: [METRICS_REGISTRY], useFactory: (r: Registry) => new PromPlegMetrics(r) },
    { provide: PlegMetrics, useExisting: PromPlegMetrics },
    { provide: EventRecorder, inject: [NatsBus, SERVICE_CONFIG, Clock], useFactory: (bus: NatsBus, cfg: PlegConfig, clock: Clock) => new NatsEventRecorder(bus, cfg.NODE_NAME, clock) },
    {
      provide: PlegModeReporter,
      inject: [METRICS_REGISTRY, EventRecorder, SERVICE_CONFIG],
      useFactory: (r: Registry, events: EventRecorder, cfg: PlegConfig) => new EventedPlegReporter(r, events, { generic: cfg.RELIST_PERIOD / 1000, evented: cfg.EVENTED_RELIST_PERIOD / 1000 }),
    },
    {
      provide: GenericPleg,
      inject: [CriRuntime, PodCacheStore, PlegEventSink, Clock, SERVICE_LOGGER, SERVICE_CONFIG, PlegMetrics],
      useFactory: (cri: CriRuntime, cache: PodCacheStore, sink: PlegEventSink, clock: Clock, logger: Logger, cfg: PlegConfig, metrics: PlegMetrics) =>
        new GenericPleg(
          { cri, cache, sink, clock, logger: logger.child({ component: 'pleg' }), metrics, files: new FsContainerFileReader() },
          { inspectTimeoutMs: cfg.INSPECT_TIMEOUT, inspectConcurrency: cfg.INSPECT_CONCURRENCY, relistThresholdMs: cfg.RELIST_THRESHOLD, node: cfg.NODE_NAME },
        ),
    },
    {
      provide: PlegRunner,
      inject: [GenericPleg, Clock, SERVICE_LOGGER, SERVICE_CONFIG, RelayStatus, PlegModeReporter],
      useFactory: (pleg: GenericPleg, clock: Clock, logger: Logger, cfg: PlegConfig, relay: RelayStatus, reporter: PlegModeReporter) =>
        new PlegRunner(
          { pleg, clock, logger: logger.child({ component: 'pleg-mode' }), askRelay: () => relay.ask(), reporter },
          { relistPeriodMs: cfg.RELIST_PERIOD, eventedRelistPeriodMs: cfg.EVENTED_RELIST_PERIOD, eventedSilenceMs: 90_000 },
          cfg.PLEG_MODE,
        ),
    },
  ],
})
export class PlegModule implements OnModuleInit, OnApplicationShutdown {
  constructor(
    private readonly pleg: GenericPleg,
    private readonly runner: PlegRunner,
    private readonly metrics: PromPlegMetrics,
    @Inject(HealthChecks) private readonly health: HealthChecks,
    @Inject(SERVICE_LOGGER) private readonly logger: Logger,
    @Inject(METRICS_REGISTRY) private readonly registry: Registry,
    @Inject(LeaderElector) private readonly leadership: LeaderElector,
    @Inject(Clock) private readonly clock: Clock,
  ) {}

  onModuleInit(): void {
    // A standby does not relist: its relist health is not a reason to restart it.
    const healthy = () => (this.leading ? this.pleg.healthy() : { ok: true, detail: 'standby: not relisting' });
    this.health.addLiveness('pleg', healthy);
    this.health.addReadiness('pleg', () => ({ ok: true, detail: `mode ${this.runner.mode.effective}${this.runner.mode.fallbackReason ? ` (fell back: ${this.runner.mode.fallbackReason})` : ''}; ${healthy().detail}` }));
    this.metrics.collectHealth(() => healthy().ok, this.registry);
    const runner = this.runner;
    new Gauge({ name: 'kubelet_split_pleg_evented', help: "1 while the PLEG uses the runtime's container events (evented mode, not fallen back to the relist).", registers: [this.registry], collect() {
      this.set(runner.mode.effective === 'evented' ? 1 : 0);
    } });
    this.leadership.subscribe({
      onStartedLeading: (token) => this.lead(token),
      onStoppedLeading: () => {
        this.leading = false;
        this.runner.stop();
      },
    });
  }

  private leading = false;

  /**
   * Leadership won (at start, or taking over): the view its predecessor left
   * in the pod cache, then a relist at once. Without that view the first
   * relist reports every container as new: more syncs, nothing lost.
   */
  private async lead(token: number): Promise<void> {
    this.leading = true;
    await restoreThenLead({
      clock: this.clock,
      // This term's: a later term (lost and won again meanwhile) starts its own.
      isLeader: () => this.leadership.fencingToken === token,
      restore: async () => {
        const restored = await this.pleg.restore();
        this.logger.info({ pods: restored }, 'leading: PLEG view restored from the pod cache');
      },
      ifRestoreFails: 'lead-without',
      onRestoreError: (err) => this.logger.warn({ err: err.message }, 'leading, but the pod cache could not be read: relisting from scratch'),
      lead: () => this.runner.start(),
    });
  }

  onApplicationShutdown(): void {
    this.runner.stop();
  }
}
