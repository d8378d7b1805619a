import { env } from '@app/config';
import type { FullConfig, ServiceDefinition } from '@app/service';
import { ProberModule } from './prober.module.js';

const schema = {
  NODE_IP: env.string({ default: '127.0.0.1', describe: 'the node\'s IP: where probes of hostNetwork pods connect' }),
};

export type ProberConfig = FullConfig<typeof schema>;

export const definition: ServiceDefinition<typeof schema> = {
  service: 'prober',
  schema,
  module: ProberModule,
};
