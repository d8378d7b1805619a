import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { FakeClock } from '@app/clock/testing';
import type { ProbeOutcome } from './probe.js';
import { doTcpProbe } from './tcp.js';
import { FakeTcpDialer } from './testing.js';

describe('doTcpProbe (FakeTcpDialer, FakeClock)', () => {
  const cases: { name: string; host: string; answer: 'connect' | { error: string }; want: ProbeOutcome }[] = [
    { name: 'connected is a success', host: '10.0.0.5', answer: 'connect', want: { result: 'Success', output: '' } },
    { name: 'refused is a failure', host: '10.0.0.5', answer: { error: 'ECONNREFUSED' }, want: { result: 'Failure', output: 'dial tcp 10.0.0.5:8080: connect: connection refused' } },
    { name: 'no route is a failure', host: '10.0.0.5', answer: { error: 'EHOSTUNREACH' }, want: { result: 'Failure', output: 'dial tcp 10.0.0.5:8080: connect: no route to host' } },
    { name: 'an IPv6 host is written in brackets', host: 'fd00::5', answer: { error: 'ECONNREFUSED' }, want: { result: 'Failure', output: 'dial tcp [fd00::5]:8080: connect: connection refused' } },
    { name: 'an unknown name', host: 'nowhere.test', answer: { error: 'ENOTFOUND' }, want: { result: 'Failure', output: 'dial tcp: lookup nowhere.test: no such host' } },
  ];
  for (const tc of cases) {
    it(tc.name, async () => {
      const dialer = new FakeTcpDialer();
      dialer.answers.set(`${tc.host}:8080`, tc.answer);
      assert.deepEqual(await doTcpProbe(dialer, new FakeClock(), tc.host, 8080, 1000), tc.want);
      assert.deepEqual(dialer.dials, [{ host: tc.host, port: 8080 }]);
    });
  }

  it('no answer within the timeout is an i/o timeout, on the clock', async () => {
    const clock = new FakeClock();
    const dialer = new FakeTcpDialer();
    dialer.answers.set('10.0.0.5:8080', 'hang');
    let done: ProbeOutcome | undefined;
    const pending = doTcpProbe(dialer, clock, '10.0.0.5', 8080, 1000).then((o) => (done = o));
    await clock.step(999);
    assert.equal(done, undefined, 'still dialling at 999ms');
    await clock.step(1);
    await pending;
    assert.deepEqual(done, { result: 'Failure', output: 'dial tcp 10.0.0.5:8080: i/o timeout' });
    assert.equal(clock.waiting, 0, 'no timer left behind');
  });
});
