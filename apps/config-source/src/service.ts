import { env } from '@app/config';
import type { ServiceDefinition } from '@app/service';
import { ConfigSourceModule } from './config-source.module.js';

const schema = {
  POD_MANIFEST_PATH: env.optionalString({ describe: 'directory of static pod manifests, like --pod-manifest-path' }),
  MANIFEST_URL: env.optionalUrl(['http', 'https'], { describe: 'URL of static pod manifests, like --manifest-url' }),
  KUBECONFIG: env.optionalString({ describe: 'kubeconfig of the apiserver, when the node joins a cluster' }),
};

export const definition: ServiceDefinition<typeof schema> = {
  service: 'config-source',
  schema,
  module: ConfigSourceModule,
};
