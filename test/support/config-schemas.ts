/** Each service's own variables (its `<app>.config.ts`), by service name; serviceSchema adds the shared ones. */
import type { EnvSchema } from '@app/config';
import type { ServiceName } from '@app/service';
import { configSourceConfigSchema } from '../../apps/config-source/src/config-source.config.js';
import { syncLoopConfigSchema } from '../../apps/sync-loop/src/sync-loop.config.js';
import { podWorkerConfigSchema } from '../../apps/pod-worker/src/pod-worker.config.js';
import { plegConfigSchema } from '../../apps/pleg/src/pleg.config.js';
import { proberConfigSchema } from '../../apps/prober/src/prober.config.js';
import { statusManagerConfigSchema } from '../../apps/status-manager/src/status-manager.config.js';
import { kubeletServerConfigSchema } from '../../apps/kubelet-server/src/kubelet-server.config.js';
import { nodeStatusConfigSchema } from '../../apps/node-status/src/node-status.config.js';
import { consoleConfigSchema } from '../../apps/console/src/console.config.js';
import { criGatewayConfigSchema } from '../../apps/cri-gateway/src/cri-gateway.config.js';

export const SERVICE_CONFIG_SCHEMAS: Readonly<Record<ServiceName, EnvSchema>> = {
  'config-source': configSourceConfigSchema,
  'sync-loop': syncLoopConfigSchema,
  'pod-worker': podWorkerConfigSchema,
  pleg: plegConfigSchema,
  prober: proberConfigSchema,
  'status-manager': statusManagerConfigSchema,
  'kubelet-server': kubeletServerConfigSchema,
  'node-status': nodeStatusConfigSchema,
  console: consoleConfigSchema,
  'cri-gateway': criGatewayConfigSchema,
};
