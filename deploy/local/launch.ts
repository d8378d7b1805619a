/**
 * The local launcher: the whole node stack as plain processes on this
 * machine. Starts containerd (deploy/runtime.sh: own root, state and socket;
 * images built and imported), nats-server (deploy/nats/nats-server.conf's settings,
 * with a new password per user on every run) and
 * the services, waits until every /readyz is green, prints who runs
 * where, streams every log line with a service prefix, and on Ctrl-C stops
 * everything it started. A process that dies is restarted with a back-off
 * (restart-backoff.ts): a service, and nats-server too, with its same config
 * and JetStream store; the services reconnect and no pod is stopped because
 * one part of the stack crashed (issue 28 item 12).
 *
 * Its children do not outlive it (docs/adr/0032-launcher-stop.md). A stop,
 * whatever asked for it (Ctrl-C, SIGINT/SIGTERM/SIGHUP/SIGPIPE, its output
 * closed: EPIPE), stops the services, then nats-server, then the containerd
 * it started with every task in the k8s.io namespace, and runs to its end:
 * a second signal only says so. Every child runs in a session of its own, so
 * a signal to the launcher's process group reaches only the launcher, which
 * stops them in that order; and reaper.sh, started first, does the same stop
 * when the launcher dies without doing it (SIGKILL, a crash).
 * By default status-manager, kubelet-server, node-status and console share
 * one process (STATUS_GROUP: the footprint of the status manager they were
 * split from), each still its own module, NATS user and port; --split runs
 * every service in a process of its own.
 * With TARGET=all (or --target all) all of them run as modules of one process
 * (the one-process mode; a list such as TARGET=pleg,prober puts those in one
 * process and the others in their own); pod-worker replicas beyond the
 * first run in processes of their own either way.
 *
 * Where it keeps things follows deploy/runtime.sh's variables, so that a second
 * launcher can run beside the first with a containerd of its own (the e2e
 * tests do): the NATS passwords under $KS_RUNTIME_STATE/nats-credentials
 * (default /run/kubelet-split), the JetStream store under
 * $KS_RUNTIME_ROOT/nats (default /var/lib/kubelet-split); --nats-port and
 * --port-base move the ports (nats-server has no monitoring port: docs/adr/0029).
 *
 *   node dist/deploy/local/launch.js [--manifests DIR] [--pod-workers N] [--no-runtime] [--target all|LIST | --split] [--entry bundle|dist]
 *                                    [--nats-port 4222] [--port-base 10310]
 */
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { closeSync, mkdirSync, openSync, rmSync } from 'node:fs';
import { hostname } from 'node:os';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { DEFAULT_PORTS, SERVICE_NAMES, STATUS_GROUP, parseTarget, type ServiceName } from '@app/service';
import { NODE_NATS_SETTINGS } from '../nats/server-config.js';
import { nextRestartDelay, type RestartState } from './restart-backoff.js';
import { REPO_ROOT, exited, spawnModules, spawnService, startNats, stopProcess, waitHttpOk, type NatsServer, type ServiceProcess } from './stack.js';

