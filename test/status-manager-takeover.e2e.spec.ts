/**
 * Issue 28 item 13, as it was tried from outside: a second status manager
 * started as a standby (the status group, same environment, its own
 * INSTANCE_ID and PORT), the leader SIGKILLed, a pod added at that moment,
 * and the killed instance restarted a second later under its INSTANCE_ID,
 * as the launcher restarts it. Before the fix the restarted process took
 * the lease at once (it had the dead holder's identity), not the standby
 * that had heard the status calls, and the pod ran in containerd within a
 * second but stayed Pending in `/pods` on both instances for 60 to 90 s
 * (until its next periodic sync).
 *
 * What a user checks: the new pod is Running and Ready in `/pods` on both
 * instances within seconds of running in containerd, and the standby that
 * was running leads. Then the harder case: both instances killed, a pod
 * added while none runs, one started again: it has heard nothing, and must
 * repair every status at once, not at the next resync. The counts and the
 * times are printed.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { ObjectSerializer } from '@kubernetes/client-node/dist/gen/models/ObjectSerializer.js';
import type { V1PodList, V1PodStatus } from '@kubernetes/client-node';
import type { ServiceInfo } from '@app/contracts';
import { exited, type ServiceProcess } from '../deploy/local/stack.js';
import { NodeStack } from './support/node-stack.js';

const IMAGE = 'localhost/kubelet-split/busybox:1.35';
/** The launcher's first restart delay (deploy/local/launch.ts: 1 s, doubling). */
const LAUNCHER_RESTART_MS = 1000;
/** How long the test watches (to measure the old 60-90 s too); the assertion's bound is READY_BOUND_MS. */
const WATCH_MS = 120_000;
/**
 * The status group's leader election at client-go's defaults (15 s / 10 s / 2 s): a restarted process is up well
 * within the lease here, as it was where the item was tried (this machine's group start takes 3 to 5 s, the
 * 4 s default lease would let the standby win by accident).
 */
const LEASE = { LEADER_LEASE_DURATION: '15s', LEADER_RENEW_DEADLINE: '10s', LEADER_RETRY_PERIOD: '2s' };
/**
 * A lease, a retry period and 5 s: the standby leads once the dead leader's lease runs out and replays what it
 * heard; well under the pod workers' periodic sync (SYNC_FREQUENCY, a minute), which is what used to repair it.
 */
const READY_BOUND_MS = 22_000;
/** A new leader that heard nothing: every pod synced at once (a sync tick, a relist, a status), with room for a loaded machine. */
const REPAIR_BOUND_MS = 15_000;

function manifest(name: string): string {
  return `apiVersion: v1\nkind: Pod\nmetadata:\n  name: ${name}\nspec:\n  hostNetwork: true\n  terminationGracePeriodSeconds: 1\n  containers:\n    - name: main\n      image: ${IMAGE}\n      command: ["sleep", "3600"]\n`;
}

const runningAndReady = (s: V1PodStatus | undefined) =>
  s?.phase === 'Running' && s.containerStatuses?.[0]?.state?.running !== undefined && s.conditions?.find((c) => c.type === 'Ready')?.status === 'True';

