import { Controller, Get, HttpCode, Inject, Module, Post, Req, Res, type OnApplicationShutdown, type OnModuleInit } from '@nestjs/common';
import { EventPattern, MessagePattern, Payload } from '@nestjs/microservices';
import type { Request, Response } from 'express';
import { Clock, SystemClock } from '@app/clock';
import { Subjects, isRecord, type ContainerEventsStatusMessage } from '@app/contracts';
import { NatsCriClient } from '@app/cri';
import { NatsBus, type NatsConnection } from '@app/nats';
import { Gauge, type Registry } from '@app/observability';
import { HealthChecks, METRICS_REGISTRY, NATS_CONNECTION, SERVICE_CONTEXT, readJsonBody, rpcError, toErrorReply, type ServiceContext } from '@app/service';
import { KvPodCacheStore, NatsPlegEventSink, PromPlegMetrics } from './adapters.js';
import { GenericPleg } from './generic-pleg.js';
import { PlegRunner, type PlegMode } from './pleg-runner.js';
import type { PlegConfig } from './pleg.config.js';

function parseMode(body: unknown): PlegMode {
  const mode = isRecord(body) ? body['mode'] : undefined;
  if (mode !== 'generic' && mode !== 'evented') throw rpcError('InvalidArgument', `mode must be "generic" or "evented", got ${JSON.stringify(mode ?? null)}`);
  return mode;
}

/** The PLEG's commands, and the runtime's container events. */
@Controller()
export class PlegController {
  constructor(private readonly runner: PlegRunner) {}

  @EventPattern(Subjects.criEvents.pattern)
  onRuntimeEvent(@Payload() data: unknown): Promise<void> {
    return this.runner.onRuntimeMessage(data);
  }

  /** `kubelet.<node>.service.pleg.mode`: `{}` reads the mode, `{"mode": "evented"}` switches it. */
  @MessagePattern(Subjects.serviceCommand.pattern('mode'))
  onMode(@Payload() data: unknown): unknown {
    if (isRecord(data) && data['mode'] !== undefined) this.runner.setMode(parseMode(data));
    return this.runner.mode;
  }

  @Get('mode')
  getMode(): unknown {
    return this.runner.mode;
  }

  @Post('mode')
  @HttpCode(200)
  async postMode(@Req() req: Request, @Res() res: Response): Promise<void> {
    try {
      this.runner.setMode(parseMode(await readJsonBody(req)));
      res.json(this.runner.mode);
    } catch (err) {
      res.status(400).json(toErrorReply(err));
    }
  }
}

/** GenericPLEG (and Evented PLEG where the runtime streams events) and the pod cache. */
@Module({
  controllers: [PlegController],
  providers: [
    { provide: Clock, useClass: SystemClock },
    { provide: PromPlegMetrics, inject: [METRICS_REGISTRY], useFactory: (r: Registry) => new PromPlegMetrics(r) },
    {
      provide: GenericPleg,
      inject: [SERVICE_CONTEXT, NATS_CONNECTION, NatsBus, Clock, PromPlegMetrics],
      useFactory: (ctx: ServiceContext<PlegConfig>, nc: NatsConnection, bus: NatsBus, clock: Clock, metrics: PromPlegMetrics) => {
        const cfg = ctx.config;
        const kv = ctx.buckets.podCache;
        if (!kv) throw new Error('pleg needs the pod-cache bucket');
        return new GenericPleg(
          new NatsCriClient(nc, cfg.NODE_NAME, 'pleg', { requestMs: 120_000, listMs: 30_000, pullMs: 120_000 }),
          new KvPodCacheStore(kv, cfg.NODE_NAME),
          new NatsPlegEventSink(bus, cfg.NODE_NAME),
          clock,
          ctx.logger.child({ component: 'pleg' }),
          { inspectTimeoutMs: cfg.INSPECT_TIMEOUT, inspectConcurrency: cfg.INSPECT_CONCURRENCY, relistThresholdMs: cfg.RELIST_THRESHOLD, node: cfg.NODE_NAME },
          metrics,
        );
      },
    },
    {
      provide: PlegRunner,
      inject: [SERVICE_CONTEXT, GenericPleg, NatsBus, Clock],
      useFactory: (ctx: ServiceContext<PlegConfig>, pleg: GenericPleg, bus: NatsBus, clock: Clock) => {
        const cfg = ctx.config;
        const kv = ctx.buckets.podCache;
        if (!kv) throw new Error('pleg needs the pod-cache bucket');
        const askRelay = () =>
          bus.request<ContainerEventsStatusMessage>(Subjects.serviceCommand.build(cfg.NODE_NAME, 'cri-gateway', 'events'), {}, { timeoutMs: 5000 }).catch(() => undefined);
        return new PlegRunner(pleg, new KvPodCacheStore(kv, cfg.NODE_NAME), new NatsPlegEventSink(bus, cfg.NODE_NAME), clock, ctx.logger.child({ component: 'pleg-mode' }), { relistPeriodMs: cfg.RELIST_PERIOD, eventedRelistPeriodMs: cfg.EVENTED_RELIST_PERIOD, eventedSilenceMs: 90_000 }, cfg.PLEG_MODE, askRelay);
      },
    },
  ],
})
export class PlegModule implements OnModuleInit, OnApplicationShutdown {
  constructor(
    private readonly pleg: GenericPleg,
    private readonly runner: PlegRunner,
    @Inject(HealthChecks) private readonly health: HealthChecks,
    @Inject(SERVICE_CONTEXT) private readonly ctx: ServiceContext,
    @Inject(METRICS_REGISTRY) private readonly registry: Registry,
  ) {}

  async onModuleInit(): Promise<void> {
    const restored = await this.pleg.restore();
    this.ctx.logger.info({ pods: restored }, 'PLEG view restored from the pod cache');
    this.health.addLiveness('pleg', () => this.pleg.healthy());
    this.health.addReadiness('pleg', () => ({ ok: true, detail: `mode ${this.runner.mode.effective}${this.runner.mode.fallbackReason ? ` (fell back: ${this.runner.mode.fallbackReason})` : ''}; ${this.pleg.healthy().detail}` }));
    const pleg = this.pleg;
    new Gauge({ name: 'kubelet_split_pleg_healthy', help: '1 when the last successful relist is within RELIST_THRESHOLD.', registers: [this.registry], collect() {
      this.set(pleg.healthy().ok ? 1 : 0);
    } });
    this.runner.start();
  }

  onApplicationShutdown(): void {
    this.runner.stop();
  }
}
