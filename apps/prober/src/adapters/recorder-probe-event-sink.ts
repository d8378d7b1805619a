import type { EventRecorder } from '@app/contracts';
import { ProbeEventSink } from '../ports.js';
import type { ProbeEvent } from '../worker.js';

/** The Unhealthy and ProbeWarning events ("Liveness probe failed: ..."), on the container, through the service's EventRecorder. */
export class RecorderProbeEventSink extends ProbeEventSink {
  constructor(private readonly recorder: EventRecorder) {
    super();
  }
  record(e: ProbeEvent): void {
    this.recorder.event(e.pod, e.eventType, e.reason, e.message, `spec.containers{${e.container.name}}`);
  }
}
