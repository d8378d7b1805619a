/**
 * Two of each single-active service (sync-loop, pleg, status-manager) on a
 * real nats-server and containerd, with pods running. Each leader in turn is
 * SIGKILLed: the standby must lead once the lease runs out (by design within
 * the lease duration and a retry period, 4.5 s: issue 12's 5 s; the bound
 * allows a loaded machine more), the pods keep running with
 * the same sandbox and containers (nothing started twice), /pods stays
 * right, and a pod added after the failover runs. Then each leader is
 * stopped with SIGTERM: it hands the lease over at once. The failover times
 * are printed.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { V1PodStatus } from '@kubernetes/client-node';
import type { ServiceInfo } from '@app/contracts';
import { DEFAULT_LEADER_ELECTION } from '@app/leader-election';
import { exited, type ServiceProcess } from '../deploy/local/stack.js';
import { NodeStack } from './support/node-stack.js';

const IMAGE = 'localhost/kubelet-split/busybox:1.35';
const ELECTED = ['sync-loop', 'pleg', 'status-manager'] as const;
type Elected = (typeof ELECTED)[number];
/**
 * A SIGKILLed leader's standby leads at most a lease duration and a retry period after the leader's last renewal
 * (docs/adr/0011), 4.5 s with the defaults these services run with, which is issue 12's "within 5 s": too close a
 * bound for a loaded machine. This one adds a slack and stays under two lease durations (a standby that waited a
 * second lease fails it); the measured times are printed.
 */
const FAILOVER_BOUND_MS = DEFAULT_LEADER_ELECTION.leaseDurationMs + DEFAULT_LEADER_ELECTION.retryPeriodMs + 2500;

function manifest(name: string): string {
  return `apiVersion: v1\nkind: Pod\nmetadata:\n  name: ${name}\nspec:\n  hostNetwork: true\n  terminationGracePeriodSeconds: 2\n  containers:\n    - name: main\n      image: ${IMAGE}\n      command: ["sleep", "3600"]\n`;
}

const runningAndReady = (s: V1PodStatus) =>
  s.phase === 'Running' && s.containerStatuses?.[0]?.state?.running !== undefined && s.conditions?.find((c) => c.type === 'Ready')?.status === 'True';

async function info(sp: ServiceProcess): Promise<ServiceInfo> {
  const res = await fetch(`http://127.0.0.1:${sp.port}/info`, { signal: AbortSignal.timeout(2000) });
  return (await res.json()) as ServiceInfo;
}

