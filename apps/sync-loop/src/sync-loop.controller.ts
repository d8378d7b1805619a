import { Controller, Get } from '@nestjs/common';
import { EventPattern, Payload } from '@nestjs/microservices';
import { MessageTypes, Subjects, decodeMessage, isRecord } from '@app/contracts';
import { PodStore } from './ports.js';
import { SyncLoopRunner } from './sync-loop-runner.js';

/** The channels of syncLoopIteration, over NATS; the runner drops them while this instance is a standby. */
@Controller()
export class SyncLoopChannels {
  constructor(
    private readonly runner: SyncLoopRunner,
    private readonly store: PodStore,
  ) {}

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

  /** The podManager, for people and tests; a standby reads the leader's from the `pods` bucket. */
  @Get('pods')
  async pods(): Promise<unknown> {
    const leading = this.runner.isActive;
    const pods = leading ? [...this.runner.loop.desiredPods.values()] : await this.store.loadPods();
    return { leading, sourcesReady: this.runner.loop.areSourcesReady, pods };
  }
}
