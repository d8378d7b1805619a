/**
 * The process contract of every service (DESIGN.md): configuration from the
 * environment, validated once (bad config: a clear message, exit 1); one
 * named NATS connection; a hybrid Nest app (our NATS transport + HTTP on
 * PORT with /healthz, /readyz, /metrics); structured logs; on SIGTERM it
 * stops taking work, drains, and exits within SHUTDOWN_GRACE_PERIOD.
 */
import 'reflect-metadata';
import { Module, type DynamicModule, type Type } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import type { INestApplication } from '@nestjs/common';
import { SystemClock } from '@app/clock';
import { SERVICE_NAMES, STATUS_GROUP, contractClaim, formatContractRange, type ServiceName } from '@app/contracts';
import { ConfigError, parseEnv, readSecretFile, sharedSchema, type ConfigOf, type EnvSchema, type SharedConfig } from '@app/config';
import { BUCKETS, NatsBus, agreeOnSetting, connectNats, connectionName, describeViolation, ensureBuckets, grantedBuckets, inboxPrefix, installKvWatchMetrics, natsUserOf, type BucketId, type KV, type NatsConnection, type NatsCredentials, type PermissionViolation } from '@app/nats';
import { JetStreamTraceRecorder, ensureTraceStream, installContractWitness, installTraceRecorder } from '@app/tracing';
import { KvLeaderLeaseStore, LeaderElector, leaderElectionProblem } from '@app/leader-election';
import { Counter, Gauge, NestPinoLogger, createMetricsRegistry, type Logger } from '@app/observability';
import { leaderElectionOf, leaderElectionSchema, watchLeadership } from './leadership.js';
import { CoreModule } from './core.module.js';
import { HealthChecks } from './health.js';
import { httpAccess, isLoopbackHost, readHttpToken } from './http-access.js';
import { NodeHttpAdapter } from './http-adapter.js';
import { KubeletNatsTransport } from './nats-transport.js';
import { NestModuleLogger } from './nest-logger.js';
import { PeerContracts } from './peer-contracts.js';
import { targetSchema } from './targets.js';
import { projectVersion } from './version.js';
import type { ServiceContext } from './context.js';

export { SERVICE_NAMES, STATUS_GROUP, type ServiceName };

/** Each service's HTTP port when PORT is unset (replicas on one host set PORT). */
export const DEFAULT_PORTS: Readonly<Record<ServiceName, number>> = {
  'config-source': 10310,
  'sync-loop': 10311,
  'pod-worker': 10312,
  pleg: 10313,
  prober: 10314,
  // The kubelet's read port (upstream's --read-only-port): /pods, /containerLogs, /stats/summary, as it always was.
  'kubelet-server': 10315,
  'cri-gateway': 10316,
  'status-manager': 10317,
  'node-status': 10318,
  console: 10319,
};

/**
 * The services of which one instance acts at a time: a second instance is a
 * standby that takes over when the leader dies (leadership.ts).
 */
export const SINGLE_ACTIVE_SERVICES: readonly ServiceName[] = ['sync-loop', 'pleg', 'status-manager', 'node-status'];

export interface ServiceDefinition<S extends EnvSchema> {
  service: ServiceName;
  /** The service's own variables, on top of the shared ones. */
  schema: S;
  /** The app's root module; its providers inject the ServiceContext pieces from CoreModule. */
  module: Type<unknown> | DynamicModule;
  /** KV buckets the service reads or writes; created if absent. */
  buckets?: readonly BucketId[];
  /** Request/reply subjects are shared by replicas in this queue group (default: the service name). */
  queue?: string;
  /**
   * Variables every service of the node must agree on: the first service to
   * start records its value in the `leases` bucket, a service with another
   * value refuses to start (see @app/nats agreeOnSetting).
   */
  sharedSettings?: readonly (keyof ConfigOf<S> & string)[];
}

export type FullConfig<S extends EnvSchema> = SharedConfig & ConfigOf<S>;