describe('leader election: two of each single-active service', { timeout: 900_000 }, () => {
  const stack = new NodeStack({
    node: 'le-e2e',
    services: ['cri-gateway', 'pleg', 'sync-loop', 'status-manager', 'pod-worker', 'config-source'],
  });
  const pods = ['steady-a', 'steady-b'];
  /** Each pod's sandbox and container ids as first seen: a second one would be a thing done twice. */
  const firstSeen = new Map<string, { sandbox: string; container: string }>();
  const failovers: string[] = [];

  const instances = (service: Elected): ServiceProcess[] => [...stack.procs.entries()].filter(([k]) => k.startsWith(`${service}#`)).map(([, sp]) => sp);

  /** The instance that leads, by /info, once exactly one does (the other says standby). */
  async function roles(service: Elected): Promise<{ leader: ServiceProcess; standby: ServiceProcess }> {
    return stack.waitFor(`one ${service} leader and one standby`, async () => {
      const all = instances(service);
      const said = await Promise.all(all.map(async (sp) => ({ sp, role: (await info(sp)).leadership?.role })));
      const leaders = said.filter((s) => s.role === 'leader');
      const standbys = said.filter((s) => s.role === 'standby');
      return all.length === 2 && leaders.length === 1 && standbys.length === 1 ? { leader: leaders[0]!.sp, standby: standbys[0]!.sp } : undefined;
    });
  }

  /** Exactly one sandbox and one container per pod, the ones first seen, running. */
  async function assertNothingTwice(): Promise<void> {
    for (const name of [...firstSeen.keys()]) {
      const [sandboxes, containers] = await Promise.all([stack.sandboxes(name), stack.containers(name)]);
      assert.equal(sandboxes.length, 1, `${name}: sandboxes ${sandboxes.map((s) => `${s.id.slice(0, 12)} ${s.state}`).join(', ')}`);
      assert.equal(containers.length, 1, `${name}: containers ${containers.map((c) => `${c.id.slice(0, 12)} ${c.state}`).join(', ')}`);
      assert.equal(sandboxes[0]?.id, firstSeen.get(name)?.sandbox, `${name}: the same sandbox`);
      assert.equal(containers[0]?.id, firstSeen.get(name)?.container, `${name}: the same container`);
      assert.equal(sandboxes[0]?.state, 'SANDBOX_READY');
      assert.equal(containers[0]?.state, 'CONTAINER_RUNNING');
    }
  }

  /** /pods (from whichever status manager is up) says every pod is Running and Ready, with no restart. */
  async function assertPodsRight(): Promise<void> {
    for (const name of firstSeen.keys()) {
      const s = await stack.waitForPod(name, 'Running and Ready', runningAndReady, 15_000);
      assert.equal(s.containerStatuses?.[0]?.restartCount, 0, `${name} was not restarted`);
      assert.equal(s.containerStatuses?.[0]?.containerID, `containerd://${firstSeen.get(name)?.container ?? ''}`);
    }
  }

  /** Writes the pod's manifest (unless `written` already), waits for it to run, and records its sandbox and container. */
  async function addPod(name: string, opts: { timeoutMs?: number; written?: boolean } = {}): Promise<void> {
    if (!opts.written) stack.writeManifest(name, manifest(name));
    await stack.waitForPod(name, 'Running and Ready', runningAndReady, opts.timeoutMs ?? 60_000);
    const [sandboxes, containers] = await Promise.all([stack.sandboxes(name), stack.containers(name)]);
    assert.equal(sandboxes.length, 1);
    assert.equal(containers.length, 1);
    firstSeen.set(name, { sandbox: sandboxes[0]?.id ?? '', container: containers[0]?.id ?? '' });
  }

  /** Starts the instance again under its own name: it finds the other leading and stands by. */
  async function restart(sp: ServiceProcess): Promise<void> {
    stack.procs.delete(`${sp.service}#${sp.instance}`);
    await stack.startService(sp.service, sp.instance);
  }

  /** Polls the standby's /info until it says leader; the milliseconds since `from`. */
  async function ledAfter(standby: ServiceProcess, from: number): Promise<number> {
    for (;;) {
      const role = await info(standby).then((i) => i.leadership?.role, () => undefined);
      if (role === 'leader') return performance.now() - from;
      if (performance.now() - from > 30_000) throw new Error(`${standby.service}#${standby.instance} did not lead within 30 s`);
      await new Promise((r) => setTimeout(r, 25));
    }
  }

  before(async () => {
    await stack.start();
    for (const service of ELECTED) await stack.startService(service, '1');
    for (const name of pods) await addPod(name);
  });
  after(async () => {
    if (failovers.length > 0) process.stdout.write(`leader failover times: ${failovers.join('; ')}\n`);
    await stack.stop();
  });

  it('one of each leads and the other stands by: /info, /readyz (200 for both) and leader_election_master_status say which', async () => {
    for (const service of ELECTED) {
      const { leader, standby } = await roles(service);
      assert.equal(leader.instance, '0', `${service}: the first one started leads`);
      assert.equal((await info(standby)).leadership?.leader, '0', `${service}: the standby knows the leader`);
      for (const [sp, role, master] of [[leader, 'leader', 1], [standby, 'standby', 0]] as const) {
        const ready = await fetch(`http://127.0.0.1:${sp.port}/readyz`);
        assert.equal(ready.status, 200, `${service} ${role} is ready`);
        const body = (await ready.json()) as { checks: Record<string, { detail?: string }> };
        assert.match(body.checks['leadership']?.detail ?? '', new RegExp(`^${role}`));
        const metrics = await (await fetch(`http://127.0.0.1:${sp.port}/metrics`)).text();
        assert.match(metrics, new RegExp(`^leader_election_master_status\\{[^}]*name="${service}"[^}]*\\} ${master}$`, 'm'), `${service} ${role}`);
      }
    }
    await assertNothingTwice();
  });

  for (const service of ELECTED) {
    it(`the ${service} leader SIGKILLed: the standby leads once the lease runs out, the pods keep running, nothing is done twice, pods added meanwhile and after run`, async (t) => {
      const { leader, standby } = await roles(service);
      const killedAt = performance.now();
      leader.process.kill('SIGKILL');
      await exited(leader.process);
      stack.procs.delete(`${service}#${leader.instance}`); // /pods comes from the survivor now
      // A pod added while no one leads: what the dead leader would have handled must not be lost.
      stack.writeManifest(`gap-${service}`, manifest(`gap-${service}`));
      const ms = await ledAfter(standby, killedAt);
      failovers.push(`${service} SIGKILL ${Math.round(ms)} ms`);
      t.diagnostic(`${service}: the standby led ${Math.round(ms)} ms after the leader was SIGKILLed`);
      assert.ok(ms < FAILOVER_BOUND_MS, `${service}: the standby led after ${Math.round(ms)} ms (bound ${FAILOVER_BOUND_MS} ms)`);

      // Well before the pod workers' next periodic sync (SYNC_FREQUENCY, a minute) would repair a lost status.
      const gapAt = performance.now();
      await addPod(`gap-${service}`, { timeoutMs: 15_000, written: true });
      t.diagnostic(`${service}: the pod added while no one led was Running and Ready ${Math.round(performance.now() - gapAt)} ms after the takeover`);
      await assertPodsRight();
      await assertNothingTwice();
      await addPod(`after-${service}`);
      await restart(leader);
      await roles(service);
      // A few sync periods later, still nothing twice.
      await new Promise((r) => setTimeout(r, 3000));
      await assertNothingTwice();
      await assertPodsRight();
    });
  }

  for (const service of ELECTED) {
    it(`the ${service} leader stopped with SIGTERM hands over at once`, async (t) => {
      const { leader, standby } = await roles(service);
      const stoppedAt = performance.now();
      const stopping = leader.stop(10_000);
      const ms = await ledAfter(standby, stoppedAt);
      await stopping;
      assert.equal(leader.process.exitCode, 0, 'it exited cleanly');
      failovers.push(`${service} SIGTERM ${Math.round(ms)} ms`);
      t.diagnostic(`${service}: the standby led ${Math.round(ms)} ms after SIGTERM to the leader`);
      // At once: the standby's next try after the release (a retry period), once the leader stopped acting (its work in
      // flight first). A lease left to run out would take at least its duration less a retry period (3.5 s): the
      // bound stays half a second under that, to tell the two apart, and gives the hand-over all the rest.
      const expiryAtLeastMs = DEFAULT_LEADER_ELECTION.leaseDurationMs - DEFAULT_LEADER_ELECTION.retryPeriodMs;
      const handoverBoundMs = expiryAtLeastMs - 500;
      assert.ok(ms < handoverBoundMs, `${service}: the standby led after ${Math.round(ms)} ms (bound ${handoverBoundMs} ms)`);
      await restart(leader);
      await roles(service);
    });
  }

  it('after all that, every pod runs once and /pods is right; a removed pod is gone', async () => {
    await assertPodsRight();
    await assertNothingTwice();
    stack.removeManifest('steady-a');
    firstSeen.delete('steady-a');
    await stack.waitFor('steady-a gone from containerd', async () => ((await stack.containers('steady-a')).length === 0 && (await stack.sandboxes('steady-a')).length === 0 ? true : undefined), 30_000);
    await stack.waitFor('steady-a gone from /pods', async () => ((await stack.podList()).items.some((p) => p.metadata?.name === stack.podName('steady-a')) ? undefined : true), 15_000);
  });
});
