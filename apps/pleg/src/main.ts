import { runService } from '@app/service';
import { plegConfigSchema } from './pleg.config.js';
import { PlegModule } from './pleg.module.js';

await runService({
  service: 'pleg',
  schema: plegConfigSchema,
  module: PlegModule,
  buckets: ['podCache', 'leases'],
});
