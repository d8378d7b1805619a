import { cgroupsSchema, env } from '@app/config';
import { DEFAULT_SHARD_COUNT } from '@app/contracts';
import { LEGACY_CONTAINER_LOGS_DIR } from '@app/kube';
import type { FullConfig } from '@app/service';

/** pod-worker's own environment variables, on top of the shared ones (@app/config sharedSchema). */
export const podWorkerConfigSchema = {
  POD_WORKER_SHARDS: env.int({ default: DEFAULT_SHARD_COUNT, min: 1, max: 1024, describe: 'how many pod-worker shards pods are spread over (the same on every service)' }),
  SHARD_LEASE_DURATION: env.duration({ default: 15_000, describe: 'how long a pod-worker shard lease lasts without renewal' }),
  HOUSEKEEPING_PERIOD: env.duration({ default: 2000, describe: 'how often the pod worker re-derives the pods of its shards from KV and the runtime, purges finished records and GCs the restart back-off' }),
  SYNC_FREQUENCY: env.duration({ default: 60_000, describe: 'the resync interval after a successful pod sync, like --sync-frequency' }),
  POD_SYNC_BACKOFF: env.duration({ default: 10_000, describe: 'the retry delay after a failed pod sync' }),
  CRASHLOOP_BACKOFF_INITIAL: env.duration({ default: 10_000, describe: 'the first container restart back-off (KEP-4603)' }),
  CRASHLOOP_BACKOFF_MAX: env.duration({ default: 300_000, describe: 'the longest container restart back-off (KEP-4603)' }),
  POD_LOGS_DIR: env.string({ default: '/var/log/pods', describe: 'the root of the pods\' log directories' }),
  LEGACY_CONTAINER_LOGS_DIR: env.string({ default: LEGACY_CONTAINER_LOGS_DIR, describe: 'where each started container\'s log is linked as <pod>_<namespace>_<container>-<id>.log, for log shippers (the kubelet\'s /var/log/containers)' }),
  POD_ROOT_DIR: env.string({ default: '/var/lib/kubelet-split/pods', describe: 'the root of the pods\' directories (emptyDir volumes)' }),
  ...cgroupsSchema,
  POD_PIDS_LIMIT: env.int({ default: -1, min: -1, describe: 'pids.max of every pod cgroup, like --pod-max-pids (-1: unlimited)' }),
  CPU_CFS_QUOTA: env.string({ default: 'true', pattern: /^(true|false)$/, patternHint: 'true or false', describe: 'enforce CPU limits with a CFS quota, like --cpu-cfs-quota' }),
  CLUSTER_DNS: env.ips({ describe: 'the cluster DNS servers of ClusterFirst pods, comma-separated IPs, like --cluster-dns (clusterDNS); unset: those pods use the node\'s DNS' }),
  CLUSTER_DOMAIN: env.optionalMatch({
    describe: 'the cluster\'s DNS domain (cluster.local), like --cluster-domain (clusterDomain): ClusterFirst pods\' search paths, a pod\'s subdomain FQDN',
    pattern: /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/,
    patternHint: 'a lower-case RFC 1123 subdomain like cluster.local',
  }),
  NODE_IP: env.string({ default: '127.0.0.1', describe: 'the node\'s IP (status.hostIP, hooks of hostNetwork pods)' }),
  RUNTIME_REQUEST_TIMEOUT: env.duration({ default: 120_000, describe: 'deadline of the CRI calls that change the runtime, like --runtime-request-timeout (sent to cri-gateway with each call)' }),
  IMAGE_PULL_TIMEOUT: env.duration({ default: 120_000, describe: 'deadline of PullImage (sent to cri-gateway with each call)' }),
};

export type PodWorkerConfig = FullConfig<typeof podWorkerConfigSchema>;
