import { env } from '@app/config';
import type { FullConfig } from '@app/service';

/** console's environment variables, on top of the shared ones (@app/config sharedSchema). */
export const consoleConfigSchema = {
  FLEET_NATS_URL: env.optionalUrls(['nats', 'tls', 'ws', 'wss'], {
    describe: "the fleet's hub (its nats-servers' client URLs, comma-separated): the fleet page (/console/fleet) reads every node from there as the fleet reader; unset: no fleet page",
  }),
  FLEET_NATS_PASSWORD_FILE: env.optionalString({ describe: "a file holding the fleet reader's password on the hub (user `fleet`); needed with FLEET_NATS_URL" }),
  KUBELET_READ_URL: env.url(['http', 'https'], { default: 'http://127.0.0.1:10315', describe: 'the kubelet server\'s read port: the pod pages\' latest log lines (/containerLogs), as the CLI reads them' }),
};

export type ConsoleConfig = FullConfig<typeof consoleConfigSchema>;
