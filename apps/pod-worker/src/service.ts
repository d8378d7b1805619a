import type { ServiceDefinition } from '@app/service';
import { PodWorkerModule } from './pod-worker.module.js';

const schema = {};

export const definition: ServiceDefinition<typeof schema> = {
  service: 'pod-worker',
  schema,
  module: PodWorkerModule,
  buckets: ['workers', 'leases'],
};
