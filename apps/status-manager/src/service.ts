import { env } from '@app/config';
import type { FullConfig, ServiceDefinition } from '@app/service';
import { StatusManagerModule } from './status-manager.module.js';

const schema = {
  KUBECONFIG: env.optionalString({ describe: 'kubeconfig of the apiserver, when the node joins a cluster' }),
  EVENTS_PER_POD: env.int({ default: 200, min: 1, max: 10_000, describe: 'how many of each pod\'s latest events GET /pods/<ns>/<name>/events keeps' }),
};

export type StatusManagerConfig = FullConfig<typeof schema>;

export const definition: ServiceDefinition<typeof schema> = {
  service: 'status-manager',
  schema,
  module: StatusManagerModule,
  buckets: ['podStatus', 'pods', 'leases'],
};
