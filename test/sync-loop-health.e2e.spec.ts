/**
 * Issue 28 item 11, on the real stack with the real control plane: the
 * kubelet server's `/healthz` (the kubelet API port, server.go's ping, log
 * and syncloop checks) says whether a sync loop is running its iterations,
 * and the sync loop's `/readyz` does not flap to 503 while a new leader
 * restores.
 *
 *  - Two sync loops; the leader SIGKILLed: the standby's `/readyz`, polled
 *    through the whole takeover, answers 200 every time (counted), and the
 *    kubelet's `/healthz` stays 200 (the new leader enters the loop).
 *  - The one sync loop left stalled with SIGSTOP: `/healthz` answers 500
 *    with `[-]syncloop failed` once its last iteration is older than the
 *    threshold (SYNC_LOOP_HEALTH_THRESHOLD, 10 s here; upstream's is
 *    max(2 × resyncInterval, 5 min), too long for a test), and 200 again
 *    after SIGCONT. The times are printed.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { request } from 'node:https';
import type { ServiceInfo } from '@app/contracts';
import { exited, type ServiceProcess } from '../deploy/local/stack.js';
import { startControlPlane, type ControlPlane } from './support/control-plane.js';
import { NodeStack } from './support/node-stack.js';

const NODE = 'node-syncloop-health';
/**
 * Longer than a takeover (a lease duration and a retry period, 4.5 s: the new leader enters the loop within it, so
 * /healthz must stay 200 through one), far shorter than upstream's 5 min.
 */
const THRESHOLD_MS = 10_000;

