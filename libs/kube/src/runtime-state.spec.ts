import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { FakeClock } from '@app/clock/testing';
import type { PodCacheGlobal } from '@app/contracts';
import { silentLogger } from '@app/observability';
import { RuntimeState, RuntimeStateUpdater, plegHealth } from './runtime-state.js';
import { FakeNodeHealth } from './testing.js';

const T0 = 1_000_000;

function setup() {
  const clock = new FakeClock(T0);
  const health = new FakeNodeHealth();
  health.pleg = { timestamp: T0, relistThresholdMs: 180_000 };
  const updater = new RuntimeStateUpdater(new RuntimeState(clock), health, clock, silentLogger());
  return { clock, health, updater, state: updater.state };
}

describe('RuntimeState (runtime_state.go) fed by updateRuntimeUp', () => {
  it('before the first Status answer the runtime is not known to be up', () => {
    const { state } = setup();
    assert.match(state.runtimeErrors() ?? '', /container runtime status check may not have completed yet/);
  });

  it('healthy after a good answer; a failed Status call stops nothing until the last good answer is 30s old', async () => {
    const { clock, health, state, updater } = setup();
    await updater.update();
    assert.equal(state.runtimeErrors(), undefined);
    health.runtimeDown = true;
    await clock.step(20_000);
    health.pleg = { timestamp: clock.now(), relistThresholdMs: 180_000 };
    await updater.update();
    assert.equal(state.runtimeErrors(), undefined, 'a blip is not an outage');
    await clock.step(10_000);
    assert.match(state.runtimeErrors() ?? '', /container runtime is down/);
    health.runtimeDown = false;
    health.pleg = { timestamp: clock.now(), relistThresholdMs: 180_000 };
    await updater.update();
    assert.equal(state.runtimeErrors(), undefined);
  });

  const conditions: { name: string; runtimeReady?: boolean; networkReady?: boolean; runtimeErr?: RegExp; networkErr?: RegExp }[] = [
    { name: 'RuntimeReady false: the runtime is not ready', runtimeReady: false, networkReady: true, runtimeErr: /container runtime not ready: RuntimeReady=false reason:Broken message:it is/ },
    { name: 'RuntimeReady missing: the runtime is not ready', networkReady: true, runtimeErr: /container runtime not ready: RuntimeReady missing/ },
    { name: 'NetworkReady false: only the network is not ready', runtimeReady: true, networkReady: false, networkErr: /container runtime network not ready: NetworkReady=false reason:Broken message:it is/ },
    { name: 'both ready: nothing wrong', runtimeReady: true, networkReady: true },
  ];
  for (const tc of conditions) {
    it(tc.name, async () => {
      const { health, state, updater } = setup();
      const cond = (type: string, status: boolean | undefined) => (status === undefined ? [] : [{ type, status, reason: status ? '' : 'Broken', message: status ? '' : 'it is' }]);
      health.status = { status: { conditions: [...cond('RuntimeReady', tc.runtimeReady), ...cond('NetworkReady', tc.networkReady)] }, info: {}, runtimeHandlers: [] };
      await updater.update();
      if (tc.runtimeErr) assert.match(state.runtimeErrors() ?? '', tc.runtimeErr);
      else assert.equal(state.runtimeErrors(), undefined);
      if (tc.networkErr) assert.match(state.networkErrors() ?? '', tc.networkErr);
      else assert.equal(state.networkErrors(), undefined);
    });
  }

  it('the PLEG\'s health is a check of its own: unhealthy once its last relist is older than the threshold it wrote', async () => {
    const { clock, state, updater } = setup();
    await updater.update();
    await clock.step(170_000);
    await updater.update(); // the runtime answers; the PLEG has not relisted since T0
    assert.equal(state.runtimeErrors(), undefined);
    await clock.step(10_001);
    await updater.update();
    assert.match(state.runtimeErrors() ?? '', /PLEG is not healthy: pleg was last seen active 180s ago; threshold is 180s/);
  });
});

