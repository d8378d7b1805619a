import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { MONITORING_SUBJECTS } from './permissions.js';
import { sampleMonitoring, type MonitoringRequester } from './topology.js';

/** A NATS connection that answers the monitoring requests from a table, and records what it was asked. */
function fakeRequester(answers: Record<string, unknown>): MonitoringRequester & { asked: { subject: string; body: unknown }[] } {
  const asked: { subject: string; body: unknown }[] = [];
  return {
    asked,
    request: (subject: string, payload: string) => {
      asked.push({ subject, body: JSON.parse(payload) as unknown });
      if (!(subject in answers)) return Promise.reject(new Error(`no responders: ${subject}`));
      return Promise.resolve({ string: () => JSON.stringify(answers[subject]) });
    },
  };
}

const CONNZ = { now: '2026-12-02T00:00:00Z', connections: [{ cid: 5, name: 'pleg@n1#0', in_msgs: 1, out_msgs: 2, in_bytes: 3, out_bytes: 4, subscriptions_list_detail: [{ subject: 'kubelet.n1.pleg.inspect.*', sid: '1', msgs: 0 }] }] };

describe('sampleMonitoring: NATS monitoring asked over NATS (docs/adr/0029)', () => {
  it("asks the account's connz with the subscriptions' detail, its statz and JetStream info, and unwraps the server's answers", async () => {
    const nc = fakeRequester({
      [MONITORING_SUBJECTS.connz]: { server: { name: 's' }, data: CONNZ },
      [MONITORING_SUBJECTS.statz]: { server: { name: 's' }, data: { account_statz: [{ acc: '$G', num_subscriptions: 7 }] } },
      [MONITORING_SUBJECTS.jetstream]: { type: 'io.nats.jetstream.api.v1.account_info_response', streams: 2, consumers: 3, memory: 10, storage: 90 },
    });
    const s = await sampleMonitoring(nc);
    assert.deepEqual(s.connz.connections.map((c) => c.name), ['pleg@n1#0']);
    assert.deepEqual(s.totals, { subscriptions: 7, streams: 2, consumers: 3, bytes: 100 });
    assert.deepEqual(nc.asked.map((a) => a.subject), [MONITORING_SUBJECTS.connz, MONITORING_SUBJECTS.statz, MONITORING_SUBJECTS.jetstream]);
    assert.deepEqual(nc.asked[0]?.body, { subscriptions_detail: true, auth: true, limit: 10_000 });
  });

  const failures = [
    { name: 'a request the user may not make (or no server answers)', answers: {}, want: /\$SYS\.REQ\.ACCOUNT\.PING\.CONNZ: no responders.*readsMonitoring/ },
    { name: 'an error answer', answers: { [MONITORING_SUBJECTS.connz]: { error: { code: 500, description: 'boom' } } }, want: /CONNZ: boom/ },
  ];
  for (const tc of failures) {
    it(`${tc.name} fails with the subject named`, async () => {
      await assert.rejects(sampleMonitoring(fakeRequester(tc.answers)), tc.want);
    });
  }
});
