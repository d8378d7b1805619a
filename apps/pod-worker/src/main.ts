import { runService } from '@app/service';
import { podWorkerConfigSchema } from './pod-worker.config.js';
import { PodWorkerModule } from './pod-worker.module.js';

await runService({
  service: 'pod-worker',
  schema: podWorkerConfigSchema,
  module: PodWorkerModule,
  buckets: ['workers', 'leases', 'pods', 'podCache', 'probeResults', 'podStatus'],
  sharedSettings: ['POD_WORKER_SHARDS'],
});
