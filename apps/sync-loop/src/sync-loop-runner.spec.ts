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
