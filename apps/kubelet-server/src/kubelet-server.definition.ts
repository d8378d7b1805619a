/**
 * kubelet-server as a module of the process contract: what main.ts runs alone and
 * what the one-process entry (apps/kubelet) runs beside the others (by default
 * beside status-manager, node-status and console: STATUS_GROUP).
 */
import type { ServiceDefinition } from '@app/service';
import { kubeletServerConfigSchema } from './kubelet-server.config.js';
import { KubeletServerModule } from './kubelet-server.module.js';

export const definition = {
  service: 'kubelet-server',
  schema: kubeletServerConfigSchema,
  module: KubeletServerModule,
  buckets: ['pods', 'podStatus', 'probeResults'],
} satisfies ServiceDefinition<typeof kubeletServerConfigSchema>;
