import { env } from '@app/config';
import type { FullConfig } from '@app/service';

/** console's environment variables, on top of the shared ones (@app/config sharedSchema). */
export const consoleConfigSchema = {
  KUBELET_READ_URL: env.url(['http', 'https'], { default: 'http://127.0.0.1:10315', describe: 'the kubelet server\'s read port: the pod pages\' latest log lines (/containerLogs), as the CLI reads them' }),
};

export type ConsoleConfig = FullConfig<typeof consoleConfigSchema>;
