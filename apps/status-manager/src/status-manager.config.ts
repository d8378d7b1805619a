import { env } from '@app/config';
import type { FullConfig } from '@app/service';

/**
 * status-manager's own environment variables, on top of the shared ones
 * (@app/config sharedSchema). The Node's, the kubelet server's and the
 * console's are their apps' (node-status, kubelet-server, console).
 */
export const statusManagerConfigSchema = {
  KUBECONFIG: env.optionalString({ describe: 'kubeconfig of the apiserver, when the node joins a cluster' }),
  EVENTS_PER_POD: env.int({ default: 200, min: 1, max: 10_000, describe: 'how many of each pod\'s latest events GET /pods/<ns>/<name>/events keeps' }),
};

export type StatusManagerConfig = FullConfig<typeof statusManagerConfigSchema>;
