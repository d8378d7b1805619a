import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { FakeClock } from '@app/clock/testing';
import { LeaderGate, TakeoverReplay, replayKey } from './takeover-replay.js';

describe('TakeoverReplay', () => {
  it('replays the latest call per key within the window, in the order they came', async () => {
    const clock = new FakeClock();
    const replay = new TakeoverReplay(clock, 10_000);
    const applied: string[] = [];
    const call = (what: string) => () => Promise.resolve(void applied.push(what));
    replay.remember('status/a', call('a: Pending'));
    await clock.step(2000);
    replay.remember('status/b', call('b: Running'));
    replay.remember('readiness/a/c1', call('a/c1 ready'));
    replay.remember('status/a', call('a: Running'));
    for (const apply of replay.take()) await apply();
    assert.deepEqual(applied, ['b: Running', 'a/c1 ready', 'a: Running']);
    assert.deepEqual(replay.take(), [], 'taken once');
  });

  it('forgets what is older than the window: a live leader handled it', async () => {
    const clock = new FakeClock();
    const replay = new TakeoverReplay(clock, 10_000);
    const applied: string[] = [];
    replay.remember('status/old', () => Promise.resolve(void applied.push('old')));
    await clock.step(8000);
    replay.remember('status/new', () => Promise.resolve(void applied.push('new')));
    await clock.step(3000);
    for (const apply of replay.take()) await apply();
    assert.deepEqual(applied, ['new']);
  });

  it('keeps a pod\'s final SetPodStatus and its TerminatePod, in that order: the terminated status starts from the final one', async () => {
    const clock = new FakeClock();
    const replay = new TakeoverReplay(clock, 10_000);
    const applied: string[] = [];
    const call = (what: string) => () => Promise.resolve(void applied.push(what));
    replay.remember(replayKey('SetPodStatus', 'a', undefined), call('a: Running'));
    replay.remember(replayKey('SetPodStatus', 'a', undefined), call('a: final, exit 0'));
    replay.remember(replayKey('TerminatePod', 'a', undefined), call('a: terminate'));
    replay.remember(replayKey('SetContainerReadiness', 'a', 'c1'), call('a/c1 not ready'));
    for (const apply of replay.take()) await apply();
    assert.deepEqual(applied, ['a: final, exit 0', 'a: terminate', 'a/c1 not ready']);
  });

  it('holds one call per key however long a standby listens', async () => {
    const clock = new FakeClock();
    const replay = new TakeoverReplay(clock, 10_000);
    for (let i = 0; i < 1000; i++) {
      replay.remember(`status/${i % 10}`, () => Promise.resolve());
      await clock.step(100);
    }
    assert.equal(replay.size, 10);
  });
});

describe('LeaderGate', () => {
  it('a standby remembers; on opening, what it heard runs first, then what comes next', async () => {
    const clock = new FakeClock();
    const gate = new LeaderGate(new TakeoverReplay(clock, 10_000));
    const applied: string[] = [];
    const call = (what: string) => () => Promise.resolve(applied.push(what));
    assert.equal(await gate.offer('status/a', call('heard')), undefined);
    assert.deepEqual(applied, []);
    assert.equal(gate.remembered, 1);
    const replayed = gate.open();
    const next = gate.offer('status/a', call('next'));
    await Promise.all([...replayed, next]);
    assert.deepEqual(applied, ['heard', 'next']);
    gate.close();
    await gate.offer('status/b', call('dropped for now'));
    assert.deepEqual(applied, ['heard', 'next']);
  });
});
