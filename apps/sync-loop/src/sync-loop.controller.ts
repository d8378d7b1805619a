import { Controller, Get, Inject } from '@nestjs/common';
import type { Logger } from '@app/observability';
import { SERVICE_LOGGER } from '@app/service';
import { EventPattern, MessagePattern, Payload } from '@nestjs/microservices';
import { MessageTypes, Subjects, decodeMessage, isRecord, type PodResyncMessage } from '@app/contracts';
import { PodResyncs } from './pod-resyncs.js';
import { PodStore } from './ports.js';
import { SyncLoopRunner } from './sync-loop-runner.js';

/** The channels of syncLoopIteration, over NATS; the runner drops them while this instance is a standby. */
@Controller()
export class SyncLoopChannels {
  constructor(
    private readonly runner: SyncLoopRunner,
    private readonly store: PodStore,
    private readonly resyncs: PodResyncs,
    @Inject(SERVICE_LOGGER) private readonly logger: Logger,
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

  /**
   * Subjects.podResync: a new status-manager leader asks for every pod to be
   * synced now. A standby, or a leader still restoring, says it does not
   * lead (the asker tries again, and reaches the leader). Requests are
   * coalesced (PodResyncs): one queued at most, and one that comes just after
   * a resync ran is answered by it.
   */
  @MessagePattern(Subjects.podResync.pattern)
  async onResync(@Payload() data: unknown): Promise<PodResyncMessage> {
    const req = decodeMessage(MessageTypes.podResyncRequest, data);
    let pods: number | undefined;
    if (this.runner.isActive && this.runner.restored) pods = await this.resyncs.request();
    if (pods !== undefined) this.logger.info({ pods, reason: req.reason }, 'every pod synced now');
    return { type: MessageTypes.podResync, leading: pods !== undefined, pods: pods ?? 0 };
  }

  /** The podManager, for people and tests; a standby reads the leader's from the `pods` bucket. */
  @Get('pods')
  async pods(): Promise<unknown> {
    const leading = this.runner.isActive;
    const pods = leading ? [...this.runner.loop.desiredPods.values()] : await this.store.loadPods();
    return { leading, sourcesReady: this.runner.loop.areSourcesReady, pods };
  }
}
