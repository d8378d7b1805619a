import { Controller, Get } from '@nestjs/common';
import { Ctx, EventPattern, NatsContext, Payload } from '@nestjs/microservices';
import { MessageTypes, Subjects, decodeMessage, type PodStatus } from '@app/contracts';
import { ProberManager } from './prober-manager.js';

/** The probeManager's calls, and the pod statuses its workers look at. */
@Controller()
export class ProberController {
  constructor(private readonly manager: ProberManager) {}

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
