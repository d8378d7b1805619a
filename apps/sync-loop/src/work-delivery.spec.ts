import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { FakeClock } from '@app/clock/testing';
import { NotLeaderError } from '@app/leader-election';
import { silentLogger } from '@app/observability';
import { WorkDelivery, type WorkDeliveryOptions } from './work-delivery.js';

const OPTIONS: WorkDeliveryOptions = { retryMs: 100, maxRetryMs: 400, giveUpAfterMs: 5000, maxQueued: 3 };

/**
 * A shard's owner as the sync loop meets it: `owner` says whether one
 * answers now; `sends` records each try as `<pod>:<what>@<ms since start>`.
 */
function setup(options = OPTIONS) {
  const clock = new FakeClock(0);
  const counts = { retried: 0, dropped: [] as string[] };
  const delivery = new WorkDelivery({ clock, logger: silentLogger(), options, metrics: { retried: () => void counts.retried++, dropped: (r) => void counts.dropped.push(r) } });
  const state = { owner: false, leader: true };
  const sends: string[] = [];
  const dispatch = (uid: string, what: string) =>
    delivery.deliver(
      uid,
      what,
      () => {
        if (!state.leader) throw new NotLeaderError('dispatch work');
        sends.push(`${uid}:${what}@${clock.now()}`);
        return Promise.resolve(state.owner);
      },
      { kill: what.startsWith('SyncPodKill') },
    );
  return { clock, delivery, state, sends, counts, dispatch };
}

describe('WorkDelivery: dispatchWork sent until the shard\'s owner accepts it', () => {
  it('a dispatch an owner accepts is sent once', async () => {
    const { clock, state, sends, dispatch, delivery } = setup();
    state.owner = true;
    dispatch('a', 'SyncPodCreate');
    await clock.step(10_000);
    assert.deepEqual(sends, ['a:SyncPodCreate@0']);
    assert.equal(delivery.pending, 0);
  });

  it('one no owner accepts (the shard changing hands) is sent again, the wait doubling up to maxRetryMs, until an owner accepts it', async () => {
    const { clock, state, sends, dispatch, counts, delivery } = setup();
    dispatch('a', 'SyncPodCreate');
    await clock.step(1100);
    state.owner = true; // the new owner took the shard
    await clock.step(1000);
    assert.deepEqual(sends, ['a:SyncPodCreate@0', 'a:SyncPodCreate@100', 'a:SyncPodCreate@300', 'a:SyncPodCreate@700', 'a:SyncPodCreate@1100', 'a:SyncPodCreate@1500']);
    assert.equal(counts.retried, 5);
    assert.equal(delivery.pending, 0);
  });

  it('a pod\'s dispatches go out in order: the next waits until the one before was accepted; other pods do not wait', async () => {
    const { clock, state, sends, dispatch } = setup();
    dispatch('a', 'SyncPodUpdate');
    await clock.step(50);
    dispatch('a', 'SyncPodKill');
    state.owner = true;
    dispatch('b', 'SyncPodCreate');
    await clock.step(1000);
    assert.deepEqual(sends, ['a:SyncPodUpdate@0', 'b:SyncPodCreate@50', 'a:SyncPodUpdate@100', 'a:SyncPodKill@100']);
  });

  it('one never accepted is given up after giveUpAfterMs (left to the shard owner\'s reconciliation), and the pod\'s next is tried', async () => {
    const { clock, state, sends, dispatch, counts, delivery } = setup({ ...OPTIONS, giveUpAfterMs: 1000 });
    dispatch('a', 'SyncPodSync');
    await clock.step(900);
    dispatch('a', 'SyncPodKill');
    await clock.step(400);
    assert.deepEqual(counts.dropped, ['expired']);
    state.owner = true;
    await clock.step(1000);
    assert.equal(sends.at(-1)?.startsWith('a:SyncPodKill@'), true, `the kill went out: ${sends.join(', ')}`);
    assert.equal(delivery.pending, 0);
  });

  it('past maxQueued waiting for one pod, the oldest waiting one (not the one being sent) is dropped', async () => {
    const { clock, state, sends, dispatch, counts } = setup();
    for (const what of ['1', '2', '3', '4']) dispatch('a', what);
    assert.deepEqual(counts.dropped, ['displaced']);
    state.owner = true;
    await clock.step(1000);
    assert.deepEqual(sends.map((s) => s.split('@')[0]), ['a:1', 'a:1', 'a:3', 'a:4']);
  });

  const neverDropKill: { name: string; dispatched: string[]; sent: string[]; dropped: number }[] = [
    { name: 'a kill waiting oldest: the oldest sync behind it is dropped instead', dispatched: ['1', 'SyncPodKill(grace 0)', '3', '4'], sent: ['1', '1', 'SyncPodKill(grace 0)', '4'], dropped: 1 },
    { name: 'syncs pushed behind a waiting kill keep pushing out syncs, never the kill', dispatched: ['1', 'SyncPodKill(grace 0)', '3', '4', '5', '6'], sent: ['1', '1', 'SyncPodKill(grace 0)', '6'], dropped: 3 },
    { name: 'only kills waiting: none is dropped, the sync that came is', dispatched: ['1', 'SyncPodKill(grace 0)', 'SyncPodKill', '4'], sent: ['1', '1', 'SyncPodKill(grace 0)', 'SyncPodKill'], dropped: 1 },
    { name: 'only kills: all are kept past maxQueued', dispatched: ['1', 'SyncPodKill(a)', 'SyncPodKill(b)', 'SyncPodKill(c)'], sent: ['1', '1', 'SyncPodKill(a)', 'SyncPodKill(b)', 'SyncPodKill(c)'], dropped: 0 },
  ];
  for (const tc of neverDropKill) {
    it(`past maxQueued, a kill is never dropped: ${tc.name}`, async () => {
      const { clock, state, sends, dispatch, counts } = setup();
      for (const what of tc.dispatched) dispatch('a', what);
      assert.equal(counts.dropped.length, tc.dropped);
      state.owner = true;
      await clock.step(1000);
      assert.deepEqual(sends.map((s) => s.split('@')[0]?.slice(2)), tc.sent);
    });
  }

  it('a replica that is no longer the leader sends nothing more of the pod\'s', async () => {
    const { clock, state, sends, dispatch, counts, delivery } = setup();
    dispatch('a', 'SyncPodSync');
    dispatch('a', 'SyncPodKill');
    state.leader = false;
    await clock.step(1000);
    assert.deepEqual(sends, ['a:SyncPodSync@0']);
    assert.deepEqual(counts.dropped, ['not-leader', 'not-leader']);
    assert.equal(delivery.pending, 0);
  });

  it('stop drops what waits and sends nothing more', async () => {
    const { clock, sends, dispatch, delivery } = setup();
    dispatch('a', 'SyncPodSync');
    delivery.stop();
    dispatch('b', 'SyncPodSync');
    await clock.step(1000);
    assert.deepEqual(sends, ['a:SyncPodSync@0']);
    assert.equal(clock.waiting, 0);
  });
});
