/**
 * Issue 28 item 12, as it was tried: `bash deploy/up.sh` with a manifest
 * directory of 12 static pods, nats-server SIGKILLed (by the pid the
 * launcher's table gives) while the pods start. The launcher restarts
 * nats-server as it restarts the services (same config, same JetStream
 * store), and a crash of one part stops no pod: all 12 end Running and
 * Ready in /pods, none restarted, every sandbox and container that ran when
 * nats-server died still runs with the same pid, containerd is the same
 * process. Before the fix the launcher logged "nats-server exited; stopping
 * the stack" and stopped every service, containerd and every task.
 *
 * The launcher runs with a containerd of its own (KS_RUNTIME_STATE and
 * KS_RUNTIME_ROOT under a fresh directory, started and stopped by the
 * launcher as for a user), on free ports; the pods use the host network.
 */
import { after, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { UpRun, alive, exitedWithin, waitFor } from './support/launcher.js';

const PODS = Array.from({ length: 12 }, (_, i) => `crash-${String(i + 1).padStart(2, '0')}`);
const say = (line: string) => process.stdout.write(`# ${line}\n`);

describe('the launcher when nats-server crashes (issue 28 item 12)', () => {
  const run = UpRun.create(PODS);
  let containerPids: number[] = [];

  after(async () => {
    const child = run.child;
    if (child && child.exitCode === null && child.signalCode === null) {
      child.kill('SIGINT');
      await exitedWithin(child, 90_000);
    }
    run.cleanUp(containerPids);
  });

  it('restarts nats-server, and every pod keeps running: 12 Running, none restarted, no task replaced', async () => {
    const t0 = performance.now();
    const secs = () => ((performance.now() - t0) / 1000).toFixed(1);
    const launcher = await run.start();
    const table = await run.table(240_000);
    const natsPid = table.find((r) => r.service === 'nats-server')?.pid ?? 0;
    assert.ok(natsPid > 0, `the launcher's table names nats-server's pid:\n${run.lines.slice(-20).join('\n')}`);
    const containerd = run.containerdPid();
    say(`the stack is up after ${secs()} s: nats-server pid ${natsPid}, containerd pid ${containerd}, ${table.length - 1} service processes`);

    // "While the pods start": the first pod's sandbox runs, not every pod's container yet.
    const atKill = await waitFor('the first pod task in containerd', () => (run.tasks().size > 0 ? run.tasks() : undefined), 120_000, 100);
    process.kill(natsPid, 'SIGKILL');
    const tKill = performance.now();
    containerPids = [...atKill.values()];
    say(`nats-server SIGKILLed at ${secs()} s with ${atKill.size} of ${PODS.length * 2} tasks (sandboxes and containers) running`);

    const expected = PODS.map((p) => `${p}-${run.node}`);
    let last = 'nothing served yet';
    const served = await waitFor(
      `all ${PODS.length} pods Running and Ready in /pods`,
      async () => {
        if (launcher.exitCode !== null || launcher.signalCode !== null) {
          throw new Error(`the launcher exited (code ${launcher.exitCode}, signal ${launcher.signalCode}) ${secs()} s in; containerd ${alive(containerd) ? 'runs' : 'is gone'}, ${alive(containerd) && run.runtimeAnswers() ? run.tasks().size : 0} tasks; it said:\n${run.lines.filter((l) => /^launcher /.test(l)).join('\n')}`);
        }
        const pods = await run.pods().catch((err: unknown) => void (last = `GET /pods: ${(err as Error).message}`));
        const mine = pods?.filter((p) => expected.includes(p.name)) ?? [];
        if (pods) last = `${mine.length} of this node's pods in /pods: ${mine.map((p) => `${p.name.replace(`-${run.node}`, '')} ${p.phase}${p.ready ? ' ready' : ''}`).join(', ')}`;
        return mine.length === PODS.length && mine.every((p) => p.phase === 'Running' && p.ready) ? mine : undefined;
      },
      150_000,
      500,
    ).catch((err: unknown) => {
      throw new Error(`${(err as Error).message}; last: ${last}; ${run.tasks().size} tasks in containerd; the launcher's output: ${run.logFile}`);
    });
    const convergedS = ((performance.now() - tKill) / 1000).toFixed(1);
    // Nothing restarts after either: the same tasks, the same start times, a few seconds on.
    const atConvergence = run.tasks();
    await new Promise((r) => setTimeout(r, 5000));
    const later = (await run.pods()).filter((p) => expected.includes(p.name));
    const changedStart = served.filter((p) => later.find((l) => l.name === p.name)?.startedAt !== p.startedAt).map((p) => p.name);
    const restarted = await run.line(/^launcher\s+\| nats-server exited .*restarting/, 1000).catch(() => undefined);
    const now = run.tasks();
    const kept = [...atKill].filter(([id, pid]) => now.get(id) === pid).length;
    const keptSince = [...atConvergence].filter(([id, pid]) => now.get(id) === pid).length;
    const newNats = run.remaining().filter((p) => /nats-server/.test(p.what) && p.pid !== natsPid);
    say(`${served.length}/${PODS.length} pods Running and Ready ${convergedS} s after the kill; restartCount total ${served.reduce((n, p) => n + p.restarts, 0)}, containers terminated ${later.reduce((n, p) => n + p.terminated, 0)}, start times changed ${changedStart.length}; tasks kept ${kept}/${atKill.size} from the kill, ${keptSince}/${atConvergence.size} from convergence to 5 s later; tasks now ${now.size}; new nats-server pid ${newNats.map((p) => p.pid).join(',') || 'none'}`);

    assert.ok(restarted, 'the launcher says it restarts nats-server');
    assert.equal(newNats.length, 1, 'one new nats-server runs');
    assert.ok(alive(containerd), 'containerd is the same process');
    assert.deepEqual(later.filter((p) => p.terminated > 0).map((p) => p.name), [], 'no container was killed or restarted (none has a lastState.terminated)');
    assert.deepEqual(changedStart, [], 'every container\'s start time stays the same');
    assert.equal(kept, atKill.size, 'every task that ran when nats-server died runs with the same pid');
    assert.equal(keptSince, atConvergence.size, 'and every task at convergence still runs with its pid');
    assert.equal(now.size, PODS.length * 2, 'one sandbox and one container per pod, no more');
  });
});
