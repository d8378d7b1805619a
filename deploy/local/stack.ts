/**
 * Starting the stack's processes on a dev machine or in tests: a real
 * nats-server and the services as separate node processes. Used by the local
 * launcher (launch.ts) and by the integration and end-to-end tests.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { connect } from '@nats-io/transport-node';
import { NATS_ADMIN_USER } from '@app/nats';
import { ALL_TARGET, SERVICE_NAMES, moduleEnvPrefix, type ServiceName } from '@app/service';
import { writeNatsCredentials, type NatsCredentials, type NatsServerSettings } from '../nats/server-config.js';

/** The repository root (this file is dist/deploy/local/stack.js or deploy/local/stack.ts). */
export const REPO_ROOT = resolve(dirname(fileURLToPath(import.meta.url)), fileURLToPath(import.meta.url).includes('/dist/') ? '../../..' : '../..');

/**
 * Which build the processes run: tsc's output under dist/apps (the default), or with KS_ENTRY=bundle the
 * bundles deploy/bundle.mjs makes under dist/bundle, which start faster (the launcher's default).
 */
function entryOf(app: ServiceName | 'kubelet'): string {
  return process.env['KS_ENTRY'] === 'bundle' ? join(REPO_ROOT, 'dist', 'bundle', `${app}.mjs`) : join(REPO_ROOT, 'dist', 'apps', app, 'src', 'main.js');
}

/**
 * Node's flags for a service process: source maps for tsc's output (a bundle's maps would cost about 25 MB of
 * memory and 50 ms of start; its stack traces still name the functions).
 */
function nodeArgs(): string[] {
  return process.env['KS_ENTRY'] === 'bundle' ? [] : ['--enable-source-maps'];
}

/**
 * Every service process keeps V8's young generation small (1 MB semi-spaces; the default grows to 16 MB each
 * under load): a node agent would rather spend a few more scavenges than some 25-30 MB per process
 * (docs/adr/0016-one-process-mode.md; the split mode's seven processes likewise, docs/adr/0018-idle-footprint.md).
 */
export const MODULES_NODE_ARGS: readonly string[] = ['--max-semi-space-size=1'];

/**
 * The environment every service process gets (compose's entrypoint sets the same): glibc's malloc keeps at most
 * two arenas. Its default is one per thread that allocates (up to 8 per core), each reserving 64 MB and keeping
 * what a burst left in it; a Node process allocates from its V8 and libuv worker threads too
 * (docs/adr/0018-idle-footprint.md). A variable already set wins.
 */
export const SERVICE_PROCESS_ENV: Readonly<Record<string, string>> = { MALLOC_ARENA_MAX: '2' };

export function serviceEntry(service: ServiceName): string {
  return entryOf(service);
}

/** The one-process entry point: runs the services TARGET names (docs/adr/0016-one-process-mode.md). */
export function oneProcessEntry(): string {
  return entryOf('kubelet');
}

/** A free TCP port on loopback (the kernel's choice). */
export async function freePort(): Promise<number> {
  return new Promise((res, rej) => {
    const srv = createServer();
    srv.once('error', rej);
    srv.listen(0, '127.0.0.1', () => {
      const addr = srv.address();
      const port = typeof addr === 'object' && addr ? addr.port : 0;
      srv.close(() => res(port));
    });
  });
}

/** `n` distinct free TCP ports on loopback, each held until all are chosen (one freePort after another may repeat one). */
export async function freePorts(n: number): Promise<number[]> {
  const servers = await Promise.all(
    Array.from({ length: n }, () => new Promise<ReturnType<typeof createServer>>((res, rej) => {
      const srv = createServer();
      srv.once('error', rej);
      srv.listen(0, '127.0.0.1', () => res(srv));
    })),
  );
  const ports = servers.map((srv) => {
    const addr = srv.address();
    return typeof addr === 'object' && addr ? addr.port : 0;
  });
  await Promise.all(servers.map((srv) => new Promise((res) => srv.close(res))));
  return ports;
}

