/**
 * sync-loop as a module of the process contract: what main.ts runs alone and
 * what the one-process entry (apps/kubelet) runs beside the others.
 */
import type { ServiceDefinition } from '@app/service';
import { syncLoopConfigSchema } from './sync-loop.config.js';
import { SyncLoopModule } from './sync-loop.module.js';

export const definition = {
  service: 'sync-loop',
  schema: syncLoopConfigSchema,
  module: SyncLoopModule,
  buckets: ['pods', 'workers', 'podStatus', 'leases', 'podCache'],
  sharedSettings: ['POD_WORKER_SHARDS'],
} satisfies ServiceDefinition<typeof syncLoopConfigSchema>;
