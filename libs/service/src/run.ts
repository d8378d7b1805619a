/**
 * The whole life of a service process, one module or several (targets.ts):
 * config or exit 1, boot, signals, never dying of an unhandled rejection.
 *
 * What a process of several modules shares, and how each stays itself:
 * - the process-level handlers (signals, unhandledRejection,
 *   uncaughtException) are installed once, here, and act on every module:
 *   SIGTERM drains every module, cri-gateway last (the others' in-flight
 *   work may still need the runtime), and the process exits 0 only when all
 *   drained;
 * - each module parses its own environment (moduleEnv), logs with its own
 *   service name, keeps its own NATS connection, metrics registry, HTTP
 *   port and Nest application (bootstrapService);
 * - each module boots in a trace-recorder scope of its own, so its hops are
 *   recorded under its own instance name (@app/nats withTraceRecorderScope),
 *   and Nest's process-wide logger writes through the module whose work is
 *   running (NestModuleLogger).
 * A module that cannot boot fails the process (exit 1): a process that runs
 * only some of what it was asked would look healthy to a supervisor that
 * checks only one port.
 */
import type { LoggerService } from '@nestjs/common';
import { ConfigError, type EnvSchema } from '@app/config';
import { NatsAuthError, SharedSettingMismatchError } from '@app/nats';
import { withTraceRecorderScope } from '@app/tracing';
import { NestPinoLogger, createLogger, type Logger } from '@app/observability';
import type { ServiceName } from '@app/contracts';
import { BucketGrantError, NatsPermissionError, bootstrapService, loadServiceConfig, type FullConfig, type RunningService, type ServiceDefinition } from './bootstrap.js';
import { withNestLogger } from './nest-logger.js';
import { ALL_TARGET, moduleEnv, parseTarget } from './targets.js';

/** Errors whose message says all there is: printed as `<service>: <message>` on stderr, exit 1. */
function isPlainRefusal(err: unknown): err is Error {
  return (
    err instanceof ConfigError ||
    err instanceof SharedSettingMismatchError ||
    err instanceof NatsAuthError ||
    err instanceof NatsPermissionError ||
    err instanceof BucketGrantError
  );
}

interface Module {
  def: ServiceDefinition<EnvSchema>;
  config: FullConfig<EnvSchema>;
  logger: Logger;
  running?: RunningService;
}

/**
 * A service's own entry point (apps/<service>/src/main.ts): runs that
 * service alone. A TARGET naming anything else is refused: TARGET=all runs
 * in dist/apps/kubelet/src/main.js.
 */
export async function runService<S extends EnvSchema>(def: ServiceDefinition<S>): Promise<void> {
  const target = process.env['TARGET']?.trim();
  if (target && target !== def.service) {
    process.stderr.write(
      `${def.service}: TARGET=${target}, but this is ${def.service}'s own entry point, which runs ${def.service} alone: ` +
        `run dist/apps/kubelet/src/main.js for TARGET=${target}, or unset TARGET\n`,
    );
    process.exit(1);
  }
  await runServices([def as unknown as ServiceDefinition<EnvSchema>]);
}

/**
 * The one-process entry point (apps/kubelet/src/main.ts): runs the services
 * TARGET names (default all), loading only their code.
 */
export async function runTarget(load: (service: ServiceName) => Promise<ServiceDefinition<EnvSchema>>, source: NodeJS.ProcessEnv = process.env): Promise<void> {
  let services: ServiceName[];
  try {
    services = parseTarget(source['TARGET']);
  } catch (err) {
    process.stderr.write(`kubelet: ${(err as Error).message}\n`);
    process.exit(1);
  }
  await runServices(await Promise.all(services.map(load)), source);
}

