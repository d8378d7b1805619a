import { env, nodeResourcesSchema } from '@app/config';
import type { FullConfig } from '@app/service';

/**
 * node-status's environment variables, on top of the shared ones: the
 * apiserver, the Node and its Lease. The node's resources are the shared
 * nodeResourcesSchema, the same settings sync-loop's admission reads.
 * KUBELET_SERVER_PORT is the kubelet server's: the Node advertises it
 * (daemonEndpoints.kubeletEndpoint).
 */
export const nodeStatusConfigSchema = {
  KUBECONFIG: env.optionalString({ describe: 'kubeconfig of the apiserver, when the node joins a cluster (else there is no Node to keep; the OOM watcher still runs)' }),
  KUBELET_SERVER_PORT: env.int({ default: 10250, min: 0, max: 65535, describe: 'the kubelet API server\'s HTTPS port, as kubelet-server has it: the port the Node advertises' }),
  ...nodeResourcesSchema,
  NODE_IP: env.string({ default: '127.0.0.1', describe: 'the node\'s IP: the Node\'s InternalIP (the same value as pod-worker\'s status.hostIP)' }),
  POD_ROOT_DIR: env.string({ default: '/var/lib/kubelet-split/pods', describe: 'the pods\' directories (as pod-worker\'s): their filesystem is the node filesystem (ephemeral-storage capacity, the nodefs eviction signals)' }),
  NODE_STATUS_UPDATE_FREQUENCY: env.duration({ default: 10_000, describe: 'how often the Node\'s status is computed, like --node-status-update-frequency (patched only when it changed, or after NODE_STATUS_REPORT_FREQUENCY)' }),
  NODE_STATUS_REPORT_FREQUENCY: env.duration({ default: 300_000, describe: 'an unchanged Node status is patched again after this long (nodeStatusReportFrequency)' }),
  NODE_LEASE_DURATION: env.duration({ default: 40_000, describe: 'the node Lease\'s leaseDurationSeconds (nodeLeaseDurationSeconds); renewed every quarter of it' }),
};

export type NodeStatusConfig = FullConfig<typeof nodeStatusConfigSchema>;
