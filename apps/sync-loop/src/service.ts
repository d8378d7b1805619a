import type { ServiceDefinition } from '@app/service';
import { SyncLoopModule } from './sync-loop.module.js';

const schema = {};

export const definition: ServiceDefinition<typeof schema> = {
  service: 'sync-loop',
  schema,
  module: SyncLoopModule,
  buckets: ['pods', 'leases'],
};
