/**
 * cri-gateway as a module of the process contract: what main.ts runs alone and
 * what the one-process entry (apps/kubelet) runs beside the others.
 */
import type { ServiceDefinition } from '@app/service';
import { criGatewayConfigSchema } from './cri-gateway.config.js';
import { CriGatewayModule } from './cri-gateway.module.js';

export const definition = {
  service: 'cri-gateway',
  schema: criGatewayConfigSchema,
  module: CriGatewayModule,
} satisfies ServiceDefinition<typeof criGatewayConfigSchema>;
