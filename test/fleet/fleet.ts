/**
 * `npm run fleet`: several kubelet-split nodes on this machine joined to one
 * cluster and one NATS fabric, as kind makes a cluster on one host
 * (fleet-cluster.ts, docs/adr/0038-fleet-nats-fabric.md).
 *
 *   npm run fleet -- [--nodes N] [--out DIR]   up until Ctrl-C, then everything it started is stopped
 *   npm run fleet -- --test                   the fleet's end-to-end tests (test/fleet.e2e.spec.ts and test/fleet-faults.fleet.ts), each on a fleet of its own
 *
 * Needs root (containerd, bridges, cgroups, iptables), openssl, iproute2; the
 * first start builds the control plane and the controllers (minutes of Go, once).
 */
import { spawn } from 'node:child_process';
import { mkdirSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { FLEET_READER_USER } from '@app/nats';
import { REPO_ROOT } from '../../deploy/local/stack.js';
import { Cleanups } from '../conformance/cleanups.js';
import { Fleet } from './fleet-cluster.js';
import { FleetLockHeld } from './fleet-lock.js';

export { FLEET_LOCK } from './fleet-lock.js';

const { values: args } = parseArgs({
  options: {
    nodes: { type: 'string', default: '2' },
    out: { type: 'string', default: '' },
    test: { type: 'boolean', default: false },
    help: { type: 'boolean', short: 'h', default: false },
  },
});

const say = (line: string) => process.stdout.write(`fleet | ${line}\n`);
function fail(message: string): never {
  process.stderr.write(`fleet: ${message}\n`);
  process.exit(2);
}

if (args.help) {
  process.stdout.write('usage: npm run fleet -- [--nodes N] [--out DIR] | --test\n');
  process.exit(0);
}

async function runTests(): Promise<number> {
  const files = ['fleet.e2e.spec.js', 'fleet-faults.fleet.js'].map((f) => join(REPO_ROOT, 'dist', 'test', f));
  say(`node --test ${files.join(' ')} (one at a time: each starts a fleet of its own)`);
  const child = spawn(process.execPath, ['--enable-source-maps', '--test', '--test-concurrency=1', ...files], { stdio: 'inherit' });
  return new Promise((res) => child.once('exit', (code) => res(code ?? 1)));
}

const cleanups = new Cleanups(say);

async function main(): Promise<void> {
  if (args.test) {
    process.exitCode = await runTests();
    return;
  }
  const nodes = Number(args.nodes);
  if (!Number.isInteger(nodes) || nodes < 1 || nodes > 100) fail(`--nodes must be a whole number from 1 to 100, got "${args.nodes}"`);
  cleanups.onSignals((code) => process.exit(code));
  const stamp = new Date().toISOString().replace(/[:.]/g, '-').replace(/-\d+Z$/, 'Z');
  const dir = resolve(args.out || join('/var/tmp/kubelet-split/fleet', stamp));
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  say(`the run's files in ${dir}`);
  const t0 = Date.now();
  const fleet = await Fleet.start({ nodes, dir, say }).catch((err: unknown) => {
    if (err instanceof FleetLockHeld) fail(err.message);
    throw err;
  });
  cleanups.push({ what: 'the fleet', run: () => fleet.stop() });
  const hub = fleet.hub.credentials;
  say(`${nodes} node(s) Ready after ${((Date.now() - t0) / 1000).toFixed(0)} s: ${fleet.nodes.map((n) => `${n.name} (${n.net.ip}, pods ${n.net.subnet})`).join(', ')}`);
  say(`kubectl:  KUBECONFIG=${join(dir, 'kubeconfig-admin.yaml')} ${join(process.env['KS_CONTROL_PLANE_BIN'] ?? '', 'kubectl')} get nodes -o wide`);
  say(`the hub:  ${hub.clientUrls.join(',')} (the fleet reader: user ${FLEET_READER_USER}, password file ${hub.passwordFile(FLEET_READER_USER)})`);
  say(`fleet-wide: node dist/apps/cli/src/cli.js get pods -A --fleet --nats ${hub.clientUrls.join(',')} --nats-password-file ${hub.passwordFile(FLEET_READER_USER)}`);
  const console0 = fleet.nodes[0]?.consoleUrl;
  if (console0) say(`the console's fleet page: ${console0}/fleet (${fleet.nodes[0]?.name}'s console, reading the fleet as the fleet reader)`);
  say('Ctrl-C stops everything it started');
  await new Promise<void>(() => undefined);
}

main().catch(async (err: unknown) => {
  process.stderr.write(`fleet: ${(err as Error).stack ?? String(err)}\n`);
  await cleanups.run();
  process.exit(1);
});