describe('a status manager killed beside a standby: new pods Ready in /pods at once', { timeout: 600_000 }, () => {
  const stack = new NodeStack({ node: 'sm-takeover', services: ['cri-gateway', 'pleg', 'sync-loop', 'status-manager', 'pod-worker', 'config-source'], target: 'group', env: { 'status-manager': LEASE } });
  const report: string[] = [];

  /** The status managers (the group's status-manager module) that run, by instance. */
  const managers = (): ServiceProcess[] => [...stack.procs.entries()].filter(([k, p]) => k.startsWith('status-manager#') && p.process.exitCode === null && p.process.signalCode === null).map(([, p]) => p);
  const info = async (sp: ServiceProcess): Promise<ServiceInfo> => (await (await fetch(`http://127.0.0.1:${sp.port}/info`, { signal: AbortSignal.timeout(2000) })).json()) as ServiceInfo;
  /** The pod's status in one instance's own `/pods`. */
  const servedBy = async (sp: ServiceProcess, name: string): Promise<V1PodStatus | undefined> => {
    const res = await fetch(`http://127.0.0.1:${sp.port}/pods`, { signal: AbortSignal.timeout(5000) });
    const list = ObjectSerializer.deserialize(await res.json(), 'V1PodList', '') as V1PodList;
    return list.items.find((p) => p.metadata?.name === stack.podName(name))?.status;
  };
  const runningInContainerd = async (name: string) => (await stack.containers(name)).some((c) => c.state === 'CONTAINER_RUNNING');

  /** Kills the whole status group process of `sp` (its modules share it) and forgets its modules. */
  async function killGroup(sp: ServiceProcess): Promise<void> {
    sp.process.kill('SIGKILL');
    await exited(sp.process);
    for (const [k, p] of [...stack.procs.entries()]) if (p.process === sp.process) stack.procs.delete(k);
  }

  /**
   * From `from`: when the pod first ran in containerd, and when each running status manager's `/pods` first said
   * Running and Ready (undefined: not within WATCH_MS). Ends once every one of them did.
   */
  async function watch(name: string, from: number, instances: () => ServiceProcess[]) {
    let ranAt: number | undefined;
    const readyAt = new Map<string, number>();
    const last = new Map<string, string>();
    while (performance.now() - from < WATCH_MS) {
      if (ranAt === undefined && (await runningInContainerd(name).catch(() => false))) ranAt = performance.now() - from;
      const all = instances();
      for (const sp of all) {
        if (readyAt.has(sp.instance)) continue;
        const s = await servedBy(sp, name).catch(() => undefined);
        last.set(sp.instance, `${s?.phase ?? 'absent'} Ready=${s?.conditions?.find((c) => c.type === 'Ready')?.status ?? 'none'}`);
        if (runningAndReady(s)) readyAt.set(sp.instance, performance.now() - from);
      }
      if (ranAt !== undefined && all.length > 0 && all.every((sp) => readyAt.has(sp.instance))) break;
      await new Promise((r) => setTimeout(r, 200));
    }
    return { ranAt, readyAt, last };
  }

  before(async () => {
    await stack.start(); // the status group as instance 0: the leader
    await stack.startService('status-manager', '1'); // the standby
    stack.writeManifest('steady', manifest('steady'));
    await stack.waitForPod('steady', 'Running and Ready', runningAndReady, 90_000);
  });
  after(async () => {
    if (report.length > 0) process.stdout.write(`status-manager takeover: ${report.join('; ')}\n`);
    await stack.stop();
  });

  it('the leader SIGKILLed and restarted by the launcher under its INSTANCE_ID, a pod added at that moment: the standby leads, the pod is Ready in /pods on both within seconds', async (t) => {
    const roles = await stack.waitFor('one status-manager leader and one standby', async () => {
      const all = managers();
      const said = await Promise.all(all.map(async (sp) => ({ sp, role: (await info(sp)).leadership?.role })));
      const leader = said.find((s) => s.role === 'leader')?.sp;
      const standby = said.find((s) => s.role === 'standby')?.sp;
      return all.length === 2 && leader && standby ? { leader, standby } : undefined;
    });
    const killedAt = performance.now();
    await killGroup(roles.leader);
    stack.writeManifest('late', manifest('late'));
    await new Promise((r) => setTimeout(r, LAUNCHER_RESTART_MS));
    await stack.startService('status-manager', roles.leader.instance);
    const w = await watch('late', killedAt, managers);
    const leaders = await Promise.all(managers().map(async (sp) => ({ instance: sp.instance, role: (await info(sp)).leadership?.role })));
    const newLeader = leaders.find((l) => l.role === 'leader')?.instance;
    const line = `SIGKILL beside a standby: late ran in containerd at ${fmt(w.ranAt)}; Ready in /pods at ${[...w.readyAt].map(([i, ms]) => `#${i} ${fmt(ms)}`).join(', ') || 'never'} (last seen: ${[...w.last].map(([i, s]) => `#${i} ${s}`).join(', ')}); leader now #${newLeader ?? '?'} (the standby was #${roles.standby.instance})`;
    report.push(line);
    t.diagnostic(line);
    assert.ok(w.ranAt !== undefined, 'the pod ran in containerd');
    assert.equal(newLeader, roles.standby.instance, 'the standby that was running leads, not the restarted process');
    for (const sp of managers()) {
      const at = w.readyAt.get(sp.instance);
      assert.ok(at !== undefined && at < READY_BOUND_MS, `#${sp.instance}: Ready in /pods at ${fmt(at)} (bound ${READY_BOUND_MS} ms)`);
    }
  });

  it('both status managers SIGKILLed, a pod added while none runs, one started again: it repairs every status at once', async (t) => {
    const killedAt = performance.now();
    for (const sp of managers()) await killGroup(sp);
    stack.writeManifest('unheard', manifest('unheard'));
    await stack.waitFor('unheard running in containerd', async () => ((await runningInContainerd('unheard')) ? true : undefined), 60_000);
    const ranAt = performance.now() - killedAt;
    // A few syncs more, so that every status of the new pod is sent while no status manager listens.
    await new Promise((r) => setTimeout(r, 3000));
    const startedAt = performance.now();
    const sp = await stack.startService('status-manager', '2');
    // A new candidate waits for the dead holder's lease (15 s here) before it leads; the repair is timed from then.
    const led = await stack.waitFor('the new status manager leading', async () => {
      const l = (await info(sp)).leadership;
      return l?.role === 'leader' ? l : undefined;
    }, 60_000);
    // How long ago its term began (/info's `since`, the same machine's clock): the watch starts a poll later.
    const ledAgoMs = Math.max(0, Date.now() - Date.parse(led.since));
    const ledAt = performance.now() - ledAgoMs;
    const w = await watch('unheard', ledAt, managers);
    const at = w.readyAt.get('2');
    const line = `no status manager while unheard started (it ran at ${fmt(ranAt)} after the kill): the new instance led ${fmt(ledAt - startedAt)} after it was started, and served it Ready ${fmt(at)} after it led (last seen: ${w.last.get('2') ?? '?'})`;
    report.push(line);
    t.diagnostic(line);
    assert.ok(at !== undefined && at < REPAIR_BOUND_MS, `Ready in /pods ${fmt(at)} after it led (bound ${REPAIR_BOUND_MS} ms)`);
    const steady = await stack.waitFor('steady Running and Ready in the new instance\'s /pods', async () => {
      const s = await servedBy(managers()[0]!, 'steady');
      return runningAndReady(s) ? s : undefined;
    }, 30_000);
    assert.ok(steady);
  });
});

function fmt(ms: number | undefined): string {
  return ms === undefined ? 'never' : `${(ms / 1000).toFixed(1)} s`;
}