const { values: args } = parseArgs({
  options: {
    manifests: { type: 'string', default: join(REPO_ROOT, 'deploy', 'examples') },
    'pod-workers': { type: 'string', default: '2' },
    'no-runtime': { type: 'boolean', default: false },
    'ready-timeout': { type: 'string', default: '60' },
    target: { type: 'string', default: process.env['TARGET'] ?? '' },
    split: { type: 'boolean', default: false },
    entry: { type: 'string', default: process.env['KS_ENTRY'] ?? 'bundle' },
    'nats-port': { type: 'string', default: '4222' },
    'port-base': { type: 'string', default: String(DEFAULT_PORTS['config-source']) },
  },
});
function portArg(name: 'nats-port' | 'port-base'): number {
  const n = Number(args[name]);
  if (!Number.isInteger(n) || n < 1 || n > 65535) {
    process.stderr.write(`--${name} must be a TCP port (1-65535), got "${args[name]}"\n`);
    process.exit(2);
  }
  return n;
}
const natsPort = portArg('nats-port');
/** The services' HTTP ports keep their distances from config-source's (DEFAULT_PORTS); pod-worker replicas beyond the first take base+30+r. */
const portBase = portArg('port-base');
const portShift = portBase - DEFAULT_PORTS['config-source'];
const portOf = (service: ServiceName) => DEFAULT_PORTS[service] + portShift;
if (args.entry !== 'bundle' && args.entry !== 'dist') {
  process.stderr.write(`--entry must be bundle or dist, got "${args.entry}"\n`);
  process.exit(2);
}
// The services start from the bundles (dist/bundle, deploy/bundle.mjs) unless told otherwise: they start faster.
process.env['KS_ENTRY'] = args.entry;

const podWorkers = Number(args['pod-workers']);
if (!Number.isInteger(podWorkers) || podWorkers < 1) {
  process.stderr.write(`--pod-workers must be a positive integer, got "${args['pod-workers']}"\n`);
  process.exit(2);
}
const node = (process.env['NODE_NAME'] ?? hostname()).toLowerCase();
/** The services that run together in one process (TARGET); none: one process per service. */
let together: ServiceName[] = [];
try {
  together = args.target.trim() !== '' ? parseTarget(args.target) : args.split ? [] : [...STATUS_GROUP];
} catch (err) {
  process.stderr.write(`--target / TARGET: ${(err as Error).message}\n`);
  process.exit(2);
}
const runtimeScript = join(REPO_ROOT, 'deploy', 'runtime.sh');
/** deploy/runtime.sh's state directory: containerd's, and the launcher's run-time files beside it. */
const RUNTIME_STATE = process.env['KS_RUNTIME_STATE'] ?? '/run/kubelet-split';
/** The NATS users' passwords and the server's config for this run (mode 0700, files 0600), beside containerd's state. */
const CREDENTIALS_DIR = join(RUNTIME_STATE, 'nats-credentials');
/** The JetStream store (the KV buckets): NODE_NATS_SETTINGS's unless KS_RUNTIME_ROOT moves the node's state. */
const NATS_STORE_DIR = process.env['KS_RUNTIME_ROOT'] ? join(process.env['KS_RUNTIME_ROOT'], 'nats') : NODE_NATS_SETTINGS.storeDir;
const COLORS = [36, 32, 33, 35, 34, 91, 92, 93, 94, 95];
const useColor = process.stdout.isTTY;
/** False once the launcher's output has failed (EPIPE: nobody reads it any more): nothing is written after. */
let outputOpen = true;

function write(text: string): void {
  if (outputOpen) process.stdout.write(text);
}

function prefixed(label: string, color: number) {
  const tag = label.padEnd(18);
  return (line: string) => write(`${useColor ? `\u001b[${color}m${tag}\u001b[0m` : tag} | ${line}\n`);
}
const say = prefixed('launcher', 37);

/** One process the launcher runs and restarts: one service, or several as modules (TARGET). */
interface Slot extends RestartState {
  services: ServiceName[];
  instance: string;
  ports: Partial<Record<ServiceName, number>>;
  env: Partial<Record<ServiceName, Record<string, string>>>;
  color: number;
  current?: ServiceProcess[];
  /** When the current process started (performance.now()): a long run resets the back-off. */
  startedAt: number;
}

function slotName(slot: Slot): string {
  const what = slot.services.length === SERVICE_NAMES.length ? 'all' : slot.services.join(',');
  return slot.instance === '0' ? what : `${what}#${slot.instance}`;
}

let stopping = false;
let nats: NatsServer | undefined;
let natsChild: ChildProcess | undefined;
/** nats-server being started again (superviseNats): a stop waits for it, then stops that one too. */
let natsRestart: Promise<void> | undefined;
let startedRuntime = false;
const slots: Slot[] = [];

/**
 * deploy/runtime.sh, in a session of its own (setsid -w): a Ctrl-C or a group signal meant for the
 * launcher must not cut an image import or a stop of every task in the middle.
 */
function runtime(cmd: 'start' | 'stop' | 'status' | 'address'): string {
  return execFileSync('setsid', ['-w', 'bash', runtimeScript, cmd], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'inherit'] }).trim();
}

