import { Inject, Module, type OnApplicationShutdown, type OnModuleInit } from '@nestjs/common';
import { Clock, SystemClock } from '@app/clock';
import { EventRecorder } from '@app/contracts';
import { CriRuntime, NatsCriClient } from '@app/cri';
import { NatsBus, NatsEventRecorder, type NatsConnection } from '@app/nats';
import { Counter, type Logger, type Registry } from '@app/observability';
import { HealthChecks, METRICS_REGISTRY, NATS_CONNECTION, SERVICE_CONFIG, SERVICE_CONTEXT, SERVICE_LOGGER, bucketOf, type ServiceContext } from '@app/service';
import { CriRuntimeView } from './adapters/cri-runtime-view.js';
import { KvNodeState } from './adapters/kv-node-state.js';
import { KvPodStore } from './adapters/kv-pod-store.js';
import { NatsSyncLoopOutbox } from './adapters/nats-sync-loop-outbox.js';
import { NodeState, PodStore, RuntimeView, SyncLoopOutbox } from './ports.js';
import { nodeInfoOf, type SyncLoopConfig } from './sync-loop.config.js';
import { SyncLoopChannels } from './sync-loop.controller.js';
import { SyncLoopRunner } from './sync-loop-runner.js';
import { SyncLoop } from './sync-loop.js';

/** syncLoop / syncLoopIteration, podManager, admission, workQueue, housekeeping. One provider per port; the adapters are in adapters/. */
@Module({
  controllers: [SyncLoopChannels],
  providers: [
    { provide: Clock, useClass: SystemClock },
    { provide: PodStore, inject: [SERVICE_CONTEXT], useFactory: (ctx: ServiceContext) => new KvPodStore(bucketOf(ctx, 'pods'), ctx.config.NODE_NAME) },
    { provide: NodeState, inject: [SERVICE_CONTEXT], useFactory: (ctx: ServiceContext) => new KvNodeState(bucketOf(ctx, 'workers'), bucketOf(ctx, 'podStatus'), ctx.config.NODE_NAME) },
    { provide: CriRuntime, inject: [NATS_CONNECTION, SERVICE_CONFIG], useFactory: (nc: NatsConnection, cfg: SyncLoopConfig) => new NatsCriClient(nc, cfg.NODE_NAME, 'sync-loop') },
    { provide: RuntimeView, inject: [CriRuntime, SERVICE_CONFIG], useFactory: (cri: CriRuntime, cfg: SyncLoopConfig) => new CriRuntimeView(cri, cfg.NODE_NAME) },
    {
      provide: SyncLoopOutbox,
      inject: [NatsBus, SERVICE_CONFIG, METRICS_REGISTRY],
      useFactory: (bus: NatsBus, cfg: SyncLoopConfig, registry: Registry) => {
        const dispatches = new Counter({ name: 'kubelet_split_dispatched_work_total', help: 'dispatchWork calls, by update type.', labelNames: ['update_type'], registers: [registry] });
        return new NatsSyncLoopOutbox(bus, cfg.NODE_NAME, cfg.POD_WORKER_SHARDS, (t) => dispatches.inc({ update_type: t }));
      },
    },
    { provide: EventRecorder, inject: [NatsBus, SERVICE_CONFIG, Clock], useFactory: (bus: NatsBus, cfg: SyncLoopConfig, clock: Clock) => new NatsEventRecorder(bus, cfg.NODE_NAME, clock) },
    {
      provide: SyncLoop,
      inject: [PodStore, NodeState, RuntimeView, SyncLoopOutbox, EventRecorder, SERVICE_CONFIG, Clock, SERVICE_LOGGER],
      useFactory: (store: PodStore, state: NodeState, runtime: RuntimeView, out: SyncLoopOutbox, events: EventRecorder, cfg: SyncLoopConfig, clock: Clock, logger: Logger) =>
        new SyncLoop(store, state, runtime, out, events, nodeInfoOf(cfg), clock, logger.child({ component: 'sync-loop' }), { resyncIntervalMs: cfg.SYNC_FREQUENCY }),
    },
    {
      provide: SyncLoopRunner,
      inject: [SyncLoop, Clock, SERVICE_LOGGER],
      useFactory: (loop: SyncLoop, clock: Clock, logger: Logger) => new SyncLoopRunner(loop, clock, logger.child({ component: 'sync-loop' })),
    },
  ],
})
export class SyncLoopModule implements OnModuleInit, OnApplicationShutdown {
  constructor(
    private readonly runner: SyncLoopRunner,
    @Inject(SERVICE_CONFIG) private readonly cfg: SyncLoopConfig,
    @Inject(HealthChecks) private readonly health: HealthChecks,
    @Inject(SERVICE_LOGGER) private readonly logger: Logger,
  ) {}

  async onModuleInit(): Promise<void> {
    const { runner, cfg } = this;
    this.health.addReadiness('podManager', () => (runner.restored ? { ok: true, detail: `${runner.loop.desiredPods.size} pods; sources ${runner.loop.areSourcesReady ? 'ready' : 'not ready yet'}` } : { ok: false, detail: 'restoring from KV' }));
    await runner.run('restore', async () => {
      await runner.loop.restore();
      runner.restored = true;
    });
    // Ask config-source for the full listings once the subscriptions are up, then now and then.
    void runner.run('reconcileWithSources', () => runner.loop.reconcileWithSources());
    runner.every('syncCh', cfg.SYNC_TICK, () => runner.loop.syncTick());
    runner.every('housekeepingCh', cfg.HOUSEKEEPING_PERIOD, () => runner.loop.housekeeping());
    runner.every('reconcileWithSources', cfg.SOURCES_RESYNC_PERIOD, () => runner.loop.reconcileWithSources());
    this.logger.debug('sync loop started');
  }

  async onApplicationShutdown(): Promise<void> {
    await this.runner.stop();
  }
}