/** Whether nothing listens on `port` on loopback. */
export async function portFree(port: number): Promise<boolean> {
  return new Promise((res) => {
    const srv = createServer();
    srv.once('error', () => res(false));
    srv.listen(port, '127.0.0.1', () => srv.close(() => res(true)));
  });
}

export type LineSink = (line: string) => void;

/** Sends each line a child prints to `sink`. */
export function pipeLines(child: ChildProcess, sink: LineSink): void {
  for (const stream of [child.stdout, child.stderr]) {
    if (!stream) continue;
    createInterface({ input: stream }).on('line', sink);
  }
}

/** Waits until `url` answers 200, or throws after `timeoutMs`. */
export async function waitHttpOk(url: string, timeoutMs: number, alive?: () => boolean): Promise<void> {
  await waitReady(url, timeoutMs, alive, async () => {
    const res = await fetch(url, { signal: AbortSignal.timeout(1000) });
    return res.status === 200 ? undefined : `HTTP ${res.status}: ${await res.text()}`;
  });
}

/** Polls `probe` (undefined: ready; else why not) every 50 ms until it is ready, the process dies or `timeoutMs` passes. */
async function waitReady(what: string, timeoutMs: number, alive: (() => boolean) | undefined, probe: () => Promise<string | undefined>): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  let last = 'no answer';
  while (Date.now() < deadline) {
    if (alive && !alive()) throw new Error(`${what}: the process exited before it was ready`);
    try {
      const notYet = await probe();
      if (notYet === undefined) return;
      last = notYet;
    } catch (err) {
      last = (err as Error).message;
    }
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(`${what} not ready after ${timeoutMs}ms (last: ${last})`);
}

/** Resolves when the child has exited (immediately if it already has). */
export function exited(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((res) => child.once('exit', () => res()));
}

/**
 * Runs a service that is expected to refuse to start, until it exits
 * (SIGKILLed after `timeoutMs`, so a hang fails the caller's check): its exit
 * code and what it wrote to stderr.
 */
