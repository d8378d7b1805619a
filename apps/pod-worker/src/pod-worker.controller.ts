import { Controller, Get } from '@nestjs/common';
import { PodWorkers } from './pod-workers.js';
import { ShardManager } from './shards.js';

/**
 * The pod workers' state over HTTP. Probe results are not heard here: a
 * sync reads them from the prober's `probe-results` bucket (the sync loop
 * hears the probe messages and dispatches the syncs).
 */
@Controller()
export class PodWorkerController {
  constructor(
    private readonly shards: ShardManager,
    private readonly workers: PodWorkers,
  ) {}

  @Get('workers')
  state(): unknown {
    return { shards: this.shards.ownedShards, working: this.workers.working };
  }
}