describe("RuntimeState: the runtime's handlers and features (updateRuntimeUp's setRuntimeHandlers, setRuntimeFeatures)", () => {
  it('containerd 2: its handlers with their features, and SupplementalGroupsPolicy, once it answers ready', async () => {
    const { health, state, updater } = setup();
    health.status = { ...health.status, runtimeHandlers: [{ name: '', features: { recursiveReadOnlyMounts: true, userNamespaces: true } }, { name: 'runc' }], features: { supplementalGroupsPolicy: true } };
    assert.equal(state.runtimeFeatures(), undefined, 'nothing known before the first answer');
    await updater.update();
    assert.deepEqual(state.runtimeHandlers(), [
      { name: '', recursiveReadOnlyMounts: true, userNamespaces: true },
      { name: 'runc', recursiveReadOnlyMounts: false, userNamespaces: false },
    ]);
    assert.deepEqual(state.runtimeFeatures(), { supplementalGroupsPolicy: true });
  });

  it('containerd 1.6: no handlers, no features', async () => {
    const { state, updater } = setup();
    await updater.update();
    assert.deepEqual(state.runtimeHandlers(), []);
    assert.equal(state.runtimeFeatures(), undefined);
  });

  it('a runtime that answers not ready changes neither (upstream sets them only on a ready answer)', async () => {
    const { health, state, updater } = setup();
    health.status = { ...health.status, features: { supplementalGroupsPolicy: true } };
    await updater.update();
    health.status = { status: { conditions: [{ type: 'RuntimeReady', status: false, reason: 'Starting', message: '' }] }, info: {}, runtimeHandlers: [] };
    await updater.update();
    assert.deepEqual(state.runtimeFeatures(), { supplementalGroupsPolicy: true });
  });
});

describe('RuntimeStateUpdater timing', () => {
  it('updates at start, every second while unhealthy (so the gate opens soon after the PLEG\'s first relist), every 5s once healthy', async () => {
    const { clock, health, updater, state } = setup();
    health.pleg = undefined; // the PLEG has not relisted yet
    updater.start();
    await clock.step(0);
    assert.match(state.runtimeErrors() ?? '', /pleg has yet to be successful/);
    health.pleg = { timestamp: clock.now(), relistThresholdMs: 180_000 };
    await clock.step(1000);
    assert.equal(state.runtimeErrors(), undefined, 'healthy one second later');
    health.runtimeDown = true;
    let calls = 0;
    const status = health.runtimeStatus.bind(health);
    health.runtimeStatus = () => (calls++, status());
    await clock.step(5000);
    assert.equal(calls, 1, 'every 5s while healthy');
    updater.stop();
  });
});

describe('plegHealth (pleg/generic.go Healthy)', () => {
  const cases: { name: string; global?: PodCacheGlobal; now: number; want?: RegExp }[] = [
    { name: 'no relist yet', now: T0, want: /pleg has yet to be successful/ },
    { name: 'a recent relist', global: { timestamp: T0 - 1000, relistThresholdMs: 180_000 }, now: T0 },
    { name: 'older than its threshold', global: { timestamp: T0 - 200_000, relistThresholdMs: 180_000 }, now: T0, want: /last seen active 200s ago; threshold is 180s/ },
    { name: 'evented: 5 minutes old is within its 10-minute threshold', global: { timestamp: T0 - 300_000, relistThresholdMs: 600_000 }, now: T0 },
    { name: 'no threshold written: 3 minutes', global: { timestamp: T0 - 181_000 }, now: T0, want: /threshold is 180s/ },
    { name: 'evented, heartbeating: a 5-minute-old relist and a recent sign of life', global: { timestamp: T0 - 300_000, relistThresholdMs: 600_000, aliveAt: T0 - 2000, aliveThresholdMs: 5000 }, now: T0 },
    {
      name: 'evented, the PLEG stopped: its sign of life older than RELIST_THRESHOLD, however recent the relist',
      global: { timestamp: T0 - 8000, relistThresholdMs: 600_000, aliveAt: T0 - 8000, aliveThresholdMs: 5000 },
      now: T0,
      want: /last seen active 8s ago; threshold is 5s/,
    },
    { name: 'alive but the relist past its threshold (evented relists keep failing)', global: { timestamp: T0 - 700_000, relistThresholdMs: 600_000, aliveAt: T0 - 1000, aliveThresholdMs: 180_000 }, now: T0, want: /700s ago; threshold is 600s/ },
  ];
  for (const tc of cases) {
    it(tc.name, () => {
      const got = plegHealth(tc.global, tc.now);
      if (tc.want) assert.match(got ?? '', tc.want);
      else assert.equal(got, undefined);
    });
  }
});
