import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { FakeClock } from '@app/clock/testing';
import { silentLogger } from '@app/observability';
import { repairStatuses } from './status-repair.js';
import { FakePodResync } from './testing.js';

describe('repairStatuses: a new leader asks for every pod to be synced now', () => {
  const cases = [
    { name: 'the leading sync loop answers at once', answers: [{ leading: true, pods: 3 }], want: 3, asks: 1 },
    { name: 'a standby sync loop answers first: asked again a second later, the leader answers', answers: [{ leading: false, pods: 0 }, { leading: true, pods: 2 }], want: 2, asks: 2 },
    { name: 'no sync loop answers (none runs): asked every second, then left to the resync', answers: [undefined], want: undefined, asks: 5 },
  ];
  for (const tc of cases) {
    it(tc.name, async () => {
      const clock = new FakeClock();
      const resync = new FakePodResync();
      resync.answers = [...tc.answers];
      const done = repairStatuses({ resync, clock, logger: silentLogger(), isLeader: () => true, reason: 'status-manager@n#0 started leading', attempts: 5 });
      for (let i = 0; i < 10; i++) await clock.step(1000);
      assert.equal(await done, tc.want);
      assert.equal(resync.asked.length, tc.asks);
      assert.equal(resync.asked[0], 'status-manager@n#0 started leading');
    });
  }

  it('stops asking once the term ended', async () => {
    const clock = new FakeClock();
    const resync = new FakePodResync();
    resync.answers = [undefined];
    let leading = true;
    const done = repairStatuses({ resync, clock, logger: silentLogger(), isLeader: () => leading, reason: 'r' });
    await clock.step(1000);
    leading = false;
    await clock.step(1000);
    assert.equal(await done, undefined);
    assert.equal(resync.asked.length, 2);
  });
});