describe('the sync loop\'s health: the kubelet API\'s /healthz and the sync loop\'s /readyz', { timeout: 300_000 }, () => {
  let cp: ControlPlane;
  let stack: NodeStack;

  /** GET on the kubelet API port with the admin's token (its self-signed certificate not checked, as the apiserver does not). */
  const healthz = (path = '/healthz') =>
    new Promise<{ status: number; body: string }>((resolve, reject) => {
      const req = request({ host: '127.0.0.1', port: stack.kubeletPort, path, rejectUnauthorized: false, headers: { authorization: `Bearer ${cp.token('admin')}` }, timeout: 10_000 }, (res) => {
        let body = '';
        res.setEncoding('utf8');
        res.on('data', (c: string) => (body += c));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
      });
      req.on('error', reject);
      req.end();
    });

  const syncLoops = (): ServiceProcess[] => [...stack.procs.entries()].filter(([k, p]) => k.startsWith('sync-loop#') && p.process.exitCode === null && p.process.signalCode === null).map(([, p]) => p);
  const role = async (sp: ServiceProcess) => ((await (await fetch(`http://127.0.0.1:${sp.port}/info`, { signal: AbortSignal.timeout(2000) })).json()) as ServiceInfo).leadership?.role;

  before(async () => {
    cp = await startControlPlane({ nodes: [NODE] });
    stack = new NodeStack({
      node: NODE,
      services: ['cri-gateway', 'pleg', 'sync-loop', 'status-manager', 'pod-worker', 'config-source'],
      kubeconfig: cp.kubeconfig(NODE),
      env: { 'sync-loop': { SYNC_LOOP_HEALTH_THRESHOLD: `${THRESHOLD_MS}ms` } },
    });
    await stack.start();
    await stack.startService('sync-loop', '1');
  });

  after(async () => {
    try {
      await stack?.stop();
    } finally {
      await cp?.stop();
    }
  });

  it('/healthz is 200 "ok" while the sync loop runs; ?verbose lists ping, log and syncloop', async () => {
    const ok = await stack.waitFor('/healthz 200', async () => ((await healthz()).status === 200 ? true : undefined));
    assert.ok(ok);
    assert.deepEqual(await healthz(), { status: 200, body: 'ok' });
    assert.equal((await healthz('/healthz?verbose')).body, '[+]ping ok\n[+]log ok\n[+]syncloop ok\nhealthz check passed\n');
  });

  it('the sync-loop leader SIGKILLed: the standby\'s /readyz is 200 at every poll through its takeover, /healthz stays 200', async (t) => {
    const both = await stack.waitFor('a sync-loop leader and a standby', async () => {
      const all = syncLoops();
      const roles = await Promise.all(all.map(role));
      const leader = all[roles.indexOf('leader')];
      const standby = all[roles.indexOf('standby')];
      return all.length === 2 && leader && standby ? { leader, standby } : undefined;
    });
    both.leader.process.kill('SIGKILL');
    await exited(both.leader.process);
    const killedAt = performance.now();
    const polls = { ready: 0, notReady: [] as string[], healthz: new Map<number, number>() };
    let ledAt: number | undefined;
    // Until the standby leads and has restored (its podManager line says so), and a second more.
    while (performance.now() - killedAt < 30_000) {
      const res = await fetch(`http://127.0.0.1:${both.standby.port}/readyz`, { signal: AbortSignal.timeout(5000) });
      const body = (await res.json()) as { checks: Record<string, { detail?: string }> };
      if (res.status === 200) polls.ready++;
      else polls.notReady.push(`${Math.round(performance.now() - killedAt)} ms: ${JSON.stringify(body.checks)}`);
      const h = (await healthz()).status;
      polls.healthz.set(h, (polls.healthz.get(h) ?? 0) + 1);
      const restored = /^\d+ pods; sources/.test(body.checks['podManager']?.detail ?? '');
      if (restored && ledAt === undefined) ledAt = performance.now();
      if (ledAt !== undefined && performance.now() - ledAt > 1000) break;
      await new Promise((r) => setTimeout(r, 10));
    }
    t.diagnostic(`standby /readyz through the takeover: ${polls.ready} x 200, ${polls.notReady.length} x 503; led and restored ${ledAt === undefined ? 'never' : `${Math.round(ledAt - killedAt)} ms`} after the SIGKILL; /healthz answers ${JSON.stringify([...polls.healthz])}`);
    assert.ok(ledAt !== undefined, 'the standby led and restored within 30 s');
    assert.deepEqual(polls.notReady, [], 'the standby never answered 503');
    assert.deepEqual([...polls.healthz.keys()], [200], '/healthz stayed 200');
  });

  it('the one sync loop left stalled (SIGSTOP): /healthz 500 "[-]syncloop failed" past the threshold, 200 again after SIGCONT', async (t) => {
    const [only] = syncLoops();
    assert.ok(only, 'a sync loop runs');
    await stack.waitFor('/healthz 200 before the stall', async () => ((await healthz()).status === 200 ? true : undefined));
    const stoppedAt = performance.now();
    only.process.kill('SIGSTOP');
    let failed: { status: number; body: string };
    let failedMs: number;
    try {
      failed = await stack.waitFor('/healthz 500', async () => {
        const h = await healthz();
        return h.status === 500 ? h : undefined;
      }, THRESHOLD_MS + 30_000);
      failedMs = performance.now() - stoppedAt;
    } finally {
      only.process.kill('SIGCONT');
    }
    const contAt = performance.now();
    await stack.waitFor('/healthz 200 after SIGCONT', async () => ((await healthz()).status === 200 ? true : undefined), 30_000);
    const backMs = performance.now() - contAt;
    t.diagnostic(`/healthz went 500 ${Math.round(failedMs)} ms after SIGSTOP (threshold ${THRESHOLD_MS} ms), 200 again ${Math.round(backMs)} ms after SIGCONT`);
    assert.equal(failed.body, '[+]ping ok\n[+]log ok\n[-]syncloop failed: reason withheld\nhealthz check failed\n');
    // The time is written every quarter of the threshold: stale between 3/4 of it and all of it after the stall.
    assert.ok(failedMs >= THRESHOLD_MS * 0.7, `not before the threshold: ${Math.round(failedMs)} ms`);
  });
});
