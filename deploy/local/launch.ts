/**
 * The local launcher: the whole node stack as plain processes on this
 * machine. Starts containerd (deploy/runtime.sh: own root, state and socket;
 * images built and imported), nats-server (deploy/nats/nats-server.conf's settings,
 * with a new password per user on every run) and
 * the services, waits until every /readyz is green, prints who runs
 * where, streams every log line with a service prefix, and on Ctrl-C stops
 * everything it started. A process that dies is restarted with a backoff.
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
 * $KS_RUNTIME_ROOT/nats (default /var/lib/kubelet-split); --nats-port,
 * --nats-monitor-port and --port-base move the ports.
 *
 *   node dist/deploy/local/launch.js [--manifests DIR] [--pod-workers N] [--no-runtime] [--target all|LIST | --split] [--entry bundle|dist]
 *                                    [--nats-port 4222] [--nats-monitor-port 8222] [--port-base 10310]
 */
import { execFileSync, type ChildProcess } from 'node:child_process';
import { rmSync } from 'node:fs';
import { hostname } from 'node:os';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { DEFAULT_PORTS, SERVICE_NAMES, STATUS_GROUP, parseTarget, type ServiceName } from '@app/service';
import { NODE_NATS_SETTINGS } from '../nats/server-config.js';
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
    'nats-monitor-port': { type: 'string', default: '8222' },
    'port-base': { type: 'string', default: String(DEFAULT_PORTS['config-source']) },
  },
});
function portArg(name: 'nats-port' | 'nats-monitor-port' | 'port-base'): number {
  const n = Number(args[name]);
  if (!Number.isInteger(n) || n < 1 || n > 65535) {
    process.stderr.write(`--${name} must be a TCP port (1-65535), got "${args[name]}"\n`);
    process.exit(2);
  }
  return n;
}
const natsPort = portArg('nats-port');
const natsMonitorPort = portArg('nats-monitor-port');
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
/** The NATS users' passwords and the server's config for this run (mode 0700, files 0600), beside containerd's state. */
const CREDENTIALS_DIR = join(process.env['KS_RUNTIME_STATE'] ?? '/run/kubelet-split', 'nats-credentials');
/** The JetStream store (the KV buckets): NODE_NATS_SETTINGS's unless KS_RUNTIME_ROOT moves the node's state. */
const NATS_STORE_DIR = process.env['KS_RUNTIME_ROOT'] ? join(process.env['KS_RUNTIME_ROOT'], 'nats') : NODE_NATS_SETTINGS.storeDir;
const COLORS = [36, 32, 33, 35, 34, 91, 92, 93, 94, 95];
const useColor = process.stdout.isTTY;

function prefixed(label: string, color: number) {
  const tag = label.padEnd(18);
  return (line: string) => process.stdout.write(`${useColor ? `\u001b[${color}m${tag}\u001b[0m` : tag} | ${line}\n`);
}
const say = prefixed('launcher', 37);

/** One process the launcher runs and restarts: one service, or several as modules (TARGET). */
interface Slot {
  services: ServiceName[];
  instance: string;
  ports: Partial<Record<ServiceName, number>>;
  env: Partial<Record<ServiceName, Record<string, string>>>;
  color: number;
  current?: ServiceProcess[];
  restarts: number;
}

function slotName(slot: Slot): string {
  const what = slot.services.length === SERVICE_NAMES.length ? 'all' : slot.services.join(',');
  return slot.instance === '0' ? what : `${what}#${slot.instance}`;
}

let stopping = false;
let nats: NatsServer | undefined;
let natsChild: ChildProcess | undefined;
let startedRuntime = false;
const slots: Slot[] = [];

function runtime(cmd: 'start' | 'stop' | 'status' | 'address'): string {
  return execFileSync('bash', [runtimeScript, cmd], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'inherit'] }).trim();
}

