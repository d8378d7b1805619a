/**
 * What the prober's logic depends on besides the probe handlers
 * (handlers/, ProbeHandler): where results, events and metrics go. The
 * adapters are in adapters/, the fakes in testing.ts.
 */
import type { ProbeResultMessage } from '@app/contracts';
import type { ProbeEvent } from './worker.js';

/** Where results go (upstream: the results managers' Updates() channels). */
export abstract class ResultSink {
  /** One result change, or a repeated liveness failure. A rejection is logged, never thrown. */
  abstract publish(msg: ProbeResultMessage): void | Promise<void>;
}

/** Where the prober's container events go (recorder.Eventf: Unhealthy, ProbeWarning). */
export abstract class ProbeEventSink {
  abstract record(event: ProbeEvent): void | Promise<void>;
}

/** The labels of prober_probe_duration_seconds; prober_probe_total adds `result`. */
export interface ProbeMetricLabels {
  /** Liveness, Readiness or Startup. */
  probe_type: string;
  container: string;
  pod: string;
  namespace: string;
}
export type ProbeMetricResult = 'successful' | 'failed' | 'unknown';

/** The prober's metrics. */
export abstract class ProberMetrics {
  /** A probe ran: prober_probe_total{result} + 1 and, when given, the duration into prober_probe_duration_seconds. */
  abstract observe(labels: ProbeMetricLabels, result: ProbeMetricResult, durationSeconds?: number): void;
  /** A worker stopped: its series are deleted, as upstream's worker does on exit. */
  abstract forget(labels: ProbeMetricLabels): void;
}
