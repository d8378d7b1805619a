/**
 * status-manager as a module of the process contract: what main.ts runs alone and
 * what the one-process entry (apps/kubelet) runs beside the others.
 */
import type { ServiceDefinition } from '@app/service';
import { statusManagerConfigSchema } from './status-manager.config.js';
import { StatusManagerModule } from './status-manager.module.js';

export const definition = {
  service: 'status-manager',
  schema: statusManagerConfigSchema,
  module: StatusManagerModule,
  buckets: ['podStatus', 'pods', 'leases', 'probeResults', 'workers'],
} satisfies ServiceDefinition<typeof statusManagerConfigSchema>;
