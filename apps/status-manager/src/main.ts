import { runService } from '@app/service';
import { statusManagerConfigSchema } from './status-manager.config.js';
import { StatusManagerModule } from './status-manager.module.js';

await runService({
  service: 'status-manager',
  schema: statusManagerConfigSchema,
  module: StatusManagerModule,
  buckets: ['podStatus', 'pods', 'leases', 'probeResults', 'podCache', 'workers'],
});
