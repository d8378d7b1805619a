/**
 * What the prober's logic depends on besides the probe handlers
 * (handlers/, ProbeHandler): where results are kept and announced, where
 * events and metrics go. The adapters are in adapters/, the fakes in
 * testing.ts.
 */
import type { PodRecord, PodStatus, ProbeResultMessage, ProbeResultRecord, ProbeType } from '@app/contracts';
import type { ProbeEvent } from './worker.js';

/**
 * The results managers' state (upstream: results.Manager's cache): the
 * `probe-results` bucket, one record per probe worker, whose only writer is
 * the prober. What readers act on; the ResultSink's messages only say that
 * a record changed.
 */
export abstract class ProbeResultStore {
  /** Every record of the node, to restore at start. */
  abstract load(): Promise<ProbeResultRecord[]>;
  /** Sets the worker's record (results.Manager.Set). */
  abstract put(record: ProbeResultRecord): Promise<void>;
  /** Removes the worker's record (results.Manager.Remove). */
  abstract delete(podUid: string, containerName: string, probeType: ProbeType): Promise<void>;
}

/** A pod's status as the status manager keeps it. */
export interface KeptPodStatus {
  status: PodStatus;
  /** It came from TerminatePod: that instance of the pod has finished. */
  podIsFinished: boolean;
}

/**
 * What a restarted prober reads once at start to probe again the pods it
 * probed before, without waiting for their next sync's AddPod (upstream, a
 * restarted kubelet adds every pod again, and AddPod runs for each): the
 * sync loop's desired pods and the status manager's statuses. Read only.
 */
export abstract class ProbedPodSource {
  /** The node's desired pods (the `pods` bucket, podManager.GetPods). */
  abstract desiredPods(): Promise<PodRecord[]>;
  /** The status manager's statuses (the `pod-status` bucket), by pod UID. */
  abstract podStatuses(): Promise<Map<string, KeptPodStatus>>;
}

/** Where result changes are announced (upstream: the results managers' Updates() channels). */
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
