import { Controller, Get, NotFoundException, Param } from '@nestjs/common';
import { EventPattern, MessagePattern, Payload, Ctx, NatsContext } from '@nestjs/microservices';
import { MessageTypes, Subjects, decodeMessage, isRecord, type EventMessage, type Pod, type PodList } from '@app/contracts';
import { rpcError } from '@app/service';
import { PodReadModel } from '@app/pod-manager';
import { StatusManager } from './status-manager.js';
import { LeaderGate, replayKey } from './takeover-replay.js';

/**
 * The statusManager calls, probe results and events, over NATS; the read
 * API over HTTP and NATS. Calls and probe results are acted on by the leader
 * only (LeaderGate: a standby keeps them for its takeover); events are only
 * kept in memory, so a standby keeps them too and serves them after it takes
 * over. Every instance serves reads: the leader from what it holds, a
 * standby from the buckets as the leader wrote them (PodReadModel), without
 * touching the manager's state.
 */
@Controller()
export class StatusManagerController {
  constructor(
    private readonly manager: StatusManager,
    private readonly gate: LeaderGate,
    private readonly readModel: PodReadModel,
  ) {}

  @EventPattern(Subjects.status.pattern)
  async onStatus(@Payload() data: unknown, @Ctx() ctx: unknown): Promise<void> {
    const parsed = Subjects.status.parse((ctx as NatsContext).getSubject());
    if (!parsed) return;
    const msg = decodeMessage(MessageTypes.statusCommand, data);
    await this.gate.offer(replayKey(parsed.verb, msg.podUid, msg.args['containerId']), () => this.manager.handleCommand(parsed.verb, msg));
  }

  @EventPattern(Subjects.probeResult.pattern)
  async onProbe(@Payload() data: unknown): Promise<void> {
    const r = decodeMessage(MessageTypes.probeResult, data);
    if (r.probeType === 'liveness') return; // the sync loop's business
    await this.gate.offer(`${r.probeType}/${r.podUid}/${r.containerId}`, () => this.manager.handleProbeResult(r));
  }

  @EventPattern(Subjects.events.pattern)
  onEvent(@Payload() data: unknown): void {
    this.manager.handleEvent(decodeMessage(MessageTypes.event, data));
  }

  /** The kubelet's read-only `/pods`: a v1 PodList with spec and status. */
  @Get('pods')
  pods(): Promise<PodList> {
    return this.reads().listPods();
  }

  @Get('pods/:namespace/:name')
  async pod(@Param('namespace') namespace: string, @Param('name') name: string): Promise<Pod> {
    const pod = await this.reads().getPod(namespace, name);
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
      const pod = await this.reads().getPod(namespace, data['name']);
      if (!pod) throw rpcError('NotFound', `pod ${namespace}/${data['name']} not found on this node`);
      return pod;
    }
    return this.reads().listPods();
  }

  /** Subjects.podEvents (`kubelet.<node>.service.status-manager.events`) with `{"namespace","name"}`. */
  @MessagePattern(Subjects.podEvents.pattern)
  eventsOverNats(@Payload() data: unknown): { items: EventMessage[] } {
    if (!isRecord(data) || typeof data['name'] !== 'string') throw rpcError('InvalidArgument', 'events needs {"namespace": ..., "name": ...}');
    return { items: this.manager.eventsOf(typeof data['namespace'] === 'string' ? data['namespace'] : 'default', data['name']) };
  }

  /** The leader's own statuses; a standby's are the leader's, from the buckets. */
  private reads(): Pick<PodReadModel, 'listPods' | 'getPod'> {
    return this.gate.isActing ? this.manager : this.readModel;
  }
}
