import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { FakeClock } from '@app/clock/testing';
import { silentLogger } from '@app/observability';
import { SyncLoopRunner } from './sync-loop-runner.js';
import type { SyncLoop } from './sync-loop.js';

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
