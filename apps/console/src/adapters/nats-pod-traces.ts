/** PodTraces on KUBELET_TRACES, as status-manager's NATS user (libs/nats permissions.ts TRACE_READ). */
import { readPodTrace, type TraceRecord } from '@app/tracing';
import type { NatsConnection } from '@app/nats';
import { PodTraces } from '../console-views.js';

export class NatsPodTraces extends PodTraces {
  constructor(private readonly nc: NatsConnection) {
    super();
  }

  read(uid: string): Promise<TraceRecord[]> {
    return readPodTrace(this.nc, uid);
  }
}
