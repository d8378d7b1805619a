import { Inject, Module, type OnApplicationShutdown, type OnModuleInit } from '@nestjs/common';
import { Clock, SystemClock } from '@app/clock';
import { EventRecorder } from '@app/contracts';
import { CriRuntime, NatsCriClient } from '@app/cri/client';
import { NatsBus, NatsEventRecorder, type NatsConnection } from '@app/nats';
import { KvPodManager } from '@app/pod-manager';
import type { Logger, Registry } from '@app/observability';
import { HealthChecks, METRICS_REGISTRY, NATS_CONNECTION, SERVICE_CONFIG, SERVICE_CONTEXT, SERVICE_LOGGER, bucketOf, type ServiceContext } from '@app/service';
import { KvProbedPodSource } from './adapters/kv-probed-pod-source.js';
import { KvProbeResultStore } from './adapters/kv-probe-result-store.js';
import { NatsResultSink } from './adapters/nats-result-sink.js';
import { PromProberMetrics } from './adapters/prom-prober-metrics.js';
import { RecorderProbeEventSink } from './adapters/recorder-probe-event-sink.js';
import { ProbeHandler, newProbeHandler } from './handlers/index.js';
import { ProbeEventSink, ProbedPodSource, ProberMetrics, ProbeResultStore, ResultSink } from './ports.js';
import type { ProberConfig } from './prober.config.js';
import { ProberController } from './prober.controller.js';
import { ProberManager, newProberManager } from './prober-manager.js';

/** prober.Manager, its workers and the results managers. One provider per port; the adapters are in adapters/. */
@Module({
  controllers: [ProberController],
  providers: [
    { provide: Clock, useClass: SystemClock },
    { provide: CriRuntime, inject: [NATS_CONNECTION, SERVICE_CONFIG], useFactory: (nc: NatsConnection, cfg: ProberConfig) => new NatsCriClient(nc, cfg.NODE_NAME, 'prober') },
    { provide: ProbeHandler, inject: [CriRuntime, Clock], useFactory: (cri: CriRuntime, clock: Clock) => newProbeHandler({ cri, clock }) },
    { provide: ResultSink, inject: [NatsBus, SERVICE_CONFIG], useFactory: (bus: NatsBus, cfg: ProberConfig) => new NatsResultSink(bus, cfg.NODE_NAME) },
    { provide: ProbeResultStore, inject: [SERVICE_CONTEXT], useFactory: (ctx: ServiceContext) => new KvProbeResultStore(bucketOf(ctx, 'probeResults'), ctx.config.NODE_NAME) },
    { provide: ProbedPodSource, inject: [SERVICE_CONTEXT], useFactory: (ctx: ServiceContext) => new KvProbedPodSource(new KvPodManager(bucketOf(ctx, 'pods'), ctx.config.NODE_NAME), bucketOf(ctx, 'podStatus'), ctx.config.NODE_NAME) },
    { provide: EventRecorder, inject: [NatsBus, SERVICE_CONFIG, Clock], useFactory: (bus: NatsBus, cfg: ProberConfig, clock: Clock) => new NatsEventRecorder(bus, cfg.NODE_NAME, clock) },
    { provide: ProbeEventSink, inject: [EventRecorder], useFactory: (recorder: EventRecorder) => new RecorderProbeEventSink(recorder) },
    { provide: ProberMetrics, inject: [METRICS_REGISTRY], useFactory: (r: Registry) => new PromProberMetrics(r) },
    {
      provide: ProberManager,
      inject: [Clock, ProbeHandler, ResultSink, ProbeResultStore, ProbedPodSource, ProbeEventSink, ProberMetrics, SERVICE_CONFIG, SERVICE_LOGGER],
      useFactory: (clock: Clock, handler: ProbeHandler, sink: ResultSink, store: ProbeResultStore, pods: ProbedPodSource, events: ProbeEventSink, metrics: ProberMetrics, cfg: ProberConfig, logger: Logger) =>
        newProberManager({ clock, handler, sink, store, pods, events, metrics, hostIP: cfg.NODE_IP, logger: logger.child({ component: 'prober' }) }),
    },
  ],
})
export class ProberModule implements OnModuleInit, OnApplicationShutdown {
  constructor(
    private readonly manager: ProberManager,
    @Inject(HealthChecks) private readonly health: HealthChecks,
    @Inject(SERVICE_LOGGER) private readonly logger: Logger,
  ) {}

  async onModuleInit(): Promise<void> {
    // Before the subscriptions are bound (the microservice starts after module init): no AddPod comes first.
    const restored = await this.manager.restore();
    this.logger.info(restored, 'probe results and probed pods restored from KV');
    this.health.addReadiness('probes', () => ({ ok: true, detail: `${this.manager.workerCount()} probe workers` }));
  }

  onApplicationShutdown(): void {
    this.manager.stopAll();
  }
}
