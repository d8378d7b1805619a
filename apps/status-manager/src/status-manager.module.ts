import { Inject, Module, type OnModuleInit } from '@nestjs/common';
import { Clock, SystemClock } from '@app/clock';
import type { Logger, Registry } from '@app/observability';
import { HealthChecks, METRICS_REGISTRY, SERVICE_CONFIG, SERVICE_CONTEXT, SERVICE_LOGGER, bucketOf, type ServiceContext } from '@app/service';
import { KvDesiredPods } from './adapters/kv-desired-pods.js';
import { KvProbeResults } from './adapters/kv-probe-results.js';
import { KvStatusStore } from './adapters/kv-status-store.js';
import { PromStatusMetrics } from './adapters/prom-status-metrics.js';
import { DesiredPods, ProbeResultsReader, StatusMetrics, StatusStore } from './ports.js';
import type { StatusManagerConfig } from './status-manager.config.js';
import { StatusManagerController } from './status-manager.controller.js';
import { StatusManager } from './status-manager.js';

/** status.Manager: the versioned API pod status and the read API. One provider per port; the adapters are in adapters/. */
@Module({
  controllers: [StatusManagerController],
  providers: [
    { provide: Clock, useClass: SystemClock },
    { provide: StatusStore, inject: [SERVICE_CONTEXT], useFactory: (ctx: ServiceContext) => new KvStatusStore(bucketOf(ctx, 'podStatus'), ctx.config.NODE_NAME) },
    { provide: DesiredPods, inject: [SERVICE_CONTEXT], useFactory: (ctx: ServiceContext) => new KvDesiredPods(bucketOf(ctx, 'pods'), ctx.config.NODE_NAME) },
    { provide: ProbeResultsReader, inject: [SERVICE_CONTEXT], useFactory: (ctx: ServiceContext) => new KvProbeResults(bucketOf(ctx, 'probeResults'), ctx.config.NODE_NAME) },
    { provide: PromStatusMetrics, inject: [METRICS_REGISTRY], useFactory: (r: Registry) => new PromStatusMetrics(r) },
    { provide: StatusMetrics, useExisting: PromStatusMetrics },
    {
      provide: StatusManager,
      inject: [StatusStore, DesiredPods, ProbeResultsReader, Clock, SERVICE_LOGGER, SERVICE_CONFIG, StatusMetrics],
      useFactory: (store: StatusStore, desired: DesiredPods, probes: ProbeResultsReader, clock: Clock, logger: Logger, cfg: StatusManagerConfig, metrics: StatusMetrics) =>
        new StatusManager(store, desired, probes, clock, logger.child({ component: 'status' }), cfg.EVENTS_PER_POD, metrics),
    },
  ],
})
export class StatusManagerModule implements OnModuleInit {
  constructor(
    private readonly manager: StatusManager,
    private readonly desired: DesiredPods,
    private readonly metrics: PromStatusMetrics,
    @Inject(HealthChecks) private readonly health: HealthChecks,
    @Inject(SERVICE_LOGGER) private readonly logger: Logger,
  ) {}

  async onModuleInit(): Promise<void> {
    this.metrics.collectFrom(this.manager, this.desired);
    const n = await this.manager.restore();
    this.logger.info({ statuses: n }, 'pod statuses restored from KV');
    this.health.addReadiness('statuses', () => ({ ok: true, detail: `${this.manager.statuses().length} pod statuses` }));
  }
}
