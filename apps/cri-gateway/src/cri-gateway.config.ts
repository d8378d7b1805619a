import { env, type ConfigOf } from '@app/config';
import type { FullConfig } from '@app/service';

/** cri-gateway's own environment variables, on top of the shared ones (@app/config sharedSchema). */
export const criGatewayConfigSchema = {
  CONTAINER_RUNTIME_ENDPOINT: env.url(['unix'], {
    default: 'unix:///run/kubelet-split/containerd/containerd.sock',
    describe: 'the CRI socket, like --container-runtime-endpoint',
  }),
  CRI_HTTP_SOCKET: env.optionalString({
    describe: "serve the CRI over HTTP on this unix socket, with the CRI socket's owner and mode (unset: the CRI over HTTP is off)",
  }),
  // Callers send their own deadline with each call (Cri-Timeout-Ms); these serve calls that carry none (curl over HTTP).
  RUNTIME_REQUEST_TIMEOUT: env.duration({ default: 120_000, describe: 'deadline of CRI calls that change the runtime, for calls that send none (callers\' own come first)' }),
  RUNTIME_LIST_TIMEOUT: env.duration({ default: 30_000, describe: 'deadline of CRI reads (list, status, stats, version), for calls that send none' }),
  RUNTIME_CHANGE_CONCURRENCY: env.int({
    default: 4,
    min: 0,
    describe: 'CRI calls that make sandboxes and containers (RunPodSandbox, CreateContainer, StartContainer) sent to the runtime at once, the rest queued, a begun pod\'s next step first (0: no bound)',
  }),
  IMAGE_PULL_TIMEOUT: env.duration({ default: 120_000, describe: 'deadline of PullImage, for calls that send none' }),
};

export type CriGatewayConfig = FullConfig<typeof criGatewayConfigSchema>;
export type CriGatewayOwnConfig = ConfigOf<typeof criGatewayConfigSchema>;