/**
 * reaper.sh: started before anything else, in a session of its own, with a pipe from the launcher
 * on its stdin. Told each child (its process group) and whether containerd is the launcher's; at
 * the pipe's end without "done" (the launcher died without stopping the stack) it stops them.
 */
const reaper = ((): ChildProcess => {
  mkdirSync(RUNTIME_STATE, { recursive: true });
  const log = openSync(join(RUNTIME_STATE, 'launcher-reaper.log'), 'a');
  try {
    const child = spawn('bash', [join(REPO_ROOT, 'deploy', 'local', 'reaper.sh'), String(process.pid)], { stdio: ['pipe', log, log], detached: true });
    child.on('error', (err) => say(`reaper.sh: ${err.message}`));
    child.stdin?.on('error', () => undefined);
    child.unref();
    return child;
  } finally {
    closeSync(log);
  }
})();

function tellReaper(line: string): void {
  reaper.stdin?.write(`${line}\n`);
}

/** Tells the reaper about a child that runs in its own process group, until it exits. */
function reaped(kind: 'service' | 'nats', child: ChildProcess): void {
  const pid = child.pid;
  if (pid === undefined) return;
  tellReaper(`${kind} ${pid}`);
  child.once('exit', () => tellReaper(`gone ${pid}`));
}

function launch(slot: Slot): ServiceProcess[] {
  // A stop that began while the launcher was starting: nothing new.
  if (stopping) return [];
  const sink = prefixed(slotName(slot), slot.color);
  const [only] = slot.services;
  const sps =
    slot.services.length === 1 && only && together.length === 0
      ? [spawnService(only, slot.env[only] ?? {}, { port: slot.ports[only] ?? portOf(only), instance: slot.instance, sink, detached: true })]
      : spawnModules(slot.services, (s) => slot.env[s] ?? {}, { ports: slot.ports, instance: slot.instance, sink, detached: true });
  slot.current = sps;
  slot.startedAt = performance.now();
  const child = sps[0]?.process;
  if (child) reaped('service', child);
  child?.once('exit', (code, signal) => {
    if (stopping) return;
    const delay = nextRestartDelay(slot, performance.now() - slot.startedAt);
    say(`${slotName(slot)} exited (code ${code}, signal ${signal}); restarting in ${delay}ms`);
    setTimeout(() => {
      if (!stopping) launch(slot);
    }, delay).unref();
  });
  return sps;
}

/** The one stop of the stack: every later call (a second signal) waits for the same one. */
let stopped: Promise<void> | undefined;

function shutdown(reason: string): Promise<void> {
  if (stopped) {
    say(`${reason}: already stopping; the stop goes on`);
    return stopped;
  }
  stopping = true;
  stopped = stopStack(reason);
  return stopped;
}

async function stopStack(reason: string): Promise<void> {
  say(`${reason}: stopping the services`);
  await Promise.all(slots.flatMap((s) => (s.current?.[0] ? [s.current[0].stop(15_000)] : [])));
  await natsRestart?.catch(() => undefined);
  if (nats || natsChild) {
    say('stopping nats-server');
    await nats?.stop().catch((err: unknown) => say(`stopping nats-server: ${(err as Error).message}`));
    // The last one spawned, should startNats or a restart not have handed it over yet.
    if (natsChild) await stopProcess(natsChild, 5000);
  }
  rmSync(CREDENTIALS_DIR, { recursive: true, force: true });
  if (startedRuntime) {
    say('stopping containerd (and every task in the k8s.io namespace)');
    try {
      runtime('stop');
    } catch (err) {
      say(`runtime.sh stop failed: ${(err as Error).message}`);
    }
  }
  tellReaper('done');
  reaper.stdin?.end();
  say('stopped');
}