/** Runs the given modules in this process until a signal; see the file's comment. */
export async function runServices(defs: readonly ServiceDefinition<EnvSchema>[], source: NodeJS.ProcessEnv = process.env): Promise<void> {
  const several = defs.length > 1;
  // One instance id for every module of the process, unless set: `<service>@<node>#<instance>` then tells them apart by service.
  const shared = several && !source['INSTANCE_ID']?.trim() ? { ...source, INSTANCE_ID: Math.random().toString(16).slice(2, 8) } : source;
  const modules: Module[] = [];
  const problems: string[] = [];
  for (const def of defs) {
    try {
      const config = loadServiceConfig(def, moduleEnv(def.service, shared, defs.length));
      const logger = createLogger({ service: def.service, node: config.NODE_NAME, instance: config.INSTANCE_ID }, config.LOG_LEVEL);
      modules.push({ def, config, logger });
    } catch (err) {
      if (!(err instanceof ConfigError)) throw err;
      problems.push(`${def.service}: ${err.message}`);
    }
  }
  if (problems.length > 0) {
    process.stderr.write(`${[...new Set(problems)].join('\n')}\n`);
    process.exit(1);
  }
  const first = modules[0];
  if (!first) throw new Error('runServices: no module to run');
  const target = several ? (defs.length === 7 ? ALL_TARGET : defs.map((d) => d.service).join(',')) : first.def.service;
  // What is about the process rather than one module is logged with the target as the service.
  const processLogger = several
    ? createLogger({ service: target, node: first.config.NODE_NAME, instance: first.config.INSTANCE_ID }, first.config.LOG_LEVEL)
    : first.logger;
  process.on('unhandledRejection', (reason) => processLogger.error({ err: reason }, 'unhandled promise rejection (kept running)'));
  process.on('uncaughtException', (err) => {
    processLogger.fatal({ err }, 'uncaught exception');
    process.exit(1);
  });

  let booted = false;
  let signalled = false;
  // booted turns true once every module is up; a signal before that exits at once, as a lone service's does.
  /** Drains every module that is running, cri-gateway after the others; resolves whether all drained. */
  const shutdownAll = async (reason: string): Promise<boolean> => {
    const drain = async (ms: Module[]) =>
      (
        await Promise.all(
          ms.map((m) =>
            (m.running?.shutdown(reason) ?? Promise.resolve()).then(
              () => true,
              (err: unknown) => (m.logger.error({ err }, 'shutdown failed'), false),
            ),
          ),
        )
      ).every(Boolean);
    const first = await drain(modules.filter((m) => m.def.service !== 'cri-gateway'));
    const last = await drain(modules.filter((m) => m.def.service === 'cri-gateway'));
    return first && last;
  };
  const graceMs = Math.max(...modules.map((m) => m.config.SHUTDOWN_GRACE_PERIOD));
  const onSignal = (signal: NodeJS.Signals): void => {
    if (signalled) return;
    signalled = true;
    const timer = setTimeout(() => {
      processLogger.error({ graceMs }, 'grace period over, exiting anyway');
      process.exit(1);
    }, graceMs);
    timer.unref();
    if (!booted) process.exit(0); // still booting: nothing taken yet to hand back
    void shutdownAll(signal).then((clean) => process.exit(clean ? 0 : 1));
  };
  process.on('SIGTERM', onSignal);
  process.on('SIGINT', onSignal);

  const boot = (m: Module): Promise<RunningService> => bootstrapService(m.def, m.config, m.logger);
  const results = await Promise.allSettled(
    modules.map(async (m) => {
      m.running = several ? await withTraceRecorderScope(() => withNestLogger(nestLoggerOf(m.logger), () => boot(m))) : await boot(m);
    }),
  );
  booted = true;
  const failed = results.flatMap((r, i) => (r.status === 'rejected' ? [{ m: modules[i], err: r.reason as unknown }] : []));
  if (failed.length > 0) {
    for (const { m, err } of failed) {
      const service = m?.def.service ?? target;
      if (isPlainRefusal(err)) process.stderr.write(`${service}: ${err.message}\n`);
      else (m?.logger ?? processLogger).fatal({ err }, 'could not start');
    }
    if (several) await shutdownAll('another module could not start').catch(() => undefined);
    process.exit(1);
  }
  if (several) processLogger.info({ modules: modules.map((m) => `${m.def.service}:${m.config.PORT}`) }, 'every module ready');
}

function nestLoggerOf(logger: Logger): LoggerService {
  return new NestPinoLogger(logger.child({ component: 'nest' }));
}
