/**
 * What the status manager depends on; the KV and prom-client adapters are
 * in adapters/, the module binds them.
 */
import type { PodRecord, ProbeResultRecord } from '@app/contracts';
import type { StatusEntry } from './pod-status-versions.js';

/** The `pod-status` bucket, by pod UID; the status manager is its only writer. */
export abstract class StatusStore {
  /** Every stored status, to restore the versions at start. */
  abstract load(): Promise<[string, StatusEntry][]>;
  abstract put(uid: string, entry: StatusEntry): Promise<void>;
  abstract delete(uid: string): Promise<void>;
}

/** The desired pods (the sync loop's `pods` bucket), read only. */
export abstract class DesiredPods {
  abstract all(): Promise<PodRecord[]>;
  abstract get(uid: string): Promise<PodRecord | undefined>;
}

/**
 * The prober's `probe-results` bucket, read only: each probe worker's
 * current result, which the probe messages announce. Read at restore, so
 * that a result announced while the status manager was down is merged.
 */
export abstract class ProbeResultsReader {
  /** Every result of the node. */
  abstract all(): Promise<ProbeResultRecord[]>;
}

/** kubelet_pod_status_sync_duration_seconds. */
export abstract class StatusMetrics {
  abstract synced(seconds: number): void;
}

/**
 * The leading sync loop's podResync (Subjects.podResync): every admitted pod
 * synced now, so the pod workers send their statuses again.
 */
export abstract class PodResync {
  /** The sync loop's answer, or undefined when none answered in time (none runs, or NATS is away). */
  abstract resyncAll(reason: string): Promise<{ leading: boolean; pods: number } | undefined>;
}