/** Stops the stack, then exits with `code`. */
function stopAndExit(reason: string, code: number): void {
  void shutdown(reason).then(() => process.exit(code));
}

/**
 * nats-server, started again each time it exits, after the same back-off as a service, with its
 * same config (ports, users, passwords) and JetStream store: the services reconnect to it, as
 * test/outages.e2e.spec.ts shows for a restarted server, and no pod is stopped for it.
 */
async function superviseNats(server: NatsServer): Promise<void> {
  const backoff: RestartState = { restarts: 0 };
  let since = performance.now();
  for (;;) {
    await exited(server.process);
    if (stopping) return;
    const { exitCode, signalCode } = server.process;
    const delay = nextRestartDelay(backoff, performance.now() - since);
    say(`nats-server exited (code ${exitCode}, signal ${signalCode}); restarting in ${delay}ms with the same config and store (${server.storeDir}); the pods keep running`);
    await new Promise((r) => setTimeout(r, delay));
    if (stopping) return;
    since = performance.now();
    natsRestart = server.restart();
    try {
      await natsRestart;
      say(`nats-server is back (pid ${server.process.pid})`);
    } catch (err) {
      say(`nats-server did not start again: ${(err as Error).message}`);
    } finally {
      natsRestart = undefined;
    }
  }
}

