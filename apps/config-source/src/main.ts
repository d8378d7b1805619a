import { runService } from '@app/service';
import { configSourceConfigSchema } from './config-source.config.js';
import { ConfigSourceModule } from './config-source.module.js';

await runService({
  service: 'config-source',
  schema: configSourceConfigSchema,
  module: ConfigSourceModule,
  // Read only: the creationTimestamps of the pods the sync loop holds.
  buckets: ['pods'],
});
