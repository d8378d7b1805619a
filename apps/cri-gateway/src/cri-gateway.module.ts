import { Inject, Module, type BeforeApplicationShutdown, type OnApplicationShutdown, type OnModuleInit } from '@nestjs/common';
import { Clock, SystemClock } from '@app/clock';
import type { CriTimeouts } from '@app/cri';
import { NatsBus } from '@app/nats';
import type { Logger, Registry } from '@app/observability';
import type { NatsConnection } from '@app/nats';
import { HealthChecks, METRICS_REGISTRY, NATS_CONNECTION, SERVICE_CONFIG, SERVICE_CONTEXT, SERVICE_LOGGER, type ServiceContext } from '@app/service';
import { CriNatsResponder } from './cri-nats.responder.js';
import { ContainerEventsRelay } from './container-events.js';
import { ContainerEventsController, CriController } from './cri-gateway.controller.js';
import { CriHttpSocket } from './adapters/cri-http-socket.js';
import { GrpcRuntimeConnection } from './adapters/grpc-runtime-connection.js';
import { RuntimeMetricsRecorder } from './adapters/prom-runtime-metrics.js';
import { CriGateway } from './gateway.js';
import { RuntimeChangeQueue } from './runtime-change-queue.js';
import { RuntimeConnection, RuntimeMetrics } from './ports.js';
import { RuntimeStatusPoller } from './runtime-status.js';
import type { CriGatewayOwnConfig } from './cri-gateway.config.js';

type Config = CriGatewayOwnConfig & { NODE_NAME: string; INSTANCE_ID: string };

/** kuberuntime's remote runtime and image clients: the only process on the CRI socket. */
@Module({
  controllers: [CriController, ContainerEventsController],
  providers: [
    { provide: Clock, useClass: SystemClock },
    {
      provide: RuntimeConnection,
      inject: [SERVICE_CONFIG],
      useFactory: (cfg: Config) => new GrpcRuntimeConnection(cfg.CONTAINER_RUNTIME_ENDPOINT),
    },
    { provide: RuntimeMetrics, inject: [METRICS_REGISTRY], useFactory: (r: Registry) => new RuntimeMetricsRecorder(r) },
    {
      provide: CriGateway,
      inject: [RuntimeConnection, SERVICE_CONFIG, RuntimeMetrics, Clock],
      useFactory: (conn: RuntimeConnection, cfg: Config, metrics: RuntimeMetrics, clock: Clock) => {
        // For calls that carry no deadline of their own (CRI_TIMEOUT_HEADER): curl over HTTP.
        const timeouts: CriTimeouts = { requestMs: cfg.RUNTIME_REQUEST_TIMEOUT, listMs: cfg.RUNTIME_LIST_TIMEOUT, pullMs: cfg.IMAGE_PULL_TIMEOUT };
        return new CriGateway(conn, timeouts, metrics, clock, new RuntimeChangeQueue(cfg.RUNTIME_CHANGE_CONCURRENCY, clock));
      },
    },
    {
      provide: RuntimeStatusPoller,
      inject: [CriGateway, Clock, SERVICE_LOGGER],
      useFactory: (gw: CriGateway, clock: Clock, logger: Logger) => new RuntimeStatusPoller(gw, clock, logger.child({ component: 'runtime-status' })),
    },
    {
      provide: CriNatsResponder,
      inject: [NATS_CONNECTION, CriGateway, SERVICE_CONFIG, SERVICE_LOGGER, Clock],
      useFactory: (nc: NatsConnection, gw: CriGateway, cfg: Config, logger: Logger, clock: Clock) => new CriNatsResponder({ nc, gateway: gw, node: cfg.NODE_NAME, logger, clock }),
    },
    {
      provide: CriHttpSocket,
      inject: [CriGateway, SERVICE_CONFIG, SERVICE_LOGGER],
      useFactory: (gw: CriGateway, cfg: Config, logger: Logger) =>
        cfg.CRI_HTTP_SOCKET ? new CriHttpSocket(gw, cfg.CRI_HTTP_SOCKET, new URL(cfg.CONTAINER_RUNTIME_ENDPOINT).pathname, logger.child({ component: 'cri-http' })) : null,
    },
    {
      provide: ContainerEventsRelay,
      inject: [RuntimeConnection, NatsBus, SERVICE_CONFIG, Clock, SERVICE_LOGGER],
      useFactory: (conn: RuntimeConnection, bus: NatsBus, cfg: Config, clock: Clock, logger: Logger) =>
        new ContainerEventsRelay(conn, bus, cfg.NODE_NAME, clock, logger.child({ component: 'container-events' }), `${cfg.INSTANCE_ID}.${clock.now()}`),
    },
  ],
})
export class CriGatewayModule implements OnModuleInit, BeforeApplicationShutdown, OnApplicationShutdown {
  constructor(
    private readonly poller: RuntimeStatusPoller,
    private readonly relay: ContainerEventsRelay,
    private readonly connection: RuntimeConnection,
    private readonly responder: CriNatsResponder,
    @Inject(CriHttpSocket) private readonly httpSocket: CriHttpSocket | null,
    @Inject(HealthChecks) private readonly health: HealthChecks,
    @Inject(SERVICE_CONTEXT) private readonly ctx: ServiceContext,
  ) {}

  async onModuleInit(): Promise<void> {
    await this.httpSocket?.start();
    this.ctx.addSubjects(this.responder.start());
    this.health.addReadiness('runtime', () => this.poller.readiness());
    this.health.addReadiness('containerEvents', () => this.relay.report());
    this.poller.start();
    this.relay.start();
  }

  beforeApplicationShutdown(): void {
    this.responder.stop();
  }

  async onApplicationShutdown(): Promise<void> {
    await Promise.all([this.poller.stop(), this.relay.stop(), this.httpSocket?.stop()]);
    this.connection.close();
  }
}
