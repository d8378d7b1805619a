import { env } from '@app/config';
import type { ServiceDefinition } from '@app/service';
import { CriGatewayModule } from './cri-gateway.module.js';

const schema = {
  CONTAINER_RUNTIME_ENDPOINT: env.url(['unix'], {
    default: 'unix:///run/kubelet-split/containerd/containerd.sock',
    describe: 'the CRI socket, like --container-runtime-endpoint',
  }),
};

export const definition: ServiceDefinition<typeof schema> = {
  service: 'cri-gateway',
  schema,
  module: CriGatewayModule,
};
