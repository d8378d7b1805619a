import { runService } from '@app/service';
import { syncLoopConfigSchema } from './sync-loop.config.js';
import { SyncLoopModule } from './sync-loop.module.js';

await runService({
  service: 'sync-loop',
  schema: syncLoopConfigSchema,
  module: SyncLoopModule,
  buckets: ['pods', 'workers', 'podStatus', 'leases', 'podCache'],
  sharedSettings: ['POD_WORKER_SHARDS'],
});
