export { BucketGrantError, DEFAULT_PORTS, NatsPermissionError, SERVICE_NAMES, bootstrapService, loadServiceConfig, runService, serviceSchema } from './bootstrap.js';
export type { FullConfig, RunningService, ServiceDefinition, ServiceName } from './bootstrap.js';
export { METRICS_REGISTRY, NATS_CONNECTION, SERVICE_CONFIG, SERVICE_CONTEXT, SERVICE_LOGGER, bucketOf } from './context.js';
export type { ServiceContext, ServiceIdentity } from './context.js';
export { CoreModule, HealthController, ServiceInfoController } from './core.module.js';
export { HealthChecks } from './health.js';
export type { Check, CheckResult, HealthReport } from './health.js';
export { KubeletNatsTransport, rpcError, toErrorReply } from './nats-transport.js';
export { readJsonBody } from './http-body.js';
