/**
 * console as a module of the process contract: what main.ts runs alone and
 * what the one-process entry (apps/kubelet) runs beside the others (by default
 * beside status-manager, kubelet-server and node-status: STATUS_GROUP).
 */
import type { ServiceDefinition } from '@app/service';
import { consoleConfigSchema } from './console.config.js';
import { ConsoleModule } from './console.module.js';

export const definition = {
  service: 'console',
  schema: consoleConfigSchema,
  module: ConsoleModule,
  buckets: ['pods', 'podStatus', 'probeResults'],
} satisfies ServiceDefinition<typeof consoleConfigSchema>;
