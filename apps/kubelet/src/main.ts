/**
 * The one-process entry point, as Grafana Loki's `-target`: runs the
 * services TARGET names in this process (`all`, the default; a service
 * name; or a comma-separated list), each as its own module with its own
 * NATS user, connection name, HTTP port and logs (@app/service runTarget,
 * docs/adr/0016-one-process-mode.md).
 *
 * The composition root is the one place that reaches into other apps, and
 * only for their definitions, loaded when TARGET names them.
 */
import { enableCompileCache } from 'node:module';
// First, before any decorated class is defined: in the bundle (deploy/bundle.mjs) chunks may run in another order.
import 'reflect-metadata';
import type { EnvSchema } from '@app/config';
import type { ServiceDefinition, ServiceName } from '@app/service';

enableCompileCache();
const { runTarget } = await import('@app/service');

/** Each service's definition, imported only when TARGET names it. */
const definitions: Record<ServiceName, () => Promise<{ definition: unknown }>> = {
  'config-source': () => import('../../config-source/src/config-source.definition.js'),
  'sync-loop': () => import('../../sync-loop/src/sync-loop.definition.js'),
  'pod-worker': () => import('../../pod-worker/src/pod-worker.definition.js'),
  pleg: () => import('../../pleg/src/pleg.definition.js'),
  prober: () => import('../../prober/src/prober.definition.js'),
  'status-manager': () => import('../../status-manager/src/status-manager.definition.js'),
  'kubelet-server': () => import('../../kubelet-server/src/kubelet-server.definition.js'),
  'node-status': () => import('../../node-status/src/node-status.definition.js'),
  console: () => import('../../console/src/console.definition.js'),
  'cri-gateway': () => import('../../cri-gateway/src/cri-gateway.definition.js'),
};

await runTarget(async (service) => (await definitions[service]()).definition as ServiceDefinition<EnvSchema>);
