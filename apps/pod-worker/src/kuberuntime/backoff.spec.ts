import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { Container, Pod } from '@app/contracts';
import { CrashLoopBackOff, formatGoDuration } from './backoff.js';
import { hashContainer } from './container-hash.js';

const S = 1000;
const MIN = 60 * S;
const T0 = 1_700_000_000_000;

const pod: Pod = { metadata: { name: 'web-node1', namespace: 'default', uid: 'uid-1' }, spec: { containers: [] } };
const app: Container = { name: 'app', image: 'localhost/kubelet-split/busybox:1.35', command: ['false'] };
const defaults = () => new CrashLoopBackOff({ initialMs: 10 * S, maxMs: 300 * S });

/**
 * The kubelet's loop for one crashing container: the sync after each exit
 * asks doBackOff (inBackOff with the exit time), and when allowed restarts it
 * (next). Returns the waits between exit and restart.
 */
function crashLoop(b: CrashLoopBackOff, key: string, runMs: number, crashes: number, start = T0): number[] {
  const waits: number[] = [];
  let now = start;
  b.next(key, now); // the first start
  for (let i = 0; i < crashes; i++) {
    const finishedAt = now + runMs;
    now = finishedAt;
    // Syncs every second until the back-off lets the restart through.
    while (b.inBackOff(key, finishedAt, now).backingOff) now += S;
    waits.push(now - finishedAt);
    b.next(key, now, finishedAt);
  }
  return waits;
}

