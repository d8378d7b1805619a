/**
 * record.EventRecorder (k8s.io/client-go/tools/record): how any service
 * reports an event. The events travel on `kubelet.<node>.events.<uid>` as
 * EventMessage (messages.ts); the status manager keeps them. The NATS
 * implementation is @app/nats's NatsEventRecorder; the test double is
 * @app/contracts/testing's RecordingEventRecorder.
 */
import type { Pod } from './kube.js';

export type EventType = 'Normal' | 'Warning';

export abstract class EventRecorder {
  /** recorder.Eventf on a pod; `fieldPath` names a container in it (`spec.containers{name}`). */
  abstract event(pod: Pod, type: EventType, reason: string, message: string, fieldPath?: string): void;
  /** recorder.Eventf on the node itself (a static pod manifest refused, ...). */
  abstract nodeEvent(type: EventType, reason: string, message: string): void;
}
