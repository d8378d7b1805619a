import { env } from '@app/config';
import type { FullConfig } from '@app/service';

/** prober's own environment variables, on top of the shared ones (@app/config sharedSchema). */
export const proberConfigSchema = {
  NODE_IP: env.string({ default: '127.0.0.1', describe: 'the node\'s IP: where probes of hostNetwork pods connect' }),
};

export type ProberConfig = FullConfig<typeof proberConfigSchema>;