function launch(slot: Slot): ServiceProcess[] {
  const sink = prefixed(slotName(slot), slot.color);
  const [only] = slot.services;
  const sps =
    slot.services.length === 1 && only && together.length === 0
      ? [spawnService(only, slot.env[only] ?? {}, { port: slot.ports[only] ?? portOf(only), instance: slot.instance, sink, detached: true })]
      : spawnModules(slot.services, (s) => slot.env[s] ?? {}, { ports: slot.ports, instance: slot.instance, sink, detached: true });
  slot.current = sps;
  sps[0]?.process.once('exit', (code, signal) => {
    if (stopping) return;
    slot.restarts++;
    const delay = Math.min(30_000, 1000 * 2 ** Math.min(slot.restarts - 1, 5));
    say(`${slotName(slot)} exited (code ${code}, signal ${signal}); restarting in ${delay}ms`);
    setTimeout(() => {
      if (!stopping) launch(slot);
    }, delay).unref();
  });
  return sps;
}

async function shutdown(signal: string): Promise<void> {
  if (stopping) return;
  stopping = true;
  say(`${signal}: stopping the services`);
  await Promise.all(slots.flatMap((s) => (s.current?.[0] ? [s.current[0].stop(15_000)] : [])));
  if (nats || natsChild) {
    say('stopping nats-server');
    await (nats ? nats.stop() : natsChild && stopProcess(natsChild, 5000));
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
  say('stopped');
}

async function main(): Promise<void> {
  process.on('SIGINT', () => void shutdown('SIGINT').then(() => process.exit(0)));
  process.on('SIGTERM', () => void shutdown('SIGTERM').then(() => process.exit(0)));
  process.on('SIGHUP', () => void shutdown('SIGHUP').then(() => process.exit(0)));

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
    process.stdout.write(runtime('start') + '\n');
    startedRuntime = !running;
    runtimeEndpoint = `unix://${runtime('address')}`;
  }

  say('starting nats-server');
  // Passwords are new on every run, in a directory only root reads; the server's settings are
  // deploy/nats/nats-server.conf's (rendered by the same code), with the passwords written in.
  rmSync(CREDENTIALS_DIR, { recursive: true, force: true });
  nats = await startNats({
    credentialsDir: CREDENTIALS_DIR,
    storeDir: NATS_STORE_DIR,
    failOnViolations: false,
    port: natsPort,
    monitorPort: natsMonitorPort,
    sink: prefixed('nats-server', 90),
    onSpawn: (child) => (natsChild = child),
    detached: true,
  });

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
    });
  }
  for (const service of SERVICE_NAMES) {
    const replicas = service === 'pod-worker' ? podWorkers : 1;
    for (let r = together.includes(service) ? 1 : 0; r < replicas; r++) {
      slots.push({ services: [service], instance: String(r), ports: { [service]: r === 0 ? portOf(service) : portBase + 30 + r }, env: { [service]: envOf(service) }, color: colorOf(service), restarts: 0 });
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
    ['nats-server', '-', `${nats.port} (monitor ${nats.monitorPort})`, String(nats.process.pid), '-'],
    ...started.map(({ sp }) => [sp.service, sp.instance, String(sp.port), String(sp.process.pid), `${Math.round(sp.readyAfterMs ?? 0)}ms`]),
  ];
  const widths = rows[0]!.map((_, c) => Math.max(...rows.map((r) => (r[c] ?? '').length)));
  const table = rows.map((r) => r.map((cell, c) => cell.padEnd(widths[c] ?? 0)).join('  ')).join('\n');
  process.stdout.write(`\nkubelet-split is up on node "${node}" (manifests: ${resolve(args.manifests)})\n${table}\n\n`);
  process.stdout.write(`NATS monitoring: ${nats.monitorUrl}/connz?subs=detail   Ctrl-C stops everything.\n`);
  process.stdout.write(`NATS users' passwords (new each run, root only): ${credentials.dir}; tools connect as "admin" with ${credentials.passwordFile('admin')}\n\n`);

  await exited(nats.process);
  if (!stopping) {
    say('nats-server exited; stopping the stack');
    await shutdown('nats-server exit');
    process.exit(1);
  }
}

main().catch(async (err: unknown) => {
  say(`failed: ${(err as Error).message}`);
  await shutdown('failure');
  process.exit(1);
});
