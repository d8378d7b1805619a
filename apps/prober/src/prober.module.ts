import { Controller, Get, Inject, Module, type OnApplicationShutdown, type OnModuleInit } from '@nestjs/common';
import { Ctx, EventPattern, NatsContext, Payload } from '@nestjs/microservices';
import { Clock, SystemClock } from '@app/clock';
import { MessageTypes, Subjects, decodeMessage, podEvent, type PodStatus, type ProbeResultMessage } from '@app/contracts';
import { NatsCriClient } from '@app/cri';
import { NatsBus } from '@app/nats';
import type { Registry } from '@app/observability';
import { HealthChecks, METRICS_REGISTRY, SERVICE_CONTEXT, type ServiceContext } from '@app/service';
import { newProbeHandler } from './handlers.js';
import { ProbeEventSink, PromProberMetrics, ResultSink, newProberManager, type ProberManager } from './prober-manager.js';
import type { ProberConfig } from './prober.config.js';
import type { ProbeEvent } from './worker.js';

/** The results managers' Updates(): `kubelet.<node>.probe.<type>.<uid>`. */
class NatsResultSink extends ResultSink {
  constructor(
    private readonly bus: NatsBus,
    private readonly node: string,
  ) {
    super();
  }
  publish(msg: ProbeResultMessage): void {
    this.bus.publish(Subjects.probeResult.build(this.node, msg.probeType, msg.podUid), msg, { podUid: msg.podUid });
  }
}

/** The Unhealthy and ProbeWarning events ("Liveness probe failed: ..."). */
class NatsProbeEventSink extends ProbeEventSink {
  constructor(
    private readonly bus: NatsBus,
    private readonly node: string,
  ) {
    super();
  }
  record(e: ProbeEvent): void {
    const uid = e.pod.metadata.uid ?? '';
    this.bus.publish(Subjects.events.build(this.node, uid), podEvent(e.pod, e.eventType, e.reason, e.message, this.node, { fieldPath: `spec.containers{${e.container.name}}` }), { podUid: uid });
  }
}

export const PROBER_MANAGER = Symbol('PROBER_MANAGER');

/** The probeManager's calls, and the pod statuses its workers look at. */
@Controller()
export class ProberController {
  constructor(@Inject(PROBER_MANAGER) private readonly manager: ProberManager) {}

  @EventPattern(Subjects.prober.pattern)
  onCommand(@Payload() data: unknown, @Ctx() ctx: unknown): void {
    const verb = Subjects.prober.parse((ctx as NatsContext).getSubject())?.verb;
    const msg = decodeMessage(MessageTypes.proberCommand, data);
    switch (verb) {
      case 'AddPod':
        for (const p of msg.pods) this.manager.addPod(p);
        break;
      case 'RemovePod':
        for (const p of msg.pods) this.manager.removePod(p);
        break;
      case 'StopLivenessAndStartup':
        for (const p of msg.pods) this.manager.stopLivenessAndStartup(p);
        break;
      case 'CleanupPods':
        this.manager.cleanupPods(new Set(msg.podUids ?? msg.pods.map((p) => p.metadata.uid ?? '')));
        break;
      case undefined:
        break;
    }
  }

  /** The pod worker's statuses: container IDs and states, for the workers. */
  @EventPattern(Subjects.status.pattern)
  onStatus(@Payload() data: unknown, @Ctx() ctx: unknown): void {
    const verb = Subjects.status.parse((ctx as NatsContext).getSubject())?.verb;
    if (verb !== 'SetPodStatus' && verb !== 'TerminatePod') return;
    const msg = decodeMessage(MessageTypes.statusCommand, data);
    const status = msg.args['status'] as PodStatus | undefined;
    if (status) this.manager.updatePodStatus(msg.podUid, status);
  }

  @Get('workers')
  workers(): { workers: number } {
    return { workers: this.manager.workerCount() };
  }
}

/** prober.Manager, its workers and the results managers. */
@Module({
  controllers: [ProberController],
  providers: [
    { provide: Clock, useClass: SystemClock },
    {
      provide: PROBER_MANAGER,
      inject: [SERVICE_CONTEXT, Clock, METRICS_REGISTRY],
      useFactory: (ctx: ServiceContext<ProberConfig>, clock: Clock, registry: Registry) =>
        newProberManager({
          clock,
          handler: newProbeHandler({ cri: new NatsCriClient(ctx.connection, ctx.config.NODE_NAME, 'prober'), clock }),
          sink: new NatsResultSink(ctx.bus, ctx.config.NODE_NAME),
          events: new NatsProbeEventSink(ctx.bus, ctx.config.NODE_NAME),
          metrics: new PromProberMetrics(registry),
          hostIP: ctx.config.NODE_IP,
          logger: ctx.logger.child({ component: 'prober' }),
        }),
    },
  ],
})
export class ProberModule implements OnModuleInit, OnApplicationShutdown {
  constructor(
    @Inject(PROBER_MANAGER) private readonly manager: ProberManager,
    @Inject(HealthChecks) private readonly health: HealthChecks,
  ) {}

  onModuleInit(): void {
    this.health.addReadiness('probes', () => ({ ok: true, detail: `${this.manager.workerCount()} probe workers` }));
  }

  onApplicationShutdown(): void {
    this.manager.stopAll();
  }
}
