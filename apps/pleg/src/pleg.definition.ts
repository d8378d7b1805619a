/**
 * pleg as a module of the process contract: what main.ts runs alone and
 * what the one-process entry (apps/kubelet) runs beside the others.
 */
import type { ServiceDefinition } from '@app/service';
import { plegConfigSchema } from './pleg.config.js';
import { PlegModule } from './pleg.module.js';

export const definition = {
  service: 'pleg',
  schema: plegConfigSchema,
  module: PlegModule,
  buckets: ['podCache', 'leases'],
} satisfies ServiceDefinition<typeof plegConfigSchema>;
