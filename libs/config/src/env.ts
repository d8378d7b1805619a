/**
 * Environment parsing: every service reads its configuration from environment
 * variables only, once, at boot, into a typed and frozen object. A bad or
 * missing value is reported with the variable's name and why, all problems at
 * once, and the service exits 1 (see `loadConfigOrExit`).
 */
import { readFileSync } from 'node:fs';
import { isIP } from 'node:net';
import { hostname } from 'node:os';
import { CONTRACT_VERSION } from '@app/contracts';

/** What one variable parses into, or why it could not. */
export type FieldResult<T> = { ok: true; value: T } | { ok: false; reason: string };

/** How to read one variable. `raw` is undefined when the variable is unset or empty. */
export interface EnvField<T> {
  readonly describe: string;
  parse(raw: string | undefined): FieldResult<T>;
}

export type EnvSchema = Record<string, EnvField<unknown>>;
export type ConfigOf<S extends EnvSchema> = { readonly [K in keyof S]: S[K] extends EnvField<infer T> ? T : never };

/** Raised with every problem found in one environment. */
export class ConfigError extends Error {
  constructor(readonly problems: readonly string[]) {
    super(`invalid configuration:\n${problems.map((p) => `  - ${p}`).join('\n')}`);
    this.name = 'ConfigError';
  }
}

const ok = <T>(value: T): FieldResult<T> => ({ ok: true, value });
const bad = <T>(reason: string): FieldResult<T> => ({ ok: false, reason });

function withDefault<T>(raw: string | undefined, fallback: T | undefined, parse: (s: string) => FieldResult<T>): FieldResult<T> {
  if (raw === undefined) {
    return fallback === undefined ? bad('is required but not set') : ok(fallback);
  }
  return parse(raw);
}

/**
 * A secret from the file a `*_FILE` variable names (a password, a token),
 * trimmed; undefined when the variable is unset. An unreadable or empty file
 * is a ConfigError naming the variable.
 */
export function readSecretFile(variable: string, file: string | undefined): string | undefined {
  if (file === undefined) return undefined;
  let secret: string;
  try {
    secret = readFileSync(file, 'utf8').trim();
  } catch (err) {
    throw new ConfigError([`${variable} cannot be read: ${(err as Error).message}`]);
  }
  if (secret === '') throw new ConfigError([`${variable} ${file} is empty`]);
  return secret;
}

export interface FieldOptions<T> {
  /** Used when the variable is unset or empty; without it the variable is required. */
  readonly default?: T;
  readonly describe: string;
}

