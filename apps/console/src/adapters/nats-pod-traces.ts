/**
 * PodTraces on KUBELET_TRACES, as the console's NATS user (libs/nats permissions.ts traceRead). Records whose
 * subject's service is not their claimed sender are dropped by the reader; how many is logged.
 */
import { readPodTrace, type TraceRecord } from '@app/tracing';
import type { NatsConnection } from '@app/nats';
import type { Logger } from '@app/observability';
import { PodTraces } from '../console-views.js';

export class NatsPodTraces extends PodTraces {
  constructor(
    private readonly nc: NatsConnection,
    /** The console's node: its user may read that node's records only. */
    private readonly node: string,
    private readonly logger: Logger,
  ) {
    super();
  }

  async read(uid: string): Promise<TraceRecord[]> {
    const { records, rejected } = await readPodTrace(this.nc, uid, this.node);
    if (rejected > 0) this.logger.warn({ podUid: uid, rejected }, "trace records dropped: published under another service's name than the one they claim");
    return records;
  }
}
