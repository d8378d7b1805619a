import { env } from '@app/config';
import type { FullConfig } from '@app/service';
import { nodeStatusConfigSchema } from './node/node.config.js';
import { statsConfigSchema } from './stats/stats.config.js';
import { kubeletServerConfigSchema } from './kubelet-server/kubelet-server.config.js';

/** status-manager's own environment variables, on top of the shared ones (@app/config sharedSchema). */
export const statusManagerConfigSchema = {
  KUBECONFIG: env.optionalString({ describe: 'kubeconfig of the apiserver, when the node joins a cluster' }),
  // The Node, its Lease (node/node.config.ts).
  ...nodeStatusConfigSchema,
  // /stats/summary (stats/stats.config.ts).
  ...statsConfigSchema,
  // The kubelet API server, HTTPS (kubelet-server/kubelet-server.config.ts).
  ...kubeletServerConfigSchema,
  NATS_MONITOR_URL: env.url(['http', 'https'], { default: 'http://127.0.0.1:8222', describe: "nats-server's monitoring endpoint (/connz, /subsz, /jsz): the console's topology graph" }),
  EVENTS_PER_POD: env.int({ default: 200, min: 1, max: 10_000, describe: 'how many of each pod\'s latest events GET /pods/<ns>/<name>/events keeps' }),
};

export type StatusManagerConfig = FullConfig<typeof statusManagerConfigSchema>;
