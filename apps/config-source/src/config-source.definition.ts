/**
 * config-source as a module of the process contract: what main.ts runs alone and
 * what the one-process entry (apps/kubelet) runs beside the others.
 */
import type { ServiceDefinition } from '@app/service';
import { configSourceConfigSchema } from './config-source.config.js';
import { ConfigSourceModule } from './config-source.module.js';

export const definition = {
  service: 'config-source',
  schema: configSourceConfigSchema,
  module: ConfigSourceModule,
  // Read only: the creationTimestamps of the pods the sync loop holds.
  buckets: ['pods'],
} satisfies ServiceDefinition<typeof configSourceConfigSchema>;
