import { env, type ConfigOf } from '@app/config';
import type { FullConfig } from '@app/service';

/** cri-gateway's own environment variables, on top of the shared ones (@app/config sharedSchema). */
export const criGatewayConfigSchema = {
  CONTAINER_RUNTIME_ENDPOINT: env.url(['unix'], {
    default: 'unix:///run/kubelet-split/containerd/containerd.sock',
    describe: 'the CRI socket, like --container-runtime-endpoint',
  }),
  RUNTIME_REQUEST_TIMEOUT: env.duration({ default: 120_000, describe: 'deadline of CRI calls that change the runtime, like --runtime-request-timeout' }),
  RUNTIME_LIST_TIMEOUT: env.duration({ default: 30_000, describe: 'deadline of CRI reads: list, status, stats, version' }),
  IMAGE_PULL_TIMEOUT: env.duration({ default: 120_000, describe: 'deadline of PullImage, so an unreachable registry fails instead of hanging' }),
};

export type CriGatewayConfig = FullConfig<typeof criGatewayConfigSchema>;
export type CriGatewayOwnConfig = ConfigOf<typeof criGatewayConfigSchema>;