/** Parsers for the shapes of value our variables take. */
export const env = {
  string(opts: FieldOptions<string> & { pattern?: RegExp; patternHint?: string }): EnvField<string> {
    return {
      describe: opts.describe,
      parse: (raw) =>
        withDefault(raw, opts.default, (s) =>
          opts.pattern && !opts.pattern.test(s) ? bad(`must be ${opts.patternHint ?? `a match of ${String(opts.pattern)}`}, got "${s}"`) : ok(s),
        ),
    };
  },

  optionalString(opts: { describe: string }): EnvField<string | undefined> {
    return { describe: opts.describe, parse: (raw) => ok(raw) };
  },

  port(opts: FieldOptions<number>): EnvField<number> {
    return {
      describe: opts.describe,
      parse: (raw) =>
        withDefault(raw, opts.default, (s) => {
          const n = Number(s);
          return /^\d+$/.test(s) && n >= 1 && n <= 65535 ? ok(n) : bad(`must be a TCP port between 1 and 65535, got "${s}"`);
        }),
    };
  },

  int(opts: FieldOptions<number> & { min?: number; max?: number }): EnvField<number> {
    return {
      describe: opts.describe,
      parse: (raw) =>
        withDefault(raw, opts.default, (s) => {
          if (!/^-?\d+$/.test(s)) return bad(`must be an integer, got "${s}"`);
          const n = Number(s);
          if (opts.min !== undefined && n < opts.min) return bad(`must be at least ${opts.min}, got ${n}`);
          if (opts.max !== undefined && n > opts.max) return bad(`must be at most ${opts.max}, got ${n}`);
          return ok(n);
        }),
    };
  },

  oneOf<const V extends string>(values: readonly V[], opts: FieldOptions<V>): EnvField<V> {
    return {
      describe: opts.describe,
      parse: (raw) =>
        withDefault(raw, opts.default, (s) =>
          (values as readonly string[]).includes(s) ? ok(s as V) : bad(`must be one of ${values.join(', ')}, got "${s}"`),
        ),
    };
  },

  /** A Go-style duration ("1s", "500ms", "2m", "1h30m"), parsed to milliseconds. */
  duration(opts: FieldOptions<number>): EnvField<number> {
    return {
      describe: opts.describe,
      parse: (raw) =>
        withDefault(raw, opts.default, (s) => {
          const ms = parseDuration(s);
          return ms === undefined ? bad(`must be a duration like 500ms, 10s, 2m or 1h30m, got "${s}"`) : ok(ms);
        }),
    };
  },

  /** Comma-separated URLs with one of the given schemes. */
  urls(schemes: readonly string[], opts: FieldOptions<readonly string[]>): EnvField<readonly string[]> {
    return {
      describe: opts.describe,
      parse: (raw) =>
        withDefault(raw, opts.default, (s) => {
          const list = s.split(',').map((u) => u.trim()).filter((u) => u.length > 0);
          if (list.length === 0) return bad('must name at least one URL');
          for (const u of list) {
            const problem = checkUrl(u, schemes);
            if (problem) return bad(problem);
          }
          return ok(list);
        }),
    };
  },

  /** Comma-separated URLs with one of the given schemes, or unset (undefined: the feature is off). */
  optionalUrls(schemes: readonly string[], opts: { describe: string }): EnvField<readonly string[] | undefined> {
    const list = env.urls(schemes, { describe: opts.describe });
    return { describe: opts.describe, parse: (raw) => (raw === undefined || raw.trim() === '' ? ok(undefined) : list.parse(raw)) };
  },

  /** Comma-separated IPv4 or IPv6 addresses; unset: none (an empty list). */
  ips(opts: { describe: string }): EnvField<readonly string[]> {
    return {
      describe: opts.describe,
      parse: (raw) => {
        const list = (raw ?? '').split(',').map((ip) => ip.trim()).filter((ip) => ip.length > 0);
        const wrong = list.find((ip) => isIP(ip) === 0);
        return wrong === undefined ? ok(list) : bad(`must be comma-separated IP addresses, got "${wrong}"`);
      },
    };
  },

  /** A string that must match `pattern` when set; unset: undefined. */
  optionalMatch(opts: { describe: string; pattern: RegExp; patternHint: string }): EnvField<string | undefined> {
    return { describe: opts.describe, parse: (raw) => (raw === undefined || opts.pattern.test(raw) ? ok(raw) : bad(`must be ${opts.patternHint}, got "${raw}"`)) };
  },

  url(schemes: readonly string[], opts: FieldOptions<string>): EnvField<string> {
    return {
      describe: opts.describe,
      parse: (raw) => withDefault(raw, opts.default, (s) => {
        const problem = checkUrl(s, schemes);
        return problem ? bad(problem) : ok(s);
      }),
    };
  },

  optionalUrl(schemes: readonly string[], opts: { describe: string }): EnvField<string | undefined> {
    return {
      describe: opts.describe,
      parse: (raw) => {
        if (raw === undefined) return ok(undefined);
        const problem = checkUrl(raw, schemes);
        return problem ? bad(problem) : ok(raw);
      },
    };
  },
} as const;

function checkUrl(u: string, schemes: readonly string[]): string | undefined {
  let parsed: URL;
  try {
    parsed = new URL(u);
  } catch {
    return `must be a URL (${schemes.map((s) => `${s}://...`).join(' or ')}), got "${u}"`;
  }
  const scheme = parsed.protocol.replace(/:$/, '');
  return schemes.includes(scheme) ? undefined : `must use the scheme ${schemes.join(' or ')}, got "${scheme}" in "${u}"`;
}

const DURATION_UNITS: Record<string, number> = { ms: 1, s: 1000, m: 60_000, h: 3_600_000 };

/** Parses "1h2m3s500ms"-style durations to milliseconds; undefined when malformed. "0" is zero. */
export function parseDuration(s: string): number | undefined {
  if (s === '0') return 0;
  const re = /(\d+(?:\.\d+)?)(ms|s|m|h)/gy;
  let total = 0;
  let matched = 0;
  for (let m = re.exec(s); m !== null; m = re.exec(s)) {
    total += Number(m[1]) * (DURATION_UNITS[m[2] ?? ''] ?? Number.NaN);
    matched = re.lastIndex;
  }
  return matched === s.length && matched > 0 && Number.isFinite(total) ? Math.round(total) : undefined;
}

