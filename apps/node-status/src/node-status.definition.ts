/**
 * node-status as a module of the process contract: what main.ts runs alone and
 * what the one-process entry (apps/kubelet) runs beside the others (by default
 * beside status-manager, kubelet-server and console: STATUS_GROUP).
 */
import type { ServiceDefinition } from '@app/service';
import { nodeStatusConfigSchema } from './node-status.config.js';
import { NodeStatusModule } from './node-status.module.js';

export const definition = {
  service: 'node-status',
  schema: nodeStatusConfigSchema,
  module: NodeStatusModule,
  buckets: ['pods', 'leases', 'podCache', 'workers'],
} satisfies ServiceDefinition<typeof nodeStatusConfigSchema>;
