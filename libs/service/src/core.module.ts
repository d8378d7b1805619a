import { Controller, Get, Header, HttpCode, Inject, Module, Res, type DynamicModule } from '@nestjs/common';
import { MessagePattern } from '@nestjs/microservices';
import type { ServerResponse } from 'node:http';
import { Subjects, type ServiceInfo } from '@app/contracts';
import { LeaderElector, LeaderFence } from '@app/leader-election';
import { NatsBus } from '@app/nats';
import { Registry } from '@app/observability';
import { HealthChecks } from './health.js';
import { writeJson } from './http-body.js';
import {
  METRICS_REGISTRY,
  NATS_CONNECTION,
  SERVICE_CONFIG,
  SERVICE_CONTEXT,
  SERVICE_LOGGER,
  type ServiceContext,
} from './context.js';

/** `/healthz`, `/readyz` and `/metrics` on the service's one HTTP port. */
@Controller()
export class HealthController {
  constructor(
    private readonly health: HealthChecks,
    @Inject(METRICS_REGISTRY) private readonly metrics: Registry,
  ) {}

  @Get('healthz')
  healthz(@Res() res: ServerResponse): void {
    const report = this.health.healthy();
    writeJson(res, report.ok ? 200 : 503, report);
  }

  @Get('readyz')
  readyz(@Res() res: ServerResponse): void {
    const report = this.health.ready();
    writeJson(res, report.ok ? 200 : 503, report);
  }

  @Get('metrics')
  @HttpCode(200)
  @Header('Cache-Control', 'no-store')
  async metricsText(@Res() res: ServerResponse): Promise<void> {
    const text = await this.metrics.metrics();
    res.writeHead(200, { 'content-type': this.metrics.contentType, 'content-length': Buffer.byteLength(text) });
    res.end(text);
  }
}

/** Answers `kubelet.<node>.service.<service>.info` and `GET /info`. */
@Controller()
export class ServiceInfoController {
  constructor(@Inject(SERVICE_CONTEXT) private readonly ctx: ServiceContext) {}

  @MessagePattern(Subjects.serviceInfo.pattern)
  onInfo(): ServiceInfo {
    return this.info();
  }

  @Get('info')
  info(): ServiceInfo {
    const { identity, config } = this.ctx;
    return {
      type: 'kubelet.v1.service_info',
      service: identity.service,
      node: identity.node,
      instance: identity.instance,
      version: identity.version,
      connectionName: identity.connectionName,
      pid: process.pid,
      startedAt: identity.startedAt.toISOString(),
      httpPort: config.PORT,
      subjects: [...this.ctx.subjects()],
      contract: this.ctx.contract(),
      ...(this.ctx.leadership ? { leadership: this.ctx.leadership.status() } : {}),
    };
  }
}

/**
 * The providers every service shares; global so that app modules just
 * inject them. Single-active services also get their LeaderElector (to
 * follow leadership) and the same object as LeaderFence (for the adapters
 * that write on the leader's behalf).
 */
@Module({})
export class CoreModule {
  static forRoot(ctx: ServiceContext): DynamicModule {
    const leadership = ctx.leadership
      ? [
          { provide: LeaderElector, useValue: ctx.leadership },
          { provide: LeaderFence, useValue: ctx.leadership },
        ]
      : [];
    return {
      module: CoreModule,
      global: true,
      controllers: [HealthController, ServiceInfoController],
      providers: [
        { provide: SERVICE_CONTEXT, useValue: ctx },
        { provide: SERVICE_CONFIG, useValue: ctx.config },
        { provide: SERVICE_LOGGER, useValue: ctx.logger },
        { provide: METRICS_REGISTRY, useValue: ctx.metrics },
        { provide: NATS_CONNECTION, useValue: ctx.connection },
        { provide: NatsBus, useValue: ctx.bus },
        { provide: HealthChecks, useValue: ctx.health },
        ...leadership,
      ],
      exports: [SERVICE_CONTEXT, SERVICE_CONFIG, SERVICE_LOGGER, METRICS_REGISTRY, NATS_CONNECTION, NatsBus, HealthChecks, ...leadership.map((p) => p.provide)],
    };
  }
}
