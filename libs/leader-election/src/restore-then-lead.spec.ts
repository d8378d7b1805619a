import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { FakeClock } from '@app/clock/testing';
import { RESTORE_RETRY_MS, restoreThenLead, type RestoreFailurePolicy } from './restore-then-lead.js';

interface Case {
  name: string;
  ifRestoreFails: RestoreFailurePolicy;
  retryMs?: number;
  /** What each restore attempt does, in order; attempts past the end load. */
  attempts: ('loads' | 'fails' | 'loses leadership')[];
  /** Leadership lost this long after the term began (a step-down timer). */
  lostAtMs?: number;
  /** When each restore was tried, ms after the term began. */
  triedAt: number[];
  /** When lead ran; undefined: it never did. */
  ledAt?: number;
  errors: number;
}

const cases: Case[] = [
  { name: 'restored at once: leads at once', ifRestoreFails: 'retry', attempts: ['loads'], triedAt: [0], ledAt: 0, errors: 0 },
  {
    name: 'retry: a restore that fails is tried again each second until it loads, then leads',
    ifRestoreFails: 'retry',
    attempts: ['fails', 'fails', 'loads'],
    triedAt: [0, RESTORE_RETRY_MS, 2 * RESTORE_RETRY_MS],
    ledAt: 2 * RESTORE_RETRY_MS,
    errors: 2,
  },
  { name: 'retry: the wait is retryMs when given', ifRestoreFails: 'retry', retryMs: 250, attempts: ['fails', 'loads'], triedAt: [0, 250], ledAt: 250, errors: 1 },
  { name: 'retry: leadership lost while waiting: no more attempts, no lead', ifRestoreFails: 'retry', attempts: ['fails', 'fails', 'fails'], lostAtMs: 1500, triedAt: [0, 1000], errors: 2 },
  { name: 'retry: leadership lost during the restore that loads: no lead', ifRestoreFails: 'retry', attempts: ['loses leadership'], triedAt: [0], errors: 0 },
  { name: 'lead-without: a restore that fails is not tried again: leads at once without it', ifRestoreFails: 'lead-without', attempts: ['fails'], triedAt: [0], ledAt: 0, errors: 1 },
  { name: 'lead-without: leadership lost during the restore: no lead', ifRestoreFails: 'lead-without', attempts: ['loses leadership'], triedAt: [0], errors: 0 },
];

describe('restoreThenLead', () => {
  for (const tc of cases) {
    it(tc.name, async () => {
      const clock = new FakeClock(0);
      let leading = true;
      if (tc.lostAtMs !== undefined) clock.setTimer(tc.lostAtMs, () => (leading = false));
      const triedAt: number[] = [];
      const errors: Error[] = [];
      let ledAt: number | undefined;
      const done = restoreThenLead({
        clock,
        isLeader: () => leading,
        ifRestoreFails: tc.ifRestoreFails,
        ...(tc.retryMs !== undefined ? { retryMs: tc.retryMs } : {}),
        restore: () => {
          const what = tc.attempts[triedAt.length] ?? 'loads';
          triedAt.push(clock.now());
          if (what === 'fails') return Promise.reject(new Error('pod-status: no responders'));
          if (what === 'loses leadership') leading = false;
          return Promise.resolve();
        },
        onRestoreError: (err) => errors.push(err),
        lead: () => void (ledAt = clock.now()),
      });
      await clock.step(10_000);
      assert.equal(await done, tc.ledAt !== undefined);
      assert.deepEqual(triedAt, tc.triedAt);
      assert.equal(ledAt, tc.ledAt);
      assert.equal(errors.length, tc.errors);
      assert.ok(errors.every((e) => e.message === 'pod-status: no responders'));
      assert.equal(clock.waiting, 0, 'nothing left waiting');
    });
  }

  it('a rejection that is not an Error is reported as one', async () => {
    const errors: Error[] = [];
    const led = await restoreThenLead({
      clock: new FakeClock(0),
      isLeader: () => true,
      ifRestoreFails: 'lead-without',
      // eslint-disable-next-line @typescript-eslint/prefer-promise-reject-errors -- the case under test
      restore: () => Promise.reject('bucket gone'),
      onRestoreError: (err) => errors.push(err),
      lead: () => undefined,
    });
    assert.equal(led, true);
    assert.deepEqual(errors.map((e) => e.message), ['bucket gone']);
  });

  it('a lead that fails is passed on', async () => {
    await assert.rejects(
      restoreThenLead({ clock: new FakeClock(0), isLeader: () => true, ifRestoreFails: 'retry', restore: () => Promise.resolve(), lead: () => Promise.reject(new Error('replay failed')) }),
      { message: 'replay failed' },
    );
  });
});