/** The full schema of a service: shared variables, the leader election's for single-active services, and its own. */
export function serviceSchema<S extends EnvSchema>(def: Pick<ServiceDefinition<S>, 'service' | 'schema'>) {
  return { ...sharedSchema(DEFAULT_PORTS[def.service], def.service), ...targetSchema(def.service), ...(SINGLE_ACTIVE_SERVICES.includes(def.service) ? leaderElectionSchema : {}), ...def.schema };
}

/** Parses the environment for a service; throws ConfigError. */
export function loadServiceConfig<S extends EnvSchema>(
  def: Pick<ServiceDefinition<S>, 'service' | 'schema'>,
  source: NodeJS.ProcessEnv = process.env,
): FullConfig<S> {
  const config = parseEnv(serviceSchema(def), source);
  const election = SINGLE_ACTIVE_SERVICES.includes(def.service) ? leaderElectionProblem(leaderElectionOf(config)) : undefined;
  if (election) throw new ConfigError([`LEADER_LEASE_DURATION, LEADER_RENEW_DEADLINE and LEADER_RETRY_PERIOD do not fit: ${election}`]);
  return config;
}

/** The server refused subjects this service needs: which, as the server said, and what failed for it. */
export class NatsPermissionError extends Error {
  constructor(
    readonly violations: readonly PermissionViolation[],
    cause: unknown,
  ) {
    super(
      `the NATS server refused what this service needs: ${[...new Set(violations.map(describeViolation))].join('; ')}` +
        (cause instanceof Error ? ` (then: ${cause.message})` : ''),
      { cause },
    );
    this.name = 'NatsPermissionError';
  }
}

/** main.ts declares a bucket that the permission table does not let the service open. */
export class BucketGrantError extends Error {
  constructor(service: ServiceName, buckets: readonly string[]) {
    super(
      `${service} declares the bucket(s) ${buckets.join(', ')} in main.ts, but its NATS user may not open them: ` +
        `add them to its writes or reads in libs/nats/src/permissions.ts NATS_ACCESS`,
    );
    this.name = 'BucketGrantError';
  }
}

function checkBucketGrants(def: Pick<ServiceDefinition<EnvSchema>, 'service' | 'buckets'>): void {
  const granted = grantedBuckets(def.service);
  const missing = (def.buckets ?? []).map((id) => BUCKETS[id].name).filter((b) => !granted.includes(b));
  if (missing.length > 0) throw new BucketGrantError(def.service, missing);
}

/**
 * Once this returns, the server has seen everything sent so far and any
 * refusal of it has reached the connection's status stream (the -ERR comes
 * before the flush's PONG, but its status event is delivered on a later tick).
 */
async function settled(connection: NatsConnection): Promise<void> {
  await connection.flush().catch(() => undefined);
  await new Promise((r) => setImmediate(r));
}

/** NATS_USER and the password in NATS_PASSWORD_FILE; undefined without a file. */
function readNatsCredentials(config: SharedConfig): NatsCredentials | undefined {
  const password = readSecretFile('NATS_PASSWORD_FILE', config.NATS_PASSWORD_FILE);
  return password === undefined ? undefined : { user: config.NATS_USER, password };
}

export interface RunningService {
  ctx: ServiceContext;
  app: INestApplication;
  shutdown(reason: string): Promise<void>;
}

