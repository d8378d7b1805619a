/**
 * Which modules a process runs, as Grafana Loki's and Mimir's `-target`:
 * `TARGET=all` runs the seven services in one process (the one-process
 * mode, for small nodes), `TARGET=pleg,prober` some of them, and a service's
 * own entry point (dist/apps/<service>/src/main.js) runs that service alone.
 * Each module still connects as its own NATS user with its own connection
 * name and listens on its own HTTP port: the subject contract, permissions,
 * tracing and monitoring do not change (docs/adr/0016-one-process-mode.md).
 *
 * Configuration stays environment variables only. In a process of several
 * modules every module reads the process's environment, and
 * `<SERVICE>__<VARIABLE>` (the service's name upper-cased, `-` as `_`, then
 * two underscores: `POD_WORKER__PORT`, `SYNC_LOOP__SYNC_FREQUENCY`) sets a
 * variable for that module alone; that is how each module gets its own port
 * and NATS password file, and how the two meanings of `SYNC_FREQUENCY` and
 * `HOUSEKEEPING_PERIOD` stay apart.
 */
import { ConfigError, env } from '@app/config';
import { SERVICE_NAMES, type ServiceName } from '@app/contracts';

/** The value of TARGET that names every service. */
export const ALL_TARGET = 'all';

/** TARGET, read by every service (its default: the entry point's own service). */
export function targetSchema(service: ServiceName) {
  return {
    TARGET: env.string({
      default: service,
      describe: `the modules this process runs: "${ALL_TARGET}", a service name or a comma-separated list of them (a service's own entry point runs only itself)`,
      pattern: /^[a-z-]+(,[a-z-]+)*$/,
      patternHint: `"${ALL_TARGET}" or service names separated by ","`,
    }),
  };
}

/** The services TARGET names, in SERVICE_NAMES order; throws ConfigError for an unknown one or an empty list. */
export function parseTarget(raw: string | undefined): ServiceName[] {
  const value = (raw ?? '').trim();
  if (value === '' || value === ALL_TARGET) return [...SERVICE_NAMES];
  const names = value.split(',').map((s) => s.trim());
  const unknown = names.filter((n) => !(SERVICE_NAMES as readonly string[]).includes(n));
  if (unknown.length > 0) {
    throw new ConfigError([`TARGET names ${unknown.map((u) => `"${u}"`).join(', ')}: expected "${ALL_TARGET}" or some of ${SERVICE_NAMES.join(', ')}, separated by ","`]);
  }
  return SERVICE_NAMES.filter((s) => names.includes(s));
}

/** `POD_WORKER__` for pod-worker: the prefix of the variables meant for that module alone. */
export function moduleEnvPrefix(service: ServiceName): string {
  return `${service.toUpperCase().replace(/-/g, '_')}__`;
}

/**
 * The environment one module of a process reads: the process's, with every
 * `<SERVICE>__<VARIABLE>` of this module applied as `<VARIABLE>`. In a
 * process of several modules a plain `PORT` is refused (seven servers
 * cannot share one port: each module takes its default port or its
 * `<SERVICE>__PORT`).
 */
export function moduleEnv(service: ServiceName, source: NodeJS.ProcessEnv, modules: number): NodeJS.ProcessEnv {
  if (modules > 1 && source['PORT'] !== undefined && source['PORT'].trim() !== '') {
    throw new ConfigError([`PORT is one port, and this process runs ${modules} modules: unset it (each module takes its own default port) or set ${moduleEnvPrefix(service)}PORT and the others' <SERVICE>__PORT`]);
  }
  const prefix = moduleEnvPrefix(service);
  const out: NodeJS.ProcessEnv = { ...source };
  for (const [name, value] of Object.entries(source)) {
    if (name.startsWith(prefix) && name.length > prefix.length) out[name.slice(prefix.length)] = value;
  }
  return out;
}
