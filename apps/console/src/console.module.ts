/**
 * console: the web console (ours; upstream has none). Its page, its live
 * feed, a pod's timeline from its trace records and the node's topology
 * from NATS monitoring (asked over NATS), reading what the CLI reads: the node's pods from
 * the buckets (@app/pod-manager PodReadModel), a pod's events from the
 * status manager over NATS, its logs from the kubelet server's read port.
 * The fleet page reads every node from the hub, as the fleet reader, on a
 * connection of its own (FLEET_NATS_URL). One provider per port; the
 * adapters are in adapters/.
 */
import { Inject, Module, type OnModuleDestroy } from '@nestjs/common';
import { Clock, SystemClock } from '@app/clock';
import { NatsBus } from '@app/nats';
import type { Logger } from '@app/observability';
import { KvPodReadModel, PodReadModel } from '@app/pod-manager';
import { ConfigError, readSecretFile } from '@app/config';
import { SERVICE_CONFIG, SERVICE_CONTEXT, SERVICE_LOGGER, bucketOf, readHttpToken, type ServiceContext } from '@app/service';
import { EventHub } from './adapters/event-hub.js';
import { HttpContainerLogs } from './adapters/http-container-logs.js';
import { NatsAccountMonitoring } from './adapters/nats-monitoring.js';
import { NatsPodEvents } from './adapters/nats-pod-events.js';
import { NatsPodTraces } from './adapters/nats-pod-traces.js';
import { HubConnection, NatsFleetReads } from './adapters/nats-fleet-reads.js';
import { ConsoleFeed, ConsolePods } from './console-feed.js';
import { ConsoleFleet } from './console-fleet.js';
import { ConsoleTimelines, ConsoleTopology, NatsMonitoring, PodTraces } from './console-views.js';
import type { ConsoleConfig } from './console.config.js';
import { ConsoleController } from './console.controller.js';
import { ConsoleReadsController } from './console-reads.controller.js';
import { ContainerLogTail, FleetReads, PodEvents } from './ports.js';

@Module({
  controllers: [ConsoleController, ConsoleReadsController],
  providers: [
    { provide: Clock, useClass: SystemClock },
    {
      provide: KvPodReadModel,
      inject: [SERVICE_CONTEXT, Clock, SERVICE_LOGGER],
      useFactory: (ctx: ServiceContext, clock: Clock, logger: Logger) =>
        new KvPodReadModel({ pods: bucketOf(ctx, 'pods'), podStatus: bucketOf(ctx, 'podStatus'), probeResults: bucketOf(ctx, 'probeResults'), node: ctx.config.NODE_NAME, clock, logger: logger.child({ component: 'pod-read-model' }) }),
    },
    { provide: PodReadModel, useExisting: KvPodReadModel },
    { provide: EventHub, useFactory: () => new EventHub() },
    {
      provide: ConsolePods,
      inject: [PodReadModel, EventHub],
      useFactory: (pods: PodReadModel, events: EventHub): ConsolePods => ({
        listPods: () => pods.listPods(),
        onStatusChanged: (listener) => pods.onChange((uid) => listener(uid ?? '')),
        onEvent: (listener) => events.subscribe(listener),
      }),
    },
    { provide: PodEvents, inject: [NatsBus, SERVICE_CONFIG], useFactory: (bus: NatsBus, cfg: ConsoleConfig) => new NatsPodEvents(bus, cfg.NODE_NAME) },
    { provide: ContainerLogTail, inject: [SERVICE_CONFIG], useFactory: (cfg: ConsoleConfig) => new HttpContainerLogs(cfg.KUBELET_READ_URL, readHttpToken(cfg.HTTP_TOKEN_FILE)) },
    { provide: ConsoleFeed, inject: [ConsolePods, Clock], useFactory: (pods: ConsolePods, clock: Clock) => new ConsoleFeed(pods, clock) },
    { provide: PodTraces, inject: [SERVICE_CONTEXT, SERVICE_LOGGER], useFactory: (ctx: ServiceContext, logger: Logger) => new NatsPodTraces(ctx.connection, ctx.config.NODE_NAME, logger.child({ component: 'pod-traces' })) },
    { provide: NatsMonitoring, inject: [SERVICE_CONTEXT], useFactory: (ctx: ServiceContext) => new NatsAccountMonitoring(ctx.connection) },
    { provide: ConsoleTimelines, inject: [ConsolePods, PodTraces], useFactory: (pods: ConsolePods, traces: PodTraces) => new ConsoleTimelines(pods, traces) },
    {
      provide: ConsoleTopology,
      inject: [NatsMonitoring, Clock, SERVICE_CONFIG],
      useFactory: (monitoring: NatsMonitoring, clock: Clock, cfg: ConsoleConfig) => new ConsoleTopology(monitoring, clock, cfg.NODE_NAME),
    },
    // The fleet page: a connection of its own to the hub, as the fleet reader (never the console's node user); none without FLEET_NATS_URL.
    {
      provide: HubConnection,
      inject: [SERVICE_CONFIG, SERVICE_LOGGER],
      useFactory: (cfg: ConsoleConfig, logger: Logger) => {
        if (!cfg.FLEET_NATS_URL) return null;
        const password = readSecretFile('FLEET_NATS_PASSWORD_FILE', cfg.FLEET_NATS_PASSWORD_FILE);
        if (password === undefined) throw new ConfigError(['FLEET_NATS_URL is set but FLEET_NATS_PASSWORD_FILE is not: the fleet reader needs its password']);
        return new HubConnection({ servers: cfg.FLEET_NATS_URL, password, name: `console-fleet@${cfg.NODE_NAME}#${cfg.INSTANCE_ID}`, logger: logger.child({ component: 'fleet-hub' }) });
      },
    },
    { provide: FleetReads, inject: [HubConnection], useFactory: (hub: HubConnection | null) => hub && new NatsFleetReads(hub) },
    { provide: ConsoleFleet, inject: [FleetReads, Clock], useFactory: (reads: FleetReads | null, clock: Clock) => new ConsoleFleet(reads ?? undefined, clock) },
  ],
})
export class ConsoleModule implements OnModuleDestroy {
  /** The read model's watches and the hub's connection, stopped with the module. */
  constructor(
    private readonly pods: KvPodReadModel,
    @Inject(HubConnection) private readonly hub: HubConnection | null,
  ) {}

  async onModuleDestroy(): Promise<void> {
    this.pods.stop();
    await this.hub?.close();
  }
}
