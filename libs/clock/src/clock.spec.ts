import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { FakeClock } from './testing.js';

describe('FakeClock', () => {
  it('fires timers in order as time steps, and not before', async () => {
    const clock = new FakeClock(0);
    const fired: string[] = [];
    clock.setTimer(200, () => fired.push('b'));
    clock.setTimer(100, () => fired.push('a'));
    await clock.step(99);
    assert.deepEqual(fired, []);
    await clock.step(1);
    assert.deepEqual(fired, ['a']);
    await clock.step(100);
    assert.deepEqual(fired, ['a', 'b']);
    assert.equal(clock.now(), 200);
  });

  it('cancelled timers do not fire', async () => {
    const clock = new FakeClock(0);
    let fired = false;
    clock.setTimer(10, () => (fired = true)).cancel();
    await clock.step(20);
    assert.equal(fired, false);
  });

  it('sleep resolves after the time passes, and async chains continue inside one step', async () => {
    const clock = new FakeClock(0);
    const log: number[] = [];
    const loop = (async () => {
      for (let i = 0; i < 3; i++) {
        await clock.sleep(1000);
        log.push(clock.now());
      }
    })();
    await clock.step(3000);
    await loop;
    assert.deepEqual(log, [1000, 2000, 3000]);
  });

  it('sleep rejects when aborted', async () => {
    const clock = new FakeClock(0);
    const ac = new AbortController();
    const p = clock.sleep(1000, ac.signal);
    ac.abort();
    await assert.rejects(p, { name: 'AbortError' });
  });
});
