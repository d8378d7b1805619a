/**
 * terminationOrdering (kuberuntime_termination_order_test.go): who waits for
 * whom when a pod with sidecars is killed, and for how long at most. The
 * fake clock drives the grace periods.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { FakeClock } from '@app/clock/testing';
import type { Container, Pod } from '@app/contracts';
import { TerminationOrdering } from './termination-order.js';

const c = (name: string, sidecar = false): Container => ({ name, image: 'busybox', ...(sidecar ? { restartPolicy: 'Always' as const } : {}) });
const pod = (inits: Container[], containers: Container[]): Pod => ({ metadata: { name: 'p', uid: 'u' }, spec: { initContainers: inits, containers } });

/** Whether `p` settled after the microtasks ran. */
async function settled(p: Promise<unknown>): Promise<boolean> {
  let done = false;
  void p.then(() => (done = true));
  for (let i = 0; i < 5; i++) await new Promise<void>((r) => setImmediate(r));
  return done;
}

describe('TerminationOrdering: who waits for whom', () => {
  const cases: {
    name: string;
    pod: Pod;
    running: string[];
    /** The container whose turn is asked. */
    waits: string;
    /** Terminated one after the other; after each, whether `waits` may go. */
    steps: [string, boolean][];
    /** Whether it may go before anything terminated. */
    atOnce: boolean;
  }[] = [
    { name: 'a main container never waits', pod: pod([c('side', true)], [c('app')]), running: ['side', 'app'], waits: 'app', steps: [], atOnce: true },
    { name: 'a sidecar waits for the main container', pod: pod([c('side', true)], [c('app')]), running: ['side', 'app'], waits: 'side', steps: [['app', true]], atOnce: false },
    {
      name: 'a sidecar waits for every main container',
      pod: pod([c('side', true)], [c('app'), c('web')]),
      running: ['side', 'app', 'web'],
      waits: 'side',
      steps: [
        ['app', false],
        ['web', true],
      ],
      atOnce: false,
    },
    {
      name: 'the first sidecar waits for the later one too (reverse order of declaration)',
      pod: pod([c('side-a', true), c('side-b', true)], [c('app')]),
      running: ['side-a', 'side-b', 'app'],
      waits: 'side-a',
      steps: [
        ['app', false],
        ['side-b', true],
      ],
      atOnce: false,
    },
    {
      name: 'the last sidecar waits only for the main containers',
      pod: pod([c('side-a', true), c('side-b', true)], [c('app')]),
      running: ['side-a', 'side-b', 'app'],
      waits: 'side-b',
      steps: [['app', true]],
      atOnce: false,
    },
    {
      name: 'a classic init container between two sidecars is no link in the chain',
      pod: pod([c('side-a', true), c('setup'), c('side-b', true)], [c('app')]),
      running: ['side-a', 'side-b', 'app'],
      waits: 'side-a',
      steps: [
        ['app', false],
        ['side-b', true],
      ],
      atOnce: false,
    },
    { name: 'containers that are not running are done from the start', pod: pod([c('side-a', true), c('side-b', true)], [c('app')]), running: ['side-a'], waits: 'side-a', steps: [], atOnce: true },
    { name: 'a classic init container never waits', pod: pod([c('setup'), c('side', true)], [c('app')]), running: ['setup', 'side', 'app'], waits: 'setup', steps: [], atOnce: true },
  ];
  for (const tc of cases) {
    it(tc.name, async () => {
      const clock = new FakeClock();
      const ordering = new TerminationOrdering(tc.pod, tc.running, clock);
      const turn = ordering.waitForTurn(tc.waits, 30);
      assert.equal(await settled(turn), tc.atOnce, 'before anything terminated');
      for (const [name, goes] of tc.steps) {
        ordering.containerTerminated(name);
        assert.equal(await settled(turn), goes, `after ${name} terminated`);
      }
      assert.equal(await turn, 0, 'no time passed');
    });
  }
});

describe('TerminationOrdering: the wait is bounded by the grace period left', () => {
  const sidecarPod = pod([c('side', true)], [c('app')]);

  it('a main container that never exits: the sidecar goes when its grace period is up, with the seconds it waited', async () => {
    const clock = new FakeClock();
    const ordering = new TerminationOrdering(sidecarPod, ['side', 'app'], clock);
    const turn = ordering.waitForTurn('side', 10);
    await clock.step(9_999);
    assert.equal(await settled(turn), false, 'still waiting at 9.999s');
    await clock.step(1);
    assert.equal(await turn, 10);
  });

  it('the main container exits after 3.5s: the sidecar waited 3.5s and its timer is cancelled', async () => {
    const clock = new FakeClock();
    const ordering = new TerminationOrdering(sidecarPod, ['side', 'app'], clock);
    const turn = ordering.waitForTurn('side', 10);
    await clock.step(3_500);
    ordering.containerTerminated('app');
    assert.equal(await turn, 3.5);
    assert.equal(clock.waiting, 0, 'no timer left');
  });

  it('no grace period left: no wait at all (waitForTurn with gracePeriod 0)', async () => {
    const clock = new FakeClock();
    const ordering = new TerminationOrdering(sidecarPod, ['side', 'app'], clock);
    assert.equal(await ordering.waitForTurn('side', 0), 0);
  });

  it('a container terminated twice, or one the pod does not have: nothing happens', async () => {
    const clock = new FakeClock();
    const ordering = new TerminationOrdering(sidecarPod, ['side', 'app'], clock);
    ordering.containerTerminated('app');
    ordering.containerTerminated('app');
    ordering.containerTerminated('nobody');
    assert.equal(await ordering.waitForTurn('side', 5), 0);
  });
});
