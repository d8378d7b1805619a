import { Controller, Get } from '@nestjs/common';
import { EventPattern, Payload } from '@nestjs/microservices';
import { MessageTypes, Subjects, decodeMessage } from '@app/contracts';
import { ProbeResultsCache } from './adapters/probe-results-cache.js';
import { PodWorkers } from './pod-workers.js';
import { ShardManager } from './shards.js';

/** The probe results the pod worker needs (liveness and startup failures restart containers). */
@Controller()
export class PodWorkerController {
  constructor(
    private readonly probes: ProbeResultsCache,
    private readonly shards: ShardManager,
    private readonly workers: PodWorkers,
  ) {}

  @EventPattern(Subjects.probeResult.pattern)
  onProbe(@Payload() data: unknown): void {
    this.probes.observe(decodeMessage(MessageTypes.probeResult, data));
  }

  @Get('workers')
  state(): unknown {
    return { shards: this.shards.ownedShards, working: this.workers.working };
  }
}
