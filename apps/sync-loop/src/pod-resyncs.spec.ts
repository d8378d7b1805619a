import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { FakeClock } from '@app/clock/testing';
import { PodResyncs, RECENT_RESYNC_MS } from './pod-resyncs.js';

/** The runner as the requests meet it: each resync waits until the test lets the runner's chain through (`drain`). */
function setup() {
  const clock = new FakeClock(0);
  const state = { leading: true, pods: 7 };
  const waiting: (() => void)[] = [];
  let ran = 0;
  const resyncs = new PodResyncs({
    clock,
    resync: () =>
      new Promise<number | undefined>((resolve) =>
        waiting.push(() => {
          if (!state.leading) return resolve(undefined);
          ran++;
          resolve(state.pods);
        }),
      ),
  });
  const drain = async () => {
    for (const run of waiting.splice(0)) run();
    await clock.step(0);
  };
  return { clock, state, resyncs, drain, ran: () => ran };
}

describe('PodResyncs: podResync requests coalesced', () => {
  it('the status manager asking again (30 tries, 2 s apart) while a resync is queued behind a slow step: one resync, every request answered by it', async () => {
    const { clock, resyncs, drain, ran } = setup();
    const answers = [];
    for (let i = 0; i < 30; i++) {
      answers.push(resyncs.request());
      await clock.step(2000);
    }
    await drain();
    assert.deepEqual(await Promise.all(answers), Array.from({ length: 30 }, () => 7));
    assert.equal(ran(), 1);
  });

  it('a request within a few seconds of a resync that ran is answered as done; one after that runs again', async () => {
    const { clock, state, resyncs, drain, ran } = setup();
    const first = resyncs.request();
    await drain();
    assert.equal(await first, 7);
    state.pods = 8;
    await clock.step(RECENT_RESYNC_MS - 1);
    assert.equal(await resyncs.request(), 7, 'answered by the resync that just ran');
    assert.equal(ran(), 1);
    await clock.step(1);
    const again = resyncs.request();
    await drain();
    assert.equal(await again, 8);
    assert.equal(ran(), 2);
  });

  it('a resync that did not run (not leading) answers undefined and is not remembered: the next request runs one', async () => {
    const { state, resyncs, drain, ran } = setup();
    state.leading = false;
    const first = resyncs.request();
    await drain();
    assert.equal(await first, undefined);
    state.leading = true;
    const second = resyncs.request();
    await drain();
    assert.equal(await second, 7);
    assert.equal(ran(), 1);
  });
});
