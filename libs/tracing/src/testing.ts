/** Test doubles of @app/tracing. */
import { TraceRecorder, type TraceHop } from './trace-records.js';

/** Keeps every hop recorded (installTraceRecorder(new FakeTraceRecorder()) in a test); `failing` makes record throw. */
export class FakeTraceRecorder extends TraceRecorder {
  readonly hops: TraceHop[] = [];
  failing = false;
  flushes = 0;

  record(hop: TraceHop): void {
    if (this.failing) throw new Error('recorder failed');
    this.hops.push(hop);
  }

  flush(): void {
    this.flushes++;
  }
}