describe('CrashLoopBackOff', () => {
  it('key is GetStableKey: pod name, namespace, uid, container name and spec hash', () => {
    assert.equal(defaults().key(pod, app), `web-node1_default_uid-1_app_${hashContainer(app)}`);
  });

  it('a changed container gets a new key, so its back-off starts afresh', () => {
    const b = defaults();
    assert.notEqual(b.key(pod, app), b.key(pod, { ...app, command: ['true'] }));
  });

  it('delays 10s, 20s, 40s, 80s, 160s, then 300s for good', () => {
    const b = defaults();
    const key = b.key(pod, app);
    const delays: number[] = [];
    for (let i = 0; i < 8; i++) {
      b.next(key, T0 + i * S);
      delays.push(b.delay(key) / S);
    }
    assert.deepEqual(delays, [10, 20, 40, 80, 160, 300, 300, 300]);
  });

  it('the kubelet loop: the first crash restarts at once, then each waits the back-off after its exit', () => {
    const b = defaults();
    assert.deepEqual(
      crashLoop(b, b.key(pod, app), 1 * S, 8).map((w) => w / S),
      [10, 20, 40, 80, 160, 300, 300, 300],
    );
  });

  const checks: { name: string; setup: (b: CrashLoopBackOff, key: string) => void; finishedAt: number; now: number; want: { backingOff: boolean; remainingMs: number; message?: string } }[] = [
    { name: 'no entry: not backing off', setup: () => undefined, finishedAt: T0, now: T0, want: { backingOff: false, remainingMs: 0 } },
    {
      name: 'inside the window: backing off, with what is left and the kubelet message',
      setup: (b, key) => { b.next(key, T0 - 5 * S); b.next(key, T0); },
      finishedAt: T0 + 2 * S,
      now: T0 + 7 * S,
      want: { backingOff: true, remainingMs: 15 * S, message: 'back-off 20s restarting failed container=app pod=web-node1_default(uid-1)' },
    },
    {
      name: 'exactly at the end of the window: allowed (now - finishedAt < delay is strict)',
      setup: (b, key) => b.next(key, T0),
      finishedAt: T0 + 2 * S,
      now: T0 + 12 * S,
      want: { backingOff: false, remainingMs: 0 },
    },
    {
      name: 'the message prints the delay as Go does: 2m40s',
      setup: (b, key) => { for (let i = 0; i < 5; i++) b.next(key, T0); },
      finishedAt: T0 + S,
      now: T0 + 2 * S,
      want: { backingOff: true, remainingMs: 159 * S, message: 'back-off 2m40s restarting failed container=app pod=web-node1_default(uid-1)' },
    },
    {
      name: 'ran 9 minutes since the restart: still backing off',
      setup: (b, key) => { b.next(key, T0 - MIN); b.next(key, T0); },
      finishedAt: T0 + 9 * MIN,
      now: T0 + 9 * MIN + S,
      want: { backingOff: true, remainingMs: 19 * S, message: 'back-off 20s restarting failed container=app pod=web-node1_default(uid-1)' },
    },
    {
      name: 'ran more than 10 minutes since the restart: reset, not backing off',
      setup: (b, key) => { for (let i = 0; i < 6; i++) b.next(key, T0); },
      finishedAt: T0 + 10 * MIN + S,
      now: T0 + 10 * MIN + 2 * S,
      want: { backingOff: false, remainingMs: 0 },
    },
  ];
  for (const tc of checks) {
    it(`inBackOff: ${tc.name}`, () => {
      const b = defaults();
      const key = b.key(pod, app);
      tc.setup(b, key);
      const got = b.inBackOff(key, tc.finishedAt, tc.now);
      assert.deepEqual({ backingOff: got.backingOff, remainingMs: got.remainingMs, message: got.message }, { message: undefined, ...tc.want });
      assert.equal(got.reason, tc.want.backingOff ? 'CrashLoopBackOff' : undefined);
    });
  }

  it('resets after the container ran 10 minutes: the next restart waits 10s again', () => {
    const b = defaults();
    const key = b.key(pod, app);
    crashLoop(b, key, S, 6); // up to 300s
    assert.equal(b.delay(key), 300 * S);
    // Restarted at R, runs 11 minutes, exits.
    const restartedAt = T0 + 3_600 * S;
    b.next(key, restartedAt);
    const finishedAt = restartedAt + 11 * MIN;
    assert.equal(b.inBackOff(key, finishedAt, finishedAt + S).backingOff, false);
    b.next(key, finishedAt + S, finishedAt);
    assert.equal(b.delay(key), 10 * S);
  });

  it('idle time between a short run and the next sync forgives nothing', () => {
    const b = defaults();
    const key = b.key(pod, app);
    b.next(key, T0);
    b.next(key, T0 + S); // 20s armed at T0+1s
    const finishedAt = T0 + 2 * S; // ran 1s
    const now = finishedAt + 60 * MIN; // the next sync is an hour later
    assert.equal(b.inBackOff(key, finishedAt, now).backingOff, false, 'the window has passed');
    b.next(key, now, finishedAt);
    assert.equal(b.delay(key), 40 * S, 'doubled, not reset');
  });

  it('next without an event time judges expiry by now', () => {
    const b = defaults();
    const key = b.key(pod, app);
    b.next(key, T0);
    b.next(key, T0 + 11 * MIN);
    assert.equal(b.delay(key), 10 * S);
  });

  it('reset forgets the key', () => {
    const b = defaults();
    const key = b.key(pod, app);
    b.next(key, T0);
    b.next(key, T0);
    b.reset(key);
    assert.equal(b.delay(key), 0);
    assert.equal(b.inBackOff(key, T0, T0).backingOff, false);
  });

  it('gc drops entries untouched for more than 2*max, keeps the others', () => {
    const b = defaults();
    const old = 'old';
    const fresh = 'fresh';
    b.next(old, T0);
    b.next(fresh, T0 + 5 * MIN);
    b.gc(T0 + 10 * MIN); // exactly 2*max since old: kept
    assert.equal(b.delay(old), 10 * S);
    b.gc(T0 + 10 * MIN + 1);
    assert.equal(b.delay(old), 0);
    assert.equal(b.delay(fresh), 10 * S);
  });

  it('a max below the initial delay lowers the initial delay (KubeletCrashLoopBackOffMax)', () => {
    const b = new CrashLoopBackOff({ initialMs: 10 * S, maxMs: 5 * S });
    b.next('k', T0);
    assert.equal(b.delay('k'), 5 * S);
  });

  it('a configured reset window is honoured', () => {
    const b = new CrashLoopBackOff({ initialMs: S, maxMs: 60 * S, resetAfterMs: 2 * MIN });
    b.next('k', T0);
    b.next('k', T0);
    assert.equal(b.inBackOff('k', T0 + 2 * MIN, T0 + 2 * MIN).backingOff, true);
    assert.equal(b.inBackOff('k', T0 + 2 * MIN + 1, T0 + 2 * MIN + 1).backingOff, false);
  });

  it('inBackOffSinceUpdate measures from the last next (the image-pull check)', () => {
    const b = defaults();
    b.next('img', T0);
    assert.deepEqual(b.inBackOffSinceUpdate('img', T0 + 4 * S), { backingOff: true, remainingMs: 6 * S });
    assert.deepEqual(b.inBackOffSinceUpdate('img', T0 + 10 * S), { backingOff: false, remainingMs: 0 });
  });
});

describe('formatGoDuration', () => {
  const cases: [number, string][] = [
    [0, '0s'],
    [500, '500ms'],
    [1_500, '1.5s'],
    [10 * S, '10s'],
    [80 * S, '1m20s'],
    [300 * S, '5m0s'],
    [3_600 * S, '1h0m0s'],
    [3_725 * S + 250, '1h2m5.25s'],
  ];
  for (const [ms, want] of cases) it(`${ms}ms is ${want}`, () => assert.equal(formatGoDuration(ms), want));
});
