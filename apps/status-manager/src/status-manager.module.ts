import { Controller, Get, Inject, Module, NotFoundException, Param, type OnModuleInit } from '@nestjs/common';
import { EventPattern, MessagePattern, Payload, Ctx, NatsContext } from '@nestjs/microservices';
import { Clock, SystemClock } from '@app/clock';
import { MessageTypes, Subjects, decodeMessage, isRecord, type EventMessage, type Pod, type PodList } from '@app/contracts';
import { Gauge, Histogram, type Registry } from '@app/observability';
import { HealthChecks, METRICS_REGISTRY, SERVICE_CONTEXT, rpcError, type ServiceContext } from '@app/service';
import { KvDesiredPods, KvStatusStore } from './adapters.js';
import type { StatusManagerConfig } from './status-manager.config.js';
import { StatusManager } from './status-manager.js';

/** The statusManager calls, probe results and events, over NATS; the read API over HTTP and NATS. */
@Controller()
export class StatusManagerController {
  constructor(private readonly manager: StatusManager) {}

  @EventPattern(Subjects.status.pattern)
  async onStatus(@Payload() data: unknown, @Ctx() ctx: unknown): Promise<void> {
    const parsed = Subjects.status.parse((ctx as NatsContext).getSubject());
    if (!parsed) return;
    await this.manager.handleCommand(parsed.verb, decodeMessage(MessageTypes.statusCommand, data));
  }

  @EventPattern(Subjects.probeResult.pattern)
  async onProbe(@Payload() data: unknown): Promise<void> {
    await this.manager.handleProbeResult(decodeMessage(MessageTypes.probeResult, data));
  }

  @EventPattern(Subjects.events.pattern)
  onEvent(@Payload() data: unknown): void {
    this.manager.handleEvent(decodeMessage(MessageTypes.event, data));
  }

  /** The kubelet's read-only `/pods`: a v1 PodList with spec and status. */
  @Get('pods')
  pods(): Promise<PodList> {
    return this.manager.listPods();
  }

  @Get('pods/:namespace/:name')
  async pod(@Param('namespace') namespace: string, @Param('name') name: string): Promise<Pod> {
    const pod = await this.manager.getPod(namespace, name);
    if (!pod) throw new NotFoundException(`pod ${namespace}/${name} not found on this node`);
    return pod;
  }

  @Get('pods/:namespace/:name/events')
  events(@Param('namespace') namespace: string, @Param('name') name: string): { items: EventMessage[] } {
    return { items: this.manager.eventsOf(namespace, name) };
  }

  /** The same over NATS: `kubelet.<node>.service.status-manager.pods`, `{}` or `{"namespace","name"}` for one pod. */
  @MessagePattern(Subjects.serviceCommand.pattern('pods'))
  async podsOverNats(@Payload() data: unknown): Promise<PodList | Pod> {
    if (isRecord(data) && typeof data['name'] === 'string') {
      const namespace = typeof data['namespace'] === 'string' ? data['namespace'] : 'default';
      const pod = await this.manager.getPod(namespace, data['name']);
      if (!pod) throw rpcError('NotFound', `pod ${namespace}/${data['name']} not found on this node`);
      return pod;
    }
    return this.manager.listPods();
  }

  /** `kubelet.<node>.service.status-manager.events` with `{"namespace","name"}`. */
  @MessagePattern(Subjects.serviceCommand.pattern('events'))
  eventsOverNats(@Payload() data: unknown): { items: EventMessage[] } {
    if (!isRecord(data) || typeof data['name'] !== 'string') throw rpcError('InvalidArgument', 'events needs {"namespace": ..., "name": ...}');
    return { items: this.manager.eventsOf(typeof data['namespace'] === 'string' ? data['namespace'] : 'default', data['name']) };
  }
}

/** status.Manager: the versioned API pod status and the read API. */
@Module({
  controllers: [StatusManagerController],
  providers: [
    { provide: Clock, useClass: SystemClock },
    {
      provide: StatusManager,
      inject: [SERVICE_CONTEXT, Clock, METRICS_REGISTRY],
      useFactory: (ctx: ServiceContext<StatusManagerConfig>, clock: Clock, registry: Registry) => {
        const { podStatus, pods } = ctx.buckets;
        if (!podStatus || !pods) throw new Error('status-manager needs the pod-status and pods buckets');
        const sync = new Histogram({ name: 'kubelet_pod_status_sync_duration_seconds', help: 'Duration in seconds to sync a pod status update.', buckets: [0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5], registers: [registry] });
        const desired = new KvDesiredPods(pods, ctx.config.NODE_NAME);
        const manager = new StatusManager(new KvStatusStore(podStatus, ctx.config.NODE_NAME), desired, clock, ctx.logger.child({ component: 'status' }), ctx.config.EVENTS_PER_POD, { synced: (s) => sync.observe(s) });
        new Gauge({ name: 'kubelet_desired_pods', help: 'The number of pods the kubelet is being instructed to run. static is true if the pod is not from the apiserver.', labelNames: ['static'], registers: [registry], async collect() {
          const records = await desired.all();
          const staticPods = records.filter((r) => r.source !== 'api').length;
          this.set({ static: 'true' }, staticPods);
          this.set({ static: 'false' }, records.length - staticPods);
        } });
        new Gauge({ name: 'kubelet_running_pods', help: 'Number of pods that have a running pod sandbox', registers: [registry], collect() {
          this.set(manager.statuses().filter(([, e]) => e.status.phase === 'Running' || (e.status.conditions ?? []).some((c) => c.type === 'PodReadyToStartContainers' && c.status === 'True')).length);
        } });
        new Gauge({ name: 'kubelet_running_containers', help: 'Number of containers currently running', labelNames: ['container_state'], registers: [registry], collect() {
          const counts: Record<string, number> = { running: 0, exited: 0, created: 0, unknown: 0 };
          for (const [, e] of manager.statuses()) {
            for (const c of [...(e.status.containerStatuses ?? []), ...(e.status.initContainerStatuses ?? [])]) {
              const state = c.state?.running ? 'running' : c.state?.terminated ? 'exited' : c.containerID ? 'created' : undefined;
              if (state) counts[state] = (counts[state] ?? 0) + 1;
            }
          }
          for (const [state, n] of Object.entries(counts)) this.set({ container_state: state }, n);
        } });
        return manager;
      },
    },
  ],
})
export class StatusManagerModule implements OnModuleInit {
  constructor(
    private readonly manager: StatusManager,
    @Inject(HealthChecks) private readonly health: HealthChecks,
    @Inject(SERVICE_CONTEXT) private readonly ctx: ServiceContext,
  ) {}

  async onModuleInit(): Promise<void> {
    const n = await this.manager.restore();
    this.ctx.logger.info({ statuses: n }, 'pod statuses restored from KV');
    this.health.addReadiness('statuses', () => ({ ok: true, detail: `${this.manager.statuses().length} pod statuses` }));
  }
}
