import { env } from '@app/config';
import type { ServiceDefinition } from '@app/service';
import { StatusManagerModule } from './status-manager.module.js';

const schema = {
  KUBECONFIG: env.optionalString({ describe: 'kubeconfig of the apiserver, when the node joins a cluster' }),
};

export const definition: ServiceDefinition<typeof schema> = {
  service: 'status-manager',
  schema,
  module: StatusManagerModule,
  buckets: ['podStatus', 'leases'],
};
