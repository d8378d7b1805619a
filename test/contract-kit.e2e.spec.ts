/**
 * The contract kit (test/contract-kit/kit.ts, `npm run contract:kit`) on a
 * real node stack: nats-server, cri-gateway on the real containerd, and the
 * subsystem under test. Our cri-gateway, config-source, prober, sync loop, pod worker, status manager, kubelet server, node-status, console and PLEG pass every check, its restart included;
 * a PLEG that never publishes ContainerDied (testing/broken-pleg.ts) fails
 * exactly the checks that need one, and the kit names what is missing.
 * The kit's report is printed.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { NodeStack } from './support/node-stack.js';
import { STATUS_GROUP, type ServiceName } from '@app/service';
import { kitReport, runKit, type KitCheck, type KitTarget } from './contract-kit/kit.js';
import { CONFIG_SOURCE_CHECKS } from './contract-kit/config-source.kit.js';
import { CRI_GATEWAY_CHECKS } from './contract-kit/cri-gateway.kit.js';
import { CONSOLE_CHECKS } from './contract-kit/console.kit.js';
import { KUBELET_SERVER_CHECKS } from './contract-kit/kubelet-server.kit.js';
import { NODE_STATUS_CHECKS } from './contract-kit/node-status.kit.js';
import { PLEG_CHECKS } from './contract-kit/pleg.kit.js';
import { POD_WORKER_CHECKS } from './contract-kit/pod-worker.kit.js';
import { PROBER_CHECKS } from './contract-kit/prober.kit.js';
import { STATUS_MANAGER_CHECKS } from './contract-kit/status-manager.kit.js';
import { SYNC_LOOP_CHECKS } from './contract-kit/sync-loop.kit.js';
import { startBrokenPleg } from './contract-kit/testing/broken-pleg.js';
import { buildPlegGo } from './support/pleg-go.js';

const STATUS_KEYS = ['status-manager#', 'node-status#', 'kubelet-server#', 'console#'];

describe('the contract kit on a real node stack', { timeout: 600_000 }, () => {
  const stack = new NodeStack({ node: 'kit-e2e', services: ['cri-gateway', 'pleg', 'prober', 'config-source'] });
  const target = (restart?: () => Promise<void>): KitTarget => ({
    nc: stack.nc,
    node: stack.options.node,
    cri: stack.cri,
    timeoutMs: 30_000,
    manifests: stack.manifests,
    // The read port of the status group running now (a restart gives it new ports).
    get readUrl() {
      try {
        return stack.api;
      } catch {
        return undefined; // no status group runs now: only the kubelet server's suite asks
      }
    },
    get consoleUrl() {
      const c = [...stack.procs.entries()].reverse().find(([k, p]) => k.startsWith('console#') && p.process.exitCode === null && p.process.signalCode === null)?.[1];
      return c ? `http://127.0.0.1:${c.port}/console` : undefined;
    },
    ...(restart ? { restart } : {}),
  });

  before(() => stack.start());
  after(() => stack.stop());

  /** Stops a service's process (every module of it), and forgets it. */
  const stopService = async (service: string) => {
    const keys = service === 'status-manager' ? STATUS_KEYS : [`${service}#`];
    for (const [key, sp] of [...stack.procs].filter(([k]) => keys.some((s) => k.startsWith(s)))) {
      await sp.stop(10_000);
      stack.procs.delete(key);
    }
  };
  /**
   * The kit's suite for `service` against ours, its restart a stop and a start; every check must pass. `alone`: the
   * service runs only for its suite (a sync loop's housekeeping would kill what the other suites make behind its
   * back; a pod worker would run the sync loop's pods).
   */
  const passes = async (service: ServiceName, checks: readonly KitCheck[], alone = false) => {
    // A module of the status group runs, stops and restarts with the group (one process).
    const unit: ServiceName = (STATUS_GROUP as readonly ServiceName[]).includes(service) ? 'status-manager' : service;
    if (alone) await stack.startService(unit);
    try {
      const results = await runKit(checks, target(async () => {
        await stopService(unit);
        await stack.startService(unit);
      }));
      console.log(kitReport(service, results));
      assert.deepEqual(results.filter((r) => r.outcome !== 'passed').map((r) => `${r.name}: ${r.outcome} ${r.detail}`), []);
      assert.equal(results.length, checks.length);
    } finally {
      if (alone) await stopService(unit);
    }
  };

  it('our cri-gateway passes every check, a restart included', () => passes('cri-gateway', CRI_GATEWAY_CHECKS));
  it('our config-source passes every check, a restart included', () => passes('config-source', CONFIG_SOURCE_CHECKS));
  it('our prober passes every check, a restart included', () => passes('prober', PROBER_CHECKS));
  it('our sync loop passes every check, a restart included (the kit plays the pod workers)', () => passes('sync-loop', SYNC_LOOP_CHECKS, true));
  it('our pod worker passes every check, a restart included (the kit plays the sync loop)', () => passes('pod-worker', POD_WORKER_CHECKS, true));
  it('our status manager passes every check, a restart included (the kit plays the pod worker and the prober)', () => passes('status-manager', STATUS_MANAGER_CHECKS, true));
  it('our kubelet server passes every check, a restart included (the kit writes the records it reads)', () => passes('kubelet-server', KUBELET_SERVER_CHECKS, true));
  it('our node-status passes every check, a restart included', () => passes('node-status', NODE_STATUS_CHECKS, true));
  it('our console passes every check, a restart included', () => passes('console', CONSOLE_CHECKS, true));
  it('our PLEG passes every check, a restart included', () => passes('pleg', PLEG_CHECKS));

  it('a PLEG that skips ContainerDied fails the checks that need it, and the kit names what is missing', async () => {
    await stopService('pleg');
    const broken = await startBrokenPleg(stack.nats.url, stack.nats.auth(), stack.options.node);
    try {
      // What the broken PLEG does do it does within a second or two; 10 s is plenty to say an event never came.
      const results = await runKit(PLEG_CHECKS, { ...target(), timeoutMs: 10_000 });
      console.log(kitReport('pleg (broken: no ContainerDied)', results));
      const failed = results.filter((r) => r.outcome === 'failed');
      assert.deepEqual(
        failed.map((r) => r.name),
        ['a container that exits on its own: ContainerDied, and the entry shows it exited with its exit code', 'a container removed and its sandbox gone: ContainerRemoved, and the entry removed or emptied'],
        'exactly the checks that need a ContainerDied fail',
      );
      for (const f of failed) assert.match(f.detail, /^ContainerDied for container [0-9a-f]{12}.*: not within 10 s; seen: ContainerStarted [0-9a-f]{12}/, `${f.name}: the failure names the missing event and what was heard`);
      assert.ok(broken.dropped.length >= 2, `the broken PLEG dropped the ContainerDied events (${broken.dropped.length})`);
      assert.equal(results.filter((r) => r.outcome === 'passed').length, PLEG_CHECKS.length - 3, 'every other check passed (the restart check is not run without --restart)');
    } finally {
      await broken.stop();
    }
  });
});

describe('the contract kit against the Go PLEG (contrib/pleg-go) in place of ours', { timeout: 600_000 }, () => {
  const stack = new NodeStack({ node: 'kit-go-e2e', services: ['cri-gateway', 'pleg'], replace: { pleg: { command: buildPlegGo() } } });

  before(() => stack.start());
  after(() => stack.stop());

  it('passes every check, a restart included', async () => {
    const restart = async () => {
      await stack.procs.get('pleg#0')?.stop(10_000);
      await stack.startService('pleg');
    };
    const results = await runKit(PLEG_CHECKS, { nc: stack.nc, node: stack.options.node, cri: stack.cri, timeoutMs: 30_000, restart });
    console.log(kitReport('pleg (Go)', results));
    assert.deepEqual(results.filter((r) => r.outcome !== 'passed').map((r) => `${r.name}: ${r.outcome} ${r.detail}`), []);
    assert.equal(results.length, PLEG_CHECKS.length);
  });
});
