/**
 * Issue 28 item 14: the launcher's children do not outlive it. A launcher
 * stopped by `timeout -s INT 40 bash deploy/up.sh` (SIGINT to it and, a
 * moment later, to its process group), killed outright (SIGKILL), or left
 * without a reader for its output (the pipe it writes to closed: EPIPE,
 * what a shell's SIGPIPE death is) leaves no process of the stack running:
 * not a service, not nats-server, not containerd or a shim, not a pod's
 * container. What a clean stop does is what deploy/up.sh documents: every
 * service, then nats-server, then containerd with every task in the k8s.io
 * namespace (the launcher started that containerd: each run here has its
 * own, KS_RUNTIME_STATE and KS_RUNTIME_ROOT under a fresh directory).
 * "No process remains" is read from /proc: nothing with the run's directory
 * in its command line or environment, and none of the pids containerd gave
 * the pods' sandboxes and containers.
 */
import { after, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { appendFileSync } from 'node:fs';
import { join } from 'node:path';
import { exited } from '../deploy/local/stack.js';
import { UpRun, exitedWithin, sleeperManifest, waitFor } from './support/launcher.js';

const say = (line: string) => process.stdout.write(`# ${line}\n`);
const PODS = ['stop-a', 'stop-b'];

/** Every pid containerd reports for the run's tasks, collected until `until` resolves. */
function collectTaskPids(run: UpRun, until: Promise<unknown>): Set<number> {
  const pids = new Set<number>();
  let done = false;
  void until.finally(() => (done = true));
  const tick = () => {
    if (done) return;
    try {
      if (run.runtimeAnswers()) for (const pid of run.tasks().values()) pids.add(pid);
    } catch {
      // containerd stopping
    }
    setTimeout(tick, 500);
  };
  tick();
  return pids;
}

/** Waits until no process of the run remains (bounded), and says how long that took after `since`. */
async function noneRemain(run: UpRun, pids: Set<number>, since: number, boundMs: number): Promise<{ pid: number; what: string }[]> {
  let left = run.remaining(pids);
  try {
    await waitFor('no process of the stack', () => ((left = run.remaining(pids)).length === 0 ? true : undefined), boundMs, 250);
    say(`no process of the stack ${((performance.now() - since) / 1000).toFixed(1)} s after the launcher was gone`);
  } catch {
    say(`${left.length} processes of the stack still run ${boundMs / 1000} s after the launcher was gone`);
  }
  return left;
}

describe('the launcher leaves no child behind (issue 28 item 14)', () => {
  const runs: { run: UpRun; pids: Set<number> }[] = [];
  after(() => {
    for (const { run, pids } of runs) run.cleanUp(pids);
  });

  it('timeout -s INT 40 bash deploy/up.sh: when it returns, no process of the stack runs', async () => {
    const run = UpRun.create(PODS);
    const t0 = performance.now();
    const child = await run.start(['timeout', '-s', 'INT', '40']);
    const gone = exited(child);
    const pids = collectTaskPids(run, gone);
    runs.push({ run, pids });
    await exitedWithin(child, 150_000);
    const returned = performance.now();
    assert.ok(child.exitCode !== null || child.signalCode !== null, 'timeout ... up.sh returned within 150 s');
    const up = run.lines.some((l) => /^kubelet-split is up/.test(l));
    say(`timeout returned after ${((returned - t0) / 1000).toFixed(1)} s (exit ${child.exitCode ?? child.signalCode}); the stack was ${up ? '' : 'not yet '}up at the signal; ${pids.size} task pids seen`);
    const left = await noneRemain(run, pids, returned, 30_000);
    assert.deepEqual(left, [], 'no process of the stack runs');
    assert.ok(!run.runtimeAnswers(), 'containerd no longer answers on its socket');
  });

  it('the launcher SIGKILLed: its children stop all the same', async () => {
    const run = UpRun.create(PODS);
    const child = await run.start();
    const pids = collectTaskPids(run, exited(child));
    runs.push({ run, pids });
    const table = await run.table(240_000);
    await waitFor('both pods\' containers running', () => (run.tasks().size >= PODS.length * 2 ? true : undefined), 120_000, 250);
    assert.ok(child.pid !== undefined);
    process.kill(child.pid, 'SIGKILL');
    await exited(child);
    const killed = performance.now();
    say(`launcher (pid ${child.pid}) SIGKILLed with ${table.length} processes in its table and ${run.tasks().size} tasks`);
    const left = await noneRemain(run, pids, killed, 90_000);
    assert.deepEqual(left, [], 'no process of the stack runs');
  });

  it('the reader of its output gone (EPIPE): the launcher stops the stack and exits', async () => {
    const run = UpRun.create(PODS);
    const child = await run.start();
    const pids = collectTaskPids(run, exited(child));
    runs.push({ run, pids });
    await run.table(240_000);
    await waitFor('both pods\' containers running', () => (run.tasks().size >= PODS.length * 2 ? true : undefined), 120_000, 250);
    child.stdout?.destroy();
    const closed = performance.now();
    // Something to print: a new pod makes the services log.
    appendFileSync(join(run.manifests, 'stop-c.yaml'), sleeperManifest('stop-c'));
    await exitedWithin(child, 90_000);
    const exitedAt = performance.now();
    const gone = child.exitCode !== null || child.signalCode !== null;
    say(`launcher ${gone ? `exited (${child.exitCode ?? child.signalCode}) ${((exitedAt - closed) / 1000).toFixed(1)} s after its output closed` : 'still runs 90 s after its output closed'}`);
    const left = await noneRemain(run, pids, exitedAt, 30_000);
    assert.ok(gone, 'the launcher exits once nobody reads its output');
    assert.deepEqual(left, [], 'no process of the stack runs');
  });
});