/** Boots a service; `main.ts` calls `runService` (run.ts), which adds the process-level handling. */
export async function bootstrapService<S extends EnvSchema>(def: ServiceDefinition<S>, config: FullConfig<S>, logger: Logger): Promise<RunningService> {
  const startedAt = new Date();
  const node = config.NODE_NAME;
  const name = connectionName(def.service, node, config.INSTANCE_ID);
  const health = new HealthChecks();
  const metrics = createMetricsRegistry({ service: def.service, node });
  // Before the connection: whatever this service sends carries its contract version, whatever it hears is judged (ADR 0034).
  const claim = contractClaim(config.CONTRACT_VERSION);
  const peers = new PeerContracts({ claim, clock: new SystemClock(), logger: logger.child({ component: 'contract-skew' }), self: name });
  installContractWitness(peers);
  health.addReadiness('contractVersions', () => peers.check());
  new Gauge({
    name: 'kubelet_contract_peers_outside_policy',
    help: 'Peers heard in the last 5 minutes whose contract version is outside the skew policy (docs/adr/0034-version-skew-policy.md); the service speaks contract_version',
    labelNames: ['contract_version'],
    registers: [metrics],
    collect() {
      this.set({ contract_version: String(claim.version) }, peers.peersOutsidePolicy().length);
    },
  });
  if (claim.version !== contractClaim().version) logger.warn({ contractVersion: claim.version, buildContractVersion: contractClaim().version, accepts: formatContractRange(claim.accepts) }, 'CONTRACT_VERSION overrides the contract version this build speaks');
  installKvWatchMetrics(metrics);

  const singleActive = SINGLE_ACTIVE_SERVICES.includes(def.service);
  checkBucketGrants(def);
  const httpToken = readHttpToken(config.HTTP_TOKEN_FILE);
  const access = httpAccess(config.HOST, httpToken);
  if (httpToken === undefined && !isLoopbackHost(config.HOST)) logger.warn({ host: config.HOST }, access.summary);
  const violations: PermissionViolation[] = [];
  const credentials = readNatsCredentials(config);
  if (!credentials) logger.warn('NATS_PASSWORD_FILE is not set: connecting to NATS without credentials');
  const connection = await connectNats({
    servers: config.NATS_URL,
    name,
    logger,
    ...(credentials ? { credentials } : {}),
    // `pod-worker`, or `pod-worker@<node>` on a NATS shared by nodes: each user reads only its own inbox.
    inboxPrefix: inboxPrefix(natsUserOf(config.NATS_USER) !== undefined ? config.NATS_USER : def.service),
    onPermissionViolation: (v) => void violations.push(v),
  });
  health.addReadiness('nats', () => (connection.isClosed() ? { ok: false, detail: 'connection closed' } : { ok: true, detail: connection.getServer() }));
  // Sticky: a service that was refused a subject once is missing messages or replies until it is fixed.
  health.addReadiness('natsPermissions', () =>
    violations.length === 0 ? { ok: true } : { ok: false, detail: [...new Set(violations.map(describeViolation))].join('; ') },
  );
  /** Boot fails with what the server refused, when it refused something: that is why it failed. */
  const failBoot = async (err: unknown): Promise<never> => {
    await settled(connection); // -ERRs sent before our last command have arrived
    await connection.close().catch(() => undefined);
    throw violations.length > 0 ? new NatsPermissionError(violations, err) : err;
  };

  // A single-active service elects its leader in the leases bucket, declared or not.
  const bucketIds = singleActive && !def.buckets?.includes('leases') ? [...(def.buckets ?? []), 'leases' as const] : (def.buckets ?? []);
  let buckets: Partial<Record<BucketId, KV>> = {};
  let traces: JetStreamTraceRecorder | undefined;
  try {
    buckets = bucketIds.length > 0 ? await ensureBuckets(connection, bucketIds) : {};
    for (const setting of def.sharedSettings ?? []) {
      const leases = buckets.leases;
      if (!leases) throw new Error(`${def.service} shares ${setting}, so it needs the leases bucket`);
      await agreeOnSetting(leases, node, setting, String(config[setting]), name, new Date());
    }
    if (config.TRACING === 'on') traces = await startTracing(connection, config, def.service, name, metrics);
  } catch (err) {
    return failBoot(err);
  }

  // Single-active services campaign for the leader lease once they are up; until they lead they are standbys.
  const leadership =
    singleActive && buckets.leases
      ? new LeaderElector(new KvLeaderLeaseStore(buckets.leases, node, def.service), new SystemClock(), logger.child({ component: 'leader-election' }), {
          identity: config.INSTANCE_ID,
          ...leaderElectionOf(config),
        })
      : undefined;
  if (leadership) watchLeadership(leadership, def.service, health, metrics);

  const extraSubjects: string[] = [];
  const transport = new KubeletNatsTransport({ connection, node, service: def.service, logger, queue: def.queue ?? def.service, sender: name });
  const ctx: ServiceContext<FullConfig<S>> = {
    identity: { service: def.service, node, instance: config.INSTANCE_ID, connectionName: name, startedAt, version: projectVersion() },
    config,
    logger,
    metrics,
    connection,
    bus: new NatsBus(connection, def.service),
    buckets,
    health,
    subjects: () => [...transport.subjects, ...extraSubjects],
    contract: () => peers.info(),
    addSubjects: (subjects) => void extraSubjects.push(...subjects),
    ...(leadership ? { leadership } : {}),
  };

  @Module({ imports: [CoreModule.forRoot(ctx), def.module] })
  class RootModule {}

  // Nest's HTTP platform on node:http (http-adapter.ts): no express in the process (docs/adr/0018).
  const app = await NestFactory.create(RootModule, new NodeHttpAdapter(), {
    // Nest's logger is process-wide: in a process of several modules, each module's work logs through its own (run.ts).
    logger: new NestModuleLogger(new NestPinoLogger(logger.child({ component: 'nest' }))),
    forceCloseConnections: true,
    bodyParser: false, // bodies are read with readJsonBody, for one error format

    abortOnError: false,
  });
  app.use(access.middleware);
  app.connectMicroservice({ strategy: transport }, { inheritAppConfig: true });

  let subscriptionsBound = false;
  health.addReadiness('subscriptions', () =>
    subscriptionsBound ? { ok: true, detail: `${ctx.subjects().length} subjects` } : { ok: false, detail: 'not bound yet' },
  );
  try {
    await app.startAllMicroservices();
    await settled(connection); // the server has our SUBs (and has refused any it refuses)
    if (violations.length > 0) throw new Error('the NATS server refused a subscription or publish at start');
  } catch (err) {
    await app.close().catch(() => undefined);
    return failBoot(err);
  }
  subscriptionsBound = true;
  await app.listen(config.PORT, config.HOST);
  leadership?.start();
  logger.info(
    { version: ctx.identity.version, port: config.PORT, host: config.HOST, http: access.summary, subjects: ctx.subjects(), startupMs: Date.now() - startedAt.getTime() },
    'service ready',
  );

  let stopping: Promise<void> | undefined;
  const shutdown = (reason: string): Promise<void> => {
    stopping ??= (async () => {
      logger.info({ reason }, 'shutting down: no new work');
      health.markDraining();
      await leadership?.stop(); // stop acting, then hand the lease over: a standby leads at once
      await app.close(); // unsubscribes (transport.close) and closes HTTP
      traces?.flush();
      await connection.drain(); // in-flight messages are handled, then the connection closes
      logger.info('shut down cleanly');
    })();
    return stopping;
  };
  return { ctx: ctx, app, shutdown };
}

/** How many trace records wait at most for their batch (a record beyond is dropped and counted). */
const TRACE_BUFFER = 10_000;
/** How long a trace record waits at most for its batch. */
const TRACE_FLUSH_MS = 50;

/** TRACING=on: the KUBELET_TRACES stream exists with the configured limits, and this process records its hops there. */
async function startTracing(connection: NatsConnection, config: SharedConfig, service: ServiceName, instance: string, metrics: ReturnType<typeof createMetricsRegistry>): Promise<JetStreamTraceRecorder> {
  await ensureTraceStream(connection, { maxAgeMs: config.TRACE_MAX_AGE, maxBytes: config.TRACE_MAX_BYTES });
  const dropped = new Counter({ name: 'kubelet_trace_records_dropped_total', help: 'Trace records dropped because the buffer was full or the connection was closed', registers: [metrics] });
  const recorder = new JetStreamTraceRecorder(connection, { node: config.NODE_NAME, service, instance, maxBuffered: TRACE_BUFFER, flushMs: TRACE_FLUSH_MS, onDrop: () => dropped.inc() });
  installTraceRecorder(recorder);
  return recorder;
}
