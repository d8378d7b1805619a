import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { FakeClock } from '@app/clock/testing';
import { silentLogger } from '@app/observability';
import { SyncLoopRunner } from './sync-loop-runner.js';
import type { SyncLoop } from './sync-loop.js';

describe('SyncLoopRunner: syncLoop\'s gate (kubelet.go syncLoop, runtimeState.runtimeErrors)', () => {
  it('while the runtime or the PLEG is unhealthy the ticks are skipped, backing off 100ms doubling to 5s; messages and ungated ticks are still handled; the ticks resume when healthy', async () => {
    const clock = new FakeClock(0);
    const runner = new SyncLoopRunner({} as SyncLoop, clock, silentLogger());
    runner.activate(); // the leader
    let unhealthy: string | undefined = 'container runtime is down';
    runner.tickGate = () => unhealthy;
    const ticks: number[] = [];
    const asked: number[] = [];
    const gate = runner.tickGate;
    runner.tickGate = () => (asked.push(clock.now()), gate());
    runner.every('syncCh', 1000, () => Promise.resolve(void ticks.push(clock.now())), { gated: true });
    const reconciles: number[] = [];
    runner.every('reconcileWithSources', 1000, () => Promise.resolve(void reconciles.push(clock.now())));

    await clock.step(1000 + 100 + 200 + 400 + 800 + 1600 + 3200 + 5000 + 5000);
    assert.deepEqual(ticks, [], 'no tick while unhealthy');
    assert.ok(reconciles.length >= 15, 'an ungated tick (the reconciliation with the sources) still runs');
    assert.deepEqual(asked, [1000, 1100, 1300, 1700, 2500, 4100, 7300, 12_300, 17_300], 'the gate is asked again after 100ms, 200ms, ... at most 5s');

    let handled = false;
    await runner.run('configCh', () => void (handled = true));
    assert.ok(handled, 'a config message is handled while the ticks wait');

    unhealthy = undefined;
    await clock.step(5000);
    assert.deepEqual(ticks, [22_300], 'the tick runs once healthy');
    await clock.step(1000);
    assert.deepEqual(ticks, [22_300, 23_300], 'and every period again');
    await runner.stop();
  });
});

function setup() {
  const clock = new FakeClock();
  const runner = new SyncLoopRunner({} as SyncLoop, clock, silentLogger());
  const ran: string[] = [];
  const step = (what: string) => () => void ran.push(what);
  return { clock, runner, ran, step };
}

describe('SyncLoopRunner: only the leader acts', () => {
  it('a standby drops what it is given; once leading, handlers run one at a time in order', async () => {
    const { runner, ran, step } = setup();
    await runner.run('configCh', step('dropped'));
    assert.deepEqual(ran, []);
    assert.equal(runner.isActive, false);
    runner.activate();
    await Promise.all([runner.run('restore', step('restore')), runner.run('configCh', step('add'))]);
    assert.deepEqual(ran, ['restore', 'add']);
  });

  it('ticks run while leading and stop at once when leadership is lost; what was queued is not run', async () => {
    const { clock, runner, ran, step } = setup();
    runner.activate();
    runner.every('syncCh', 1000, () => Promise.resolve(step('tick')()));
    await clock.step(3000);
    assert.deepEqual(ran, ['tick', 'tick', 'tick']);
    let release!: () => void;
    void runner.run('slow', () => new Promise<void>((r) => (release = r)));
    const queued = runner.run('configCh', step('queued'));
    await clock.step(0); // the slow step is running, the other waits behind it
    runner.deactivate();
    release();
    await queued;
    await clock.step(5000);
    assert.deepEqual(ran, ['tick', 'tick', 'tick']);
    assert.equal(clock.waiting, 0, 'no timer left');
  });

  it('leading again starts the new term\'s ticks only; an earlier term\'s tick in flight does not reschedule itself', async () => {
    const { clock, runner, ran } = setup();
    runner.activate();
    runner.every('syncCh', 1000, () => Promise.resolve(void ran.push('old')));
    runner.deactivate();
    runner.activate();
    runner.every('syncCh', 1000, () => Promise.resolve(void ran.push('new')));
    await clock.step(2000);
    assert.deepEqual(ran, ['new', 'new']);
  });
});

describe('SyncLoopRunner: a tick\'s slow reads off the chain (the eviction manager\'s summary stats)', () => {
  it('while a tick\'s prepare is pending, handlers run; its step then runs on the chain with what prepare read; a failed prepare is no step, and the ticks go on', async () => {
    const { clock, runner, ran, step } = setup();
    runner.activate();
    const reads: ((v: string) => void)[] = [];
    let fail = false;
    runner.every('eviction', 1000, (summary: string) => Promise.resolve(void ran.push(`evict with ${summary}`)), {
      prepare: () => (fail ? Promise.reject(new Error('DeadlineExceeded')) : new Promise<string>((r) => reads.push(r))),
    });
    await clock.step(1000);
    assert.equal(reads.length, 1, 'the tick is reading');
    await runner.run('plegCh', step('pleg event'));
    assert.deepEqual(ran, ['pleg event'], 'a handler does not wait for the read');
    reads[0]?.('summary 1');
    await clock.step(0);
    assert.deepEqual(ran, ['pleg event', 'evict with summary 1']);
    fail = true;
    await clock.step(1000);
    assert.deepEqual(ran, ['pleg event', 'evict with summary 1'], 'no step without its read');
    fail = false;
    await clock.step(1000);
    reads[1]?.('summary 3');
    await clock.step(0);
    assert.deepEqual(ran, ['pleg event', 'evict with summary 1', 'evict with summary 3'], 'the next period reads again');
    await runner.stop();
  });
});
