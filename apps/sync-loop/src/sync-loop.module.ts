import { Controller, Get, Inject, Module, type OnApplicationShutdown, type OnModuleInit } from '@nestjs/common';
import { EventPattern, Payload } from '@nestjs/microservices';
import { Clock, SystemClock, type Timer } from '@app/clock';
import { MessageError, MessageTypes, Subjects, decodeMessage, isRecord } from '@app/contracts';
import { NatsCriClient } from '@app/cri';
import { nodeInfoFrom, parseMapStringString } from '@app/kube';
import { NatsBus, type NatsConnection } from '@app/nats';
import { Counter, type Logger, type Registry } from '@app/observability';
import { HealthChecks, METRICS_REGISTRY, NATS_CONNECTION, SERVICE_CONFIG, SERVICE_CONTEXT, SERVICE_LOGGER, type ServiceContext } from '@app/service';
import { CriRuntimeView, KvNodeState, KvPodStore, NatsSyncLoopOutbox } from './adapters.js';
import type { SyncLoopConfig } from './sync-loop.config.js';
import { SyncLoop } from './sync-loop.js';

/** Runs every handler and tick one at a time, like the kubelet's single syncLoop goroutine. */
export class SyncLoopRunner {
  private chain: Promise<void> = Promise.resolve();
  private timers: Timer[] = [];
  private stopped = false;
  /** what -> the last error logged for it, so a lasting failure is logged once, not every tick. */
  private readonly lastError = new Map<string, string>();
  restored = false;

  constructor(
    readonly loop: SyncLoop,
    private readonly clock: Clock,
    private readonly logger: Logger,
  ) {}

  /** Queues `fn` behind whatever is running; errors are logged, never thrown. */
  run(what: string, fn: () => unknown): Promise<void> {
    this.chain = this.chain.then(async () => {
      if (this.stopped) return;
      try {
        await fn();
        if (this.lastError.delete(what)) this.logger.info({ what }, 'sync loop step works again');
      } catch (err) {
        const message = (err as Error).message;
        if (err instanceof MessageError) this.logger.warn({ what, err: message }, 'dropped a malformed message');
        else if (this.lastError.get(what) !== message) this.logger.error({ what, err: message }, 'sync loop step failed (logged again only if the error changes)');
        if (!(err instanceof MessageError)) this.lastError.set(what, message);
      }
    });
    return this.chain;
  }

  every(what: string, periodMs: number, fn: () => Promise<unknown>): void {
    const tick = () => {
      if (this.stopped) return;
      void this.run(what, fn).then(() => {
        if (!this.stopped) this.timers.push(this.clock.setTimer(periodMs, tick));
      });
    };
    this.timers.push(this.clock.setTimer(periodMs, tick));
  }

  async stop(): Promise<void> {
    this.stopped = true;
    for (const t of this.timers) t.cancel();
    await this.chain;
  }
}

/** The channels of syncLoopIteration, over NATS. */
@Controller()
export class SyncLoopChannels {
  constructor(private readonly runner: SyncLoopRunner) {}

  @EventPattern(Subjects.podUpdate.pattern)
  onConfig(@Payload() data: unknown): Promise<void> {
    if (isRecord(data) && data['type'] === MessageTypes.sourcesReady) return this.runner.run('sourcesReady', () => this.runner.loop.handleSourcesReady());
    return this.runner.run('configCh', () => this.runner.loop.handlePodUpdate(decodeMessage(MessageTypes.podUpdate, data)));
  }

  @EventPattern(Subjects.pleg.pattern)
  onPleg(@Payload() data: unknown): Promise<void> {
    return this.runner.run('plegCh', () => this.runner.loop.handlePlegEvent(decodeMessage(MessageTypes.podLifecycleEvent, data)));
  }

  @EventPattern(Subjects.probeResult.pattern)
  onProbe(@Payload() data: unknown): Promise<void> {
    return this.runner.run('probe', () => this.runner.loop.handleProbeResult(decodeMessage(MessageTypes.probeResult, data)));
  }

  @EventPattern(Subjects.workDone.pattern)
  onWorkDone(@Payload() data: unknown): Promise<void> {
    return this.runner.run('workDone', () => this.runner.loop.handleWorkDone(decodeMessage(MessageTypes.workDone, data)));
  }

  /** The podManager, for people and tests. */
  @Get('pods')
  pods(): unknown {
    return { sourcesReady: this.runner.loop.areSourcesReady, pods: [...this.runner.loop.desiredPods.values()] };
  }
}

/** syncLoop / syncLoopIteration, podManager, admission, workQueue, housekeeping. */
@Module({
  controllers: [SyncLoopChannels],
  providers: [
    { provide: Clock, useClass: SystemClock },
    {
      provide: SyncLoopRunner,
      inject: [SERVICE_CONTEXT, NATS_CONNECTION, NatsBus, Clock, METRICS_REGISTRY],
      useFactory: (ctx: ServiceContext<SyncLoopConfig>, nc: NatsConnection, bus: NatsBus, clock: Clock, registry: Registry) => {
        const cfg = ctx.config;
        const { pods, workers, podStatus } = ctx.buckets;
        if (!pods || !workers || !podStatus) throw new Error('sync-loop needs the pods, workers and pod-status buckets');
        const dispatches = new Counter({ name: 'kubelet_split_dispatched_work_total', help: 'dispatchWork calls, by update type.', labelNames: ['update_type'], registers: [registry] });
        const node = nodeInfoFrom({ name: cfg.NODE_NAME, cpu: cfg.NODE_CPU, memory: cfg.NODE_MEMORY, maxPods: cfg.NODE_MAX_PODS, labels: parseMapStringString(cfg.NODE_LABELS, 'NODE_LABELS') });
        const logger = ctx.logger.child({ component: 'sync-loop' });
        const loop = new SyncLoop(
          new KvPodStore(pods, cfg.NODE_NAME),
          new KvNodeState(workers, podStatus, cfg.NODE_NAME),
          new CriRuntimeView(new NatsCriClient(nc, cfg.NODE_NAME, 'sync-loop'), cfg.NODE_NAME),
          new NatsSyncLoopOutbox(bus, cfg.NODE_NAME, cfg.POD_WORKER_SHARDS, (t) => dispatches.inc({ update_type: t })),
          node,
          clock,
          logger,
        );
        return new SyncLoopRunner(loop, clock, logger);
      },
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