export async function runServiceToExit(service: ServiceName, env: Record<string, string>, timeoutMs = 30_000): Promise<{ code: number | null; stderr: string }> {
  const child = spawn(process.execPath, [serviceEntry(service)], { env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  let stderr = '';
  child.stdout?.resume();
  child.stderr?.on('data', (d: Buffer) => (stderr += d.toString()));
  const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
  await exited(child);
  clearTimeout(timer);
  return { code: child.exitCode, stderr };
}

/** SIGTERM, then SIGKILL after `graceMs`; resolves once the process is gone. */
export async function stopProcess(child: ChildProcess, graceMs: number): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  child.kill('SIGTERM');
  const timer = setTimeout(() => child.kill('SIGKILL'), graceMs);
  await exited(child);
  clearTimeout(timer);
}

export interface NatsServer {
  url: string;
  port: number;
  /** The running nats-server (another one after restart()). */
  readonly process: ChildProcess;
  storeDir: string;
  /** The users' passwords and the server's config (permissions.ts), in a directory only its owner can read. */
  credentials: NatsCredentials;
  /** nats.js connect options for a user (default admin: tests and tools); a user name of the server's (credentials.userOf) too. */
  auth(user?: string): { user: string; pass: string };
  /** The permission violations the server logged ("Publish Violation - User "x", Subject "y""). */
  readonly violations: string[];
  /** Stops the server; throws when it logged a permission violation, unless started with `failOnViolations: false`. */
  stop(): Promise<void>;
  /**
   * An outage: stops the server (SIGTERM, or SIGKILL with `kill`), waits
   * `downMs`, and starts it again with the same config: the same ports,
   * store directory and users; resolves once it answers again. `process` is
   * then the new one.
   */
  restart(opts?: { kill?: boolean; downMs?: number }): Promise<void>;
}

/**
 * The nats-server to run: `$KS_NATS_SERVER`, else the one deploy/nats/build.sh
 * built into its cache (`$KS_NATS_CACHE/bin/nats-server`, default under
 * /var/cache/kubelet-split/nats: 2.11 or later, with message tracing), else
 * `nats-server` on PATH (Debian's 2.9.10: everything but `trace --nats-trace`).
 */
export function natsServerBinary(env: NodeJS.ProcessEnv = process.env): string {
  if (env['KS_NATS_SERVER']) return env['KS_NATS_SERVER'];
  const built = join(env['KS_NATS_CACHE'] ?? '/var/cache/kubelet-split/nats', 'bin', 'nats-server');
  return existsSync(built) ? built : 'nats-server';
}

/** Servers started here, by URL: a service spawned against one connects as its own user (spawnService). */
const started = new Map<string, NatsServer>();

/**
 * Until the server at `url` takes `user`'s connection and answers a
 * JetStream API request (`$JS.API.INFO`): what its monitoring's
 * `/healthz?js-enabled-only=true` said, which it no longer serves (no
 * monitoring port, docs/adr/0029).
 */
export async function waitNatsReady(url: string, auth: { user: string; pass: string }, timeoutMs: number, alive?: () => boolean): Promise<void> {
  await waitReady(url, timeoutMs, alive, async () => {
    const nc = await connect({ servers: url, ...auth, reconnect: false, timeout: 1000 });
    try {
      const info = JSON.parse((await nc.request('$JS.API.INFO', '', { timeout: 1000 })).string()) as { error?: { description?: string } };
      return info.error ? (info.error.description ?? 'JetStream error') : undefined;
    } finally {
      await nc.close();
    }
  });
}

/**
 * Starts a real nats-server with JetStream on loopback (no monitoring
 * port), with authorization on: its config and one password per user
 * (@app/nats permissions.ts, held to `nodes` when given) are written to
 * `credentialsDir` (default: a fresh temporary directory, mode 0700,
 * removed by stop()). The port defaults to a free one and the store to a
 * fresh temporary directory.
 */
export async function startNats(
  opts: {
    port?: number;
    /** The nodes whose services connect: each user held to its node's subjects and keys (absent: every node's). */
    nodes?: readonly string[];
    storeDir?: string;
    credentialsDir?: string;
    sink?: LineSink;
    onSpawn?: (child: ChildProcess) => void;
    detached?: boolean;
    failOnViolations?: boolean;
    /** The nats-server to run (default natsServerBinary()). */
    binary?: string;
    /** A fleet node's: its JetStream domain and its leaf link to the hub (deploy/nats/server-config.ts NatsServerSettings). */
    domain?: string;
    leaf?: NatsServerSettings['leaf'];
    /** The server's name (default `kubelet-split`). */
    serverName?: string;
  } = {},
): Promise<NatsServer> {
  if (opts.port !== undefined && !(await portFree(opts.port))) throw new Error(`port ${opts.port} is in use: is another nats-server running?`);
  const ownStore = opts.storeDir === undefined;
  const storeDir = opts.storeDir ?? mkdtempSync(join(tmpdir(), 'ks-nats-'));
  const ownCredentials = opts.credentialsDir === undefined;
  const credentialsDir = opts.credentialsDir ?? mkdtempSync(join(tmpdir(), 'ks-nats-auth-'));
  const violations: string[] = [];
  /** The server's last lines, for the error when it exits before it is ready. */
  const lastLines: string[] = [];
  let port = 0;
  let credentials!: NatsCredentials;
  /** The config on `port` (written again when a port chosen here was taken before the server bound it). */
  const configure = async (): Promise<void> => {
    const [p] = await freePorts(1);
    port = opts.port ?? p ?? 0;
    credentials = writeNatsCredentials(credentialsDir, {
      serverName: opts.serverName ?? 'kubelet-split',
      listen: `127.0.0.1:${port}`,
      storeDir,
      ...(opts.nodes ? { nodes: opts.nodes } : {}),
      ...(opts.domain ? { domain: opts.domain } : {}),
      ...(opts.leaf ? { leaf: opts.leaf } : {}),
    });
  };
  /** One nats-server process on the config, ready once its JetStream is. */
  const spawnServer = async (): Promise<ChildProcess> => {
    lastLines.length = 0;
    const child = spawn(opts.binary ?? natsServerBinary(), ['-c', credentials.configFile], { stdio: ['ignore', 'pipe', 'pipe'], detached: opts.detached === true });
    opts.onSpawn?.(child);
    const spawnError = new Promise<never>((_, rej) => child.once('error', (e) => rej(new Error(`cannot start nats-server: ${e.message} (run deploy/install.sh)`))));
    pipeLines(child, (line) => {
      if (/ (Publish|Subscription) Violation /.test(line)) violations.push(line.replace(/^.*?\[ERR\] /, ''));
      lastLines.push(line);
      if (lastLines.length > 5) lastLines.shift();
      opts.sink?.(line);
    });
    try {
      await Promise.race([waitNatsReady(`nats://127.0.0.1:${port}`, credentials.auth(NATS_ADMIN_USER), 15_000, () => child.exitCode === null), spawnError]);
    } catch (err) {
      // Not ready in time but still running: it goes, or nobody would ever stop it.
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
      await exited(child).catch(() => undefined);
      throw new Error(`${(err as Error).message}${lastLines.length > 0 ? `; nats-server said: ${lastLines.join(' | ')}` : ''}`);
    }
    return child;
  };
  await configure();
  let child: ChildProcess;
  // Ports chosen here may be taken by another process before nats-server binds them: then new ones, twice more.
  for (let attempt = 1; ; attempt++) {
    try {
      child = await spawnServer();
      break;
    } catch (err) {
      const chosen = opts.port === undefined;
      if (!chosen || attempt >= 3 || !/exited before it was ready/.test((err as Error).message)) throw err;
      opts.sink?.(`nats-server exited before it was ready (${(err as Error).message}); trying new ports`);
      await configure();
    }
  }
  const url = `nats://127.0.0.1:${port}`;
  const server: NatsServer = {
    url,
    port,
    get process() {
      return child;
    },
    storeDir,
    credentials,
    auth: (user = NATS_ADMIN_USER) => credentials.auth(user),
    violations,
    async stop() {
      started.delete(url);
      await stopProcess(child, 5000);
      if (ownStore) rmSync(storeDir, { recursive: true, force: true });
      if (ownCredentials) rmSync(credentials.dir, { recursive: true, force: true });
      if (opts.failOnViolations !== false && violations.length > 0) {
        throw new Error(`nats-server refused ${violations.length} publish(es)/subscription(s) (libs/nats/src/permissions.ts):\n  ${violations.join('\n  ')}`);
      }
    },
    async restart(r = {}) {
      if (r.kill) {
        child.kill('SIGKILL');
        await exited(child);
      } else await stopProcess(child, 5000);
      await new Promise((res) => setTimeout(res, r.downMs ?? 0));
      child = await spawnServer();
    },
  };
  started.set(url, server);
  return server;
}

export interface ServiceProcess {
  service: ServiceName;
  instance: string;
  port: number;
  process: ChildProcess;
  readyUrl: string;
  /** ms from spawn to /readyz 200, once ready. */
  readyAfterMs?: number;
  stop(graceMs?: number): Promise<void>;
}

/**
 * Spawns one service (from dist/) with `env` on top of the current
 * environment. Against a nats-server started by startNats, it connects as
 * its own user (NATS_USER, NATS_PASSWORD_FILE) unless `env` says otherwise.
 */
export function spawnService(
  service: ServiceName,
  env: Record<string, string>,
  opts: { sink?: LineSink; port: number; instance: string; detached?: boolean },
): ServiceProcess {
  const nats = env['NATS_URL'] === undefined ? undefined : started.get(env['NATS_URL']);
  if (nats && env['NATS_PASSWORD_FILE'] === undefined) env = { ...nats.credentials.env(service), ...env };
  // detached: a process group of its own, so a Ctrl-C in the launcher's terminal reaches only the
  // launcher, which then stops the services before the nats-server they drain into.
  const child = spawn(process.execPath, [...nodeArgs(), ...MODULES_NODE_ARGS, serviceEntry(service)], {
    // TARGET is the one-process entry's (spawnModules): a service's own entry refuses any other than its name.
    env: { ...SERVICE_PROCESS_ENV, ...process.env, TARGET: undefined, ...env, PORT: String(opts.port), INSTANCE_ID: opts.instance },
    stdio: ['ignore', 'pipe', 'pipe'],
    detached: opts.detached === true,
  });
  if (opts.sink) pipeLines(child, opts.sink);
  else {
    child.stdout?.resume();
    child.stderr?.resume();
  }
  return {
    service,
    instance: opts.instance,
    port: opts.port,
    process: child,
    readyUrl: `http://127.0.0.1:${opts.port}/readyz`,
    stop: (graceMs = 15_000) => stopProcess(child, graceMs),
  };
}

/** Spawns a service and waits for its /readyz; records how long that took. */
export async function startService(
  service: ServiceName,
  env: Record<string, string>,
  opts: { sink?: LineSink; port: number; instance: string; timeoutMs?: number },
): Promise<ServiceProcess> {
  const t0 = performance.now();
  const sp = spawnService(service, env, opts);
  try {
    await waitHttpOk(sp.readyUrl, opts.timeoutMs ?? 30_000, () => sp.process.exitCode === null);
  } catch (err) {
    // Not ready in time: stopped, not left running with no one to stop it.
    await sp.stop(2000);
    throw err;
  }
  sp.readyAfterMs = performance.now() - t0;
  return sp;
}

/**
 * Spawns one process running several services as modules (TARGET, the
 * one-process mode): each service's `envOf(service)`, its port and its NATS
 * user (as spawnService gives them) reach that module alone, as
 * `<SERVICE>__<VARIABLE>`. One ServiceProcess per module, all on the same
 * child: stopping one stops the process.
 */
export function spawnModules(
  services: readonly ServiceName[],
  envOf: (service: ServiceName) => Record<string, string>,
  opts: { sink?: LineSink; ports: Partial<Record<ServiceName, number>>; instance: string; detached?: boolean },
): ServiceProcess[] {
  const target = SERVICE_NAMES.every((s) => services.includes(s)) ? ALL_TARGET : services.join(',');
  const { PORT: _port, ...inherited } = process.env;
  const env: Record<string, string | undefined> = { ...SERVICE_PROCESS_ENV, ...inherited, TARGET: target, INSTANCE_ID: opts.instance };
  const ports = new Map<ServiceName, number>();
  for (const service of services) {
    let own = envOf(service);
    const nats = own['NATS_URL'] === undefined ? undefined : started.get(own['NATS_URL']);
    if (nats && own['NATS_PASSWORD_FILE'] === undefined) own = { ...nats.credentials.env(service), ...own };
    const port = opts.ports[service];
    if (port === undefined) throw new Error(`spawnModules: no port for ${service}`);
    ports.set(service, port);
    for (const [k, v] of Object.entries({ ...own, PORT: String(port) })) env[`${moduleEnvPrefix(service)}${k}`] = v;
  }
  const child = spawn(process.execPath, [...nodeArgs(), ...MODULES_NODE_ARGS, oneProcessEntry()], { env, stdio: ['ignore', 'pipe', 'pipe'], detached: opts.detached === true });
  if (opts.sink) pipeLines(child, opts.sink);
  else {
    child.stdout?.resume();
    child.stderr?.resume();
  }
  return services.map((service) => ({
    service,
    instance: opts.instance,
    port: ports.get(service) ?? 0,
    process: child,
    readyUrl: `http://127.0.0.1:${ports.get(service) ?? 0}/readyz`,
    stop: (graceMs = 15_000) => stopProcess(child, graceMs),
  }));
}

/** Spawns one process of several modules (spawnModules) and waits for every module's /readyz. */
export async function startModules(
  services: readonly ServiceName[],
  envOf: (service: ServiceName) => Record<string, string>,
  opts: { sink?: LineSink; ports: Partial<Record<ServiceName, number>>; instance: string; timeoutMs?: number },
): Promise<ServiceProcess[]> {
  const t0 = performance.now();
  const modules = spawnModules(services, envOf, opts);
  const child = modules[0]?.process;
  try {
    await Promise.all(
      modules.map(async (m) => {
        await waitHttpOk(m.readyUrl, opts.timeoutMs ?? 30_000, () => child?.exitCode === null);
        m.readyAfterMs = performance.now() - t0;
      }),
    );
  } catch (err) {
    if (child) await stopProcess(child, 5000);
    throw err;
  }
  return modules;
}
