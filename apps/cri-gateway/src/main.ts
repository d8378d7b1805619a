import { runService } from '@app/service';
import { criGatewayConfigSchema } from './cri-gateway.config.js';
import { CriGatewayModule } from './cri-gateway.module.js';

await runService({
  service: 'cri-gateway',
  schema: criGatewayConfigSchema,
  module: CriGatewayModule,
});
