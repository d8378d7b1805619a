import { env } from '@app/config';

/** The stats routes' environment variables, spread into kubelet-server's. */
export const statsConfigSchema = {
  POD_LOGS_DIR: env.string({ default: '/var/log/pods', describe: 'the root of the pods\' log directories (as pod-worker\'s): each container\'s `logs` figure in /stats/summary, and a finished pod\'s logs for /containerLogs' }),
  VOLUME_STATS_AGG_PERIOD: env.duration({ default: 60_000, describe: 'how long a pod\'s volume figures in /stats/summary are kept before its volumes are walked again, like --volume-stats-agg-period' }),
};