async function main(): Promise<void> {
  for (const sig of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) process.on(sig, () => stopAndExit(sig, 0));
  // Node ignores SIGPIPE unless told otherwise: a SIGPIPE, or an EPIPE on the output (its reader is
  // gone, as when `up.sh | tee log` is killed), stops the stack like a hang-up, not the launcher alone.
  process.on('SIGPIPE', () => stopAndExit('SIGPIPE', 1));
  for (const stream of [process.stdout, process.stderr]) {
    stream.on('error', (err: NodeJS.ErrnoException) => {
      outputOpen = false;
      stopAndExit(err.code === 'EPIPE' ? 'output closed (EPIPE)' : `output failed (${err.message})`, 1);
    });
  }

  let runtimeEndpoint = process.env['CONTAINER_RUNTIME_ENDPOINT'] ?? '';
  if (!args['no-runtime']) {
    let running = false;
    try {
      runtime('status');
      running = true;
    } catch {
      running = false;
    }
    say(running ? 'containerd already running; using it' : 'starting containerd');
    // Ours from here on: a stop (or the reaper) during the start stops it too.
    startedRuntime = !running;
    if (startedRuntime) tellReaper('runtime');
    write(runtime('start') + '\n');
    if (stopping) return;
    runtimeEndpoint = `unix://${runtime('address')}`;
  }

  say('starting nats-server');
  // Passwords are new on every run, in a directory only root reads; the server's settings are
  // deploy/nats/nats-server.conf's (rendered by the same code), with the passwords written in.
  rmSync(CREDENTIALS_DIR, { recursive: true, force: true });
  tellReaper(`credentials ${CREDENTIALS_DIR}`);
  nats = await startNats({
    credentialsDir: CREDENTIALS_DIR,
    storeDir: NATS_STORE_DIR,
    failOnViolations: false,
    port: natsPort,
    // Every user held to this node's subjects and KV keys (libs/nats permissions.ts).
    nodes: [node],
    sink: prefixed('nats-server', 90),
    onSpawn: (child) => {
      natsChild = child;
      reaped('nats', child);
      // Spawned after a stop began (the stop may have looked for it already).
      if (stopping) child.kill('SIGTERM');
    },
    detached: true,
  });

  if (stopping) return;
  const shared: Record<string, string> = { NODE_NAME: node, NATS_URL: nats.url, LOG_LEVEL: process.env['LOG_LEVEL'] ?? 'info' };
  // Joining a cluster: the launcher's KUBECONFIG goes to the services that talk to the apiserver.
  const kubeconfig = process.env['KUBECONFIG'] ? resolve(process.env['KUBECONFIG']) : undefined;
  const joins: readonly ServiceName[] = ['config-source', 'status-manager', 'kubelet-server', 'node-status'];
  if (kubeconfig) say(`joining the cluster of ${kubeconfig} (${joins.join(', ')})`);
  const credentials = nats.credentials;
  const envOf = (service: ServiceName): Record<string, string> => {
    const env: Record<string, string> = { ...shared, ...credentials.env(service) };
    if (service === 'config-source') env['POD_MANIFEST_PATH'] = resolve(args.manifests);
    if (kubeconfig && joins.includes(service)) env['KUBECONFIG'] = kubeconfig;
    if (service === 'cri-gateway' && runtimeEndpoint) env['CONTAINER_RUNTIME_ENDPOINT'] = runtimeEndpoint;
    return env;
  };
  const colorOf = (service: ServiceName) => COLORS[SERVICE_NAMES.indexOf(service) % COLORS.length] ?? 37;
  if (together.length > 0) {
    slots.push({
      services: together,
      instance: '0',
      ports: Object.fromEntries(together.map((s) => [s, portOf(s)])),
      env: Object.fromEntries(together.map((s) => [s, envOf(s)])),
      color: colorOf(together[0] ?? 'config-source'),
      restarts: 0,
      startedAt: 0,
    });
  }
  for (const service of SERVICE_NAMES) {
    const replicas = service === 'pod-worker' ? podWorkers : 1;
    for (let r = together.includes(service) ? 1 : 0; r < replicas; r++) {
      slots.push({ services: [service], instance: String(r), ports: { [service]: r === 0 ? portOf(service) : portBase + 30 + r }, env: { [service]: envOf(service) }, color: colorOf(service), restarts: 0, startedAt: 0 });
    }
  }

  const t0 = performance.now();
  const started = slots.flatMap((slot) => launch(slot).map((sp) => ({ slot, sp })));
  const timeoutMs = Number(args['ready-timeout']) * 1000;
  await Promise.all(
    started.map(async ({ sp }) => {
      await waitHttpOk(sp.readyUrl, timeoutMs);
      sp.readyAfterMs = performance.now() - t0;
    }),
  );

  const rows = [
    ['SERVICE', 'INSTANCE', 'PORT', 'PID', 'READY'],
    ['nats-server', '-', String(nats.port), String(nats.process.pid), '-'],
    ...started.map(({ sp }) => [sp.service, sp.instance, String(sp.port), String(sp.process.pid), `${Math.round(sp.readyAfterMs ?? 0)}ms`]),
  ];
  const widths = rows[0]!.map((_, c) => Math.max(...rows.map((r) => (r[c] ?? '').length)));
  const table = rows.map((r) => r.map((cell, c) => cell.padEnd(widths[c] ?? 0)).join('  ')).join('\n');
  write(`\nkubelet-split is up on node "${node}" (manifests: ${resolve(args.manifests)})\n${table}\n\n`);
  write(`Who talks to whom: npx kubelet-split topology${natsPort === 4222 ? '' : ` --nats nats://127.0.0.1:${natsPort}`} --nats-password-file ${credentials.passwordFile('admin')}   Ctrl-C stops everything.\n`);
  write(`NATS users' passwords (new each run, root only): ${credentials.dir}; tools connect as "admin" with ${credentials.passwordFile('admin')}\n\n`);

  await superviseNats(nats);
}

main().catch(async (err: unknown) => {
  say(`failed: ${(err as Error).message}`);
  await shutdown('failure');
  process.exit(1);
});
