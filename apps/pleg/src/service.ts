import type { ServiceDefinition } from '@app/service';
import { PlegModule } from './pleg.module.js';

const schema = {};

export const definition: ServiceDefinition<typeof schema> = {
  service: 'pleg',
  schema,
  module: PlegModule,
  buckets: ['podCache', 'leases'],
};
