import { runService } from '@app/service';
import { proberConfigSchema } from './prober.config.js';
import { ProberModule } from './prober.module.js';

await runService({
  service: 'prober',
  schema: proberConfigSchema,
  module: ProberModule,
  buckets: ['probeResults', 'pods', 'podStatus'],
});
