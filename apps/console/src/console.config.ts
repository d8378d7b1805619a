import { env } from '@app/config';
import type { FullConfig } from '@app/service';

/** console's environment variables, on top of the shared ones (@app/config sharedSchema). */
export const consoleConfigSchema = {
  NATS_MONITOR_URL: env.url(['http', 'https'], { default: 'http://127.0.0.1:8222', describe: "nats-server's monitoring endpoint (/connz, /subsz, /jsz): the console's topology graph" }),
  KUBELET_READ_URL: env.url(['http', 'https'], { default: 'http://127.0.0.1:10315', describe: 'the kubelet server\'s read port: the pod pages\' latest log lines (/containerLogs), as the CLI reads them' }),
};

export type ConsoleConfig = FullConfig<typeof consoleConfigSchema>;
