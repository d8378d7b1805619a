import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { FakeClock } from '@app/clock/testing';
import { CriError } from '@app/cri';
import { RuntimeChangeQueue } from './runtime-change-queue.js';

/** A call that ends when its test says so. */
function pending() {
  const calls: { method: string; deadlineMs: number; end: () => void }[] = [];
  const call = (method: string) => (deadlineMs: number) => new Promise<string>((resolve) => calls.push({ method, deadlineMs, end: () => resolve(method) }));
  return { calls, call };
}

describe('RuntimeChangeQueue: the node\'s bound on runtime changes in flight', () => {
  it('at most `limit` sandbox and container changes run at once; the next starts as one ends, in order', async () => {
    const clock = new FakeClock(0);
    const queue = new RuntimeChangeQueue(2, clock);
    const { calls, call } = pending();
    const done: string[] = [];
    const all = ['RunPodSandbox', 'CreateContainer', 'RunPodSandbox', 'RunPodSandbox'].map((m, i) => queue.run(m, 60_000, call(`${m}#${i}`)).then((r) => void done.push(r)));
    await clock.step(0);
    assert.deepEqual(calls.map((c) => c.method), ['RunPodSandbox#0', 'CreateContainer#1'], 'two in flight');
    assert.equal(queue.waiting, 2);
    calls[1]?.end();
    await clock.step(0);
    assert.deepEqual(calls.map((c) => c.method), ['RunPodSandbox#0', 'CreateContainer#1', 'RunPodSandbox#2'], 'the first queued starts as one ends');
    calls[0]?.end();
    calls[2]?.end();
    await clock.step(0);
    calls[3]?.end();
    await Promise.all(all);
    assert.deepEqual(done, ['CreateContainer#1', 'RunPodSandbox#0', 'RunPodSandbox#2', 'RunPodSandbox#3']);
    assert.equal(queue.waiting, 0);
  });

  it('reads, pulls, exec and the teardown are never queued', async () => {
    const queue = new RuntimeChangeQueue(1, new FakeClock(0));
    const { calls, call } = pending();
    void queue.run('RunPodSandbox', 60_000, call('RunPodSandbox'));
    const others = ['ListContainers', 'PodSandboxStatus', 'PullImage', 'ExecSync', 'StopContainer', 'StopPodSandbox', 'RemovePodSandbox', 'RemoveContainer'];
    for (const m of others) void queue.run(m, 60_000, call(m));
    await Promise.resolve();
    assert.deepEqual(calls.map((c) => c.method), ['RunPodSandbox', ...others]);
  });

  it('a begun pod\'s next step goes first (start before create), a new sandbox last: a pod that has begun finishes before the next begins', async () => {
    const clock = new FakeClock(0);
    const queue = new RuntimeChangeQueue(1, clock);
    const { calls, call } = pending();
    void queue.run('RunPodSandbox', 60_000, call('RunPodSandbox a'));
    void queue.run('RunPodSandbox', 60_000, call('RunPodSandbox b'));
    void queue.run('CreateContainer', 60_000, call('CreateContainer c'));
    void queue.run('StartContainer', 60_000, call('StartContainer d'));
    void queue.run('RunPodSandbox', 60_000, call('RunPodSandbox e'));
    void queue.run('StartContainer', 60_000, call('StartContainer h'));
    await clock.step(0);
    for (let i = 0; i < 5; i++) {
      calls[i]?.end();
      await clock.step(0);
    }
    assert.deepEqual(calls.map((c) => c.method), ['RunPodSandbox a', 'StartContainer d', 'StartContainer h', 'CreateContainer c', 'RunPodSandbox b', 'RunPodSandbox e']);
  });

  it('the wait counts against the deadline: the call gets what is left, and one still queued at its deadline fails DeadlineExceeded, naming the bound; its slot is not lost', async () => {
    const clock = new FakeClock(0);
    const queue = new RuntimeChangeQueue(1, clock);
    const { calls, call } = pending();
    void queue.run('RunPodSandbox', 60_000, call('first'));
    const late = assert.rejects(queue.run('CreateContainer', 5_000, call('late')), (err: unknown) => err instanceof CriError && err.code === 'DeadlineExceeded' && /CreateContainer: deadline of 5000 ms passed while waiting for one of the 1 runtime changes in flight \(RUNTIME_CHANGE_CONCURRENCY\)/.test(err.message));
    const later = queue.run('StartContainer', 60_000, call('later'));
    await clock.step(5_000);
    await late;
    await clock.step(1_000);
    calls[0]?.end();
    await clock.step(0);
    assert.deepEqual(calls.map((c) => [c.method, c.deadlineMs]), [['first', 60_000], ['later', 54_000]], 'the next waiter runs, with its deadline less its 6 s wait');
    calls[1]?.end();
    assert.equal(await later, 'later');
    void queue.run('RunPodSandbox', 60_000, call('after'));
    await clock.step(0);
    assert.equal(calls.at(-1)?.method, 'after', 'the slot came back');
  });

  it('a limit of 0 queues nothing', async () => {
    const queue = new RuntimeChangeQueue(0, new FakeClock(0));
    const { calls, call } = pending();
    for (let i = 0; i < 10; i++) void queue.run('RunPodSandbox', 60_000, call(`p${i}`));
    await Promise.resolve();
    assert.equal(calls.length, 10);
  });
});
