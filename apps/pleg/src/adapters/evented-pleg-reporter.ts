import type { EventRecorder } from '@app/contracts';
import { Counter, Histogram, type Registry } from '@app/observability';
import { PlegModeReporter } from '../ports.js';

/** The reasons of the evented PLEG's events on the Node. */
export const EventedPlegEvents = {
  fellBack: 'ContainerEventsUnavailable',
  resumed: 'ContainerEventsResumed',
} as const;

/** The evented PLEG's stream as the kubelet counts it (pkg/kubelet/metrics), and its fallbacks and returns as events on the Node. */
export class EventedPlegReporter extends PlegModeReporter {
  private readonly errors: Counter;
  private readonly successes: Counter;
  private readonly latencies: Histogram;

  constructor(
    registry: Registry,
    private readonly events: Pick<EventRecorder, 'nodeEvent'>,
    private readonly relistPeriodSeconds: { generic: number; evented: number },
  ) {
    super();
    const registers = [registry];
    this.errors = new Counter({ name: 'kubelet_evented_pleg_connection_error_count', help: 'The number of errors encountered during the establishment of streaming connection with the CRI runtime.', registers });
    this.successes = new Counter({ name: 'kubelet_evented_pleg_connection_success_count', help: 'The number of times a streaming client was obtained to receive CRI Events.', registers });
    this.latencies = new Histogram({
      name: 'kubelet_evented_pleg_connection_latency_seconds',
      help: 'The latency of streaming connection with the CRI runtime, measured in seconds.',
      buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
      registers,
    });
  }

  connected(resumed: boolean): void {
    this.successes.inc();
    if (resumed) this.events.nodeEvent('Normal', EventedPlegEvents.resumed, `PLEG uses the container runtime's events again; it relists every ${this.relistPeriodSeconds.evented}s`);
  }

  fellBack(reason: string, fault: boolean): void {
    this.errors.inc();
    this.events.nodeEvent(fault ? 'Warning' : 'Normal', EventedPlegEvents.fellBack, `PLEG relists every ${this.relistPeriodSeconds.generic}s: ${reason}`);
  }

  latency(seconds: number): void {
    this.latencies.observe(seconds);
  }
}
