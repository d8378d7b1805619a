/** The contracts' test doubles, for unit tests only (the lib's testing door: `@app/contracts/testing`). */
import { EventRecorder, type EventType } from './events.js';
import type { Pod } from './kube.js';

export interface RecordedEvent {
  /** The pod's UID; empty for a node event. */
  uid: string;
  type: EventType;
  reason: string;
  message: string;
  fieldPath?: string;
}

/** An EventRecorder that keeps what it was given. */
export class RecordingEventRecorder extends EventRecorder {
  readonly events: RecordedEvent[] = [];

  event(pod: Pod, type: EventType, reason: string, message: string, fieldPath?: string): void {
    this.events.push({ uid: pod.metadata.uid ?? '', type, reason, message, ...(fieldPath ? { fieldPath } : {}) });
  }

  nodeEvent(type: EventType, reason: string, message: string): void {
    this.events.push({ uid: '', type, reason, message });
  }

  /** The reasons recorded, in order. */
  reasons(): string[] {
    return this.events.map((e) => e.reason);
  }
}
