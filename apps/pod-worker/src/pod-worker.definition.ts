/**
 * pod-worker as a module of the process contract: what main.ts runs alone and
 * what the one-process entry (apps/kubelet) runs beside the others.
 */
import type { ServiceDefinition } from '@app/service';
import { podWorkerConfigSchema } from './pod-worker.config.js';
import { PodWorkerModule } from './pod-worker.module.js';

export const definition = {
  service: 'pod-worker',
  schema: podWorkerConfigSchema,
  module: PodWorkerModule,
  buckets: ['workers', 'leases', 'pods', 'podCache', 'probeResults', 'podStatus'],
  sharedSettings: ['POD_WORKER_SHARDS'],
} satisfies ServiceDefinition<typeof podWorkerConfigSchema>;