/** Parses `source` against `schema`; throws ConfigError naming every bad variable. */
export function parseEnv<S extends EnvSchema>(schema: S, source: NodeJS.ProcessEnv): ConfigOf<S> {
  const out: Record<string, unknown> = {};
  const problems: string[] = [];
  for (const [name, field] of Object.entries(schema)) {
    const value = source[name];
    const raw = value === undefined || value.trim() === '' ? undefined : value.trim();
    const result = field.parse(raw);
    if (result.ok) out[name] = result.value;
    else problems.push(`${name} ${result.reason} (${field.describe})`);
  }
  if (problems.length > 0) throw new ConfigError(problems);
  return Object.freeze(out) as ConfigOf<S>;
}

export const LOG_LEVELS = ['debug', 'info', 'warn', 'error'] as const;
export type LogLevel = (typeof LOG_LEVELS)[number];

/** RFC 1123 subdomain, as Kubernetes requires of a node name (dots are encoded in subjects, see @app/contracts nodeToken). */
const NODE_NAME_PATTERN = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;

/**
 * The variables every service understands (DESIGN.md, "process contract").
 * `PORT` has a per-service default so each service can be started by hand;
 * `NATS_USER` defaults to the service's name, its NATS user.
 */
export function sharedSchema(defaultPort: number, service = 'admin') {
  return {
    NODE_NAME: env.string({
      default: hostname().toLowerCase(),
      describe: 'the node this stack serves',
      pattern: NODE_NAME_PATTERN,
      patternHint: 'a lower-case RFC 1123 subdomain, as a Kubernetes node name',
    }),
    NATS_URL: env.urls(['nats', 'tls', 'ws', 'wss'], {
      default: ['nats://127.0.0.1:4222'],
      describe: 'NATS server(s), comma-separated',
    }),
    NATS_USER: env.string({ default: service, describe: "the NATS user to connect as (the service's own, see libs/nats/src/permissions.ts)" }),
    NATS_PASSWORD_FILE: env.optionalString({
      describe: "a file holding NATS_USER's password (unset: connect without credentials, which a server with users refuses)",
    }),
    PORT: env.port({ default: defaultPort, describe: "the service's HTTP port" }),
    HOST: env.string({ default: '127.0.0.1', describe: 'the HTTP bind address' }),
    HTTP_TOKEN_FILE: env.optionalString({
      describe: 'a file holding a bearer token that every HTTP route but /healthz, /readyz and /metrics requires (needed to serve them off loopback)',
    }),
    LOG_LEVEL: env.oneOf(LOG_LEVELS, { default: 'info', describe: 'log level' }),
    INSTANCE_ID: env.string({
      default: Math.random().toString(16).slice(2, 8),
      describe: 'this replica, for the NATS connection name <service>@<node>#<instance>',
      pattern: /^[A-Za-z0-9_-]+$/,
      patternHint: 'letters, digits, "-" or "_"',
    }),
    SHUTDOWN_GRACE_PERIOD: env.duration({ default: 10_000, describe: 'how long SIGTERM may take before the process exits anyway' }),
    TRACING: env.oneOf(['on', 'off'], { default: 'on', describe: 'record each hop of a pod\'s flow in the KUBELET_TRACES stream (kubelet-split trace POD)' }),
    TRACE_MAX_AGE: env.duration({ default: 24 * 3600_000, describe: 'how long KUBELET_TRACES keeps a record' }),
    TRACE_MAX_BYTES: env.int({ default: 64 * 1024 * 1024, min: 1024, describe: 'the most bytes KUBELET_TRACES keeps (the oldest records go first)' }),
    CONTRACT_VERSION: env.int({
      default: CONTRACT_VERSION,
      min: 1,
      max: 999_999,
      describe: "the contract version the service claims (in /info and every message's Kubelet-Contract header); default this build's: set only to test the skew policy (docs/adr/0034)",
    }),
  };
}
export type SharedConfig = ConfigOf<ReturnType<typeof sharedSchema>>;
