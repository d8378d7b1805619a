import type { ServiceDefinition } from '@app/service';
import { ProberModule } from './prober.module.js';

const schema = {};

export const definition: ServiceDefinition<typeof schema> = {
  service: 'prober',
  schema,
  module: ProberModule,
};
