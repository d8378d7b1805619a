import { runService } from '@app/service';
import { definition } from './service.js';

await runService(definition);
