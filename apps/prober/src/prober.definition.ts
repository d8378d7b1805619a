/**
 * prober as a module of the process contract: what main.ts runs alone and
 * what the one-process entry (apps/kubelet) runs beside the others.
 */
import type { ServiceDefinition } from '@app/service';
import { proberConfigSchema } from './prober.config.js';
import { ProberModule } from './prober.module.js';

export const definition = {
  service: 'prober',
  schema: proberConfigSchema,
  module: ProberModule,
  buckets: ['probeResults', 'pods', 'podStatus'],
} satisfies ServiceDefinition<typeof proberConfigSchema>;
