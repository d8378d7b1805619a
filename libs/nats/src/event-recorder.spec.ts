import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { FakeClock } from '@app/clock/testing';
import { Subjects, type EventMessage, type Pod } from '@app/contracts';
import type { MessageMeta } from '@app/tracing';
import { NatsEventRecorder } from './event-recorder.js';

class RecordingBus {
  readonly sent: { subject: string; payload: EventMessage; meta: MessageMeta | undefined }[] = [];
  publish(subject: string, payload: unknown, meta?: MessageMeta): void {
    this.sent.push({ subject, payload: payload as EventMessage, meta });
  }
}

const pod: Pod = { metadata: { name: 'web', namespace: 'default', uid: 'uid-1' }, spec: { containers: [{ name: 'c', image: 'busybox' }] } };

describe('NatsEventRecorder', () => {
  it('a pod event goes to kubelet.<node>.events.<uid> with the pod, the container and the clock\'s time', () => {
    const bus = new RecordingBus();
    const clock = new FakeClock(Date.UTC(2026, 0, 2));
    new NatsEventRecorder(bus, 'node-a', clock).event(pod, 'Warning', 'BackOff', 'Back-off restarting failed container c', 'spec.containers{c}');
    assert.equal(bus.sent.length, 1);
    const [sent] = bus.sent;
    assert.equal(sent?.subject, Subjects.events.build('node-a', 'uid-1'));
    assert.equal(sent?.meta?.podUid, 'uid-1');
    assert.deepEqual(sent?.payload.involvedObject, { kind: 'Pod', namespace: 'default', name: 'web', uid: 'uid-1', fieldPath: 'spec.containers{c}' });
    assert.equal(sent?.payload.eventType, 'Warning');
    assert.equal(sent?.payload.reason, 'BackOff');
    assert.deepEqual(sent?.payload.source, { component: 'kubelet', host: 'node-a' });
    assert.equal(sent?.payload.timestamp, '2026-01-02T00:00:00.000Z');
  });

  it('a node event is about the node, on the node\'s own events subject', () => {
    const bus = new RecordingBus();
    new NatsEventRecorder(bus, 'node-a', new FakeClock()).nodeEvent('Warning', 'FailedToAdmitStaticPod', '/etc/m/x.yaml: bad');
    const [sent] = bus.sent;
    assert.equal(sent?.subject, Subjects.events.build('node-a', 'node-a'));
    assert.deepEqual(sent?.payload.involvedObject, { kind: 'Node', name: 'node-a', uid: 'node-a' });
    assert.equal(sent?.payload.message, '/etc/m/x.yaml: bad');
  });
});
