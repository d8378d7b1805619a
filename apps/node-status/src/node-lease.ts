/**
 * The node's heartbeat: its Lease `kube-node-lease/<node>`, as
 * component-helpers' apimachinery/lease/controller.go keeps it for the
 * kubelet (pkg/kubelet/kubelet.go NewController with
 * util.SetNodeOwnerFunc): holderIdentity the node, leaseDurationSeconds 40,
 * renewTime renewed every renewInterval (0.25 × 40 s = 10 s), and an
 * ownerReference to the Node so that the Lease goes with it.
 *
 *   every renewInterval: sync
 *     latestLease? ─▶ retryUpdateLease (5 tries; a conflict: ensure again) ─ ok ─▶ done
 *        │ none, or it failed
 *        ▼
 *     backoffEnsureLease: get, or create when missing (100 ms doubling to 7 s between failures)
 *        └─ found (not created): retryUpdateLease
 *
 * Invariants:
 *  - The Lease is not created before the Node exists: without the Node's UID
 *    there is no ownerReference (newLeasePostProcessFunc fails, ensureLease
 *    gives up until the next interval), as upstream.
 *  - An ownerReference missing on an existing Lease is added at its next renewal.
 *  - Only while leading: stop() ends the loop and its back-off at once; the
 *    LeaseApi adapter checks the leader fence before each write.
 */
import type { Clock } from '@app/clock';
import type { Lease } from '@app/contracts';
import { isConflict } from '@app/apiserver';
import type { Logger } from '@app/observability';
import { LeaseApi, NodeApi } from './ports.js';

export const NODE_LEASE_NAMESPACE = 'kube-node-lease';
/** kubelet config default nodeLeaseDurationSeconds. */
export const NODE_LEASE_DURATION_SECONDS = 40;
/** kubelet.go renewIntervalFraction. */
export const RENEW_INTERVAL_FRACTION = 0.25;
/** controller.go maxUpdateRetries and maxBackoff. */
export const MAX_UPDATE_RETRIES = 5;
export const MAX_BACKOFF_MS = 7000;

/** metav1.MicroTime as it marshals: RFC 3339 with microseconds. */
export function microTime(ms: number): string {
  return new Date(ms).toISOString().replace(/\.(\d{3})Z$/, '.$1000Z');
}

export interface NodeLeaseOptions {
  nodeName: string;
  leaseDurationSeconds?: number;
  /** Default: leaseDurationSeconds × 0.25. */
  renewIntervalMs?: number;
}

export class NodeLeaseController {
  private latestLease?: Lease;
  private running = false;
  private abort?: AbortController;
  private wake?: AbortController;
  private readonly leaseDurationSeconds: number;
  readonly renewIntervalMs: number;

  constructor(
    private readonly leases: LeaseApi,
    private readonly nodes: NodeApi,
    private readonly clock: Clock,
    private readonly logger: Logger,
    private readonly options: NodeLeaseOptions,
  ) {
    this.leaseDurationSeconds = options.leaseDurationSeconds ?? NODE_LEASE_DURATION_SECONDS;
    this.renewIntervalMs = options.renewIntervalMs ?? this.leaseDurationSeconds * 1000 * RENEW_INTERVAL_FRACTION;
  }

  /** Leading: sync now, then every renewInterval (measured from the end of the last sync, as wait.JitterUntil's sliding period). */
  start(): void {
    if (this.running) return;
    this.running = true;
    this.latestLease = undefined;
    this.abort = new AbortController();
    const signal = this.abort.signal;
    void (async () => {
      while (this.running && !signal.aborted) {
        await this.sync().catch((err: unknown) => this.logger.error({ err: (err as Error).message }, 'node lease sync failed'));
        this.wake = new AbortController();
        try {
          await this.clock.sleep(this.renewIntervalMs, AbortSignal.any([signal, this.wake.signal]));
        } catch {
          if (signal.aborted) return;
        }
      }
    })();
  }

  stop(): void {
    this.running = false;
    this.abort?.abort();
  }

  /**
   * The Node was just registered: sync now rather than at the next interval,
   * if the last sync found no Node to own the Lease (ours: upstream waits
   * for the interval, up to 10 s without a Lease).
   */
  nodeRegistered(): void {
    if (this.running && !this.latestLease) this.wake?.abort();
  }

  /** One renewal. */
  async sync(): Promise<void> {
    if (this.latestLease) {
      try {
        await this.retryUpdateLease(this.latestLease);
        return;
      } catch (err) {
        this.logger.info({ err: (err as Error).message }, 'failed to update lease using latest lease, fallback to ensure lease');
      }
    }
    const { lease, created } = await this.backoffEnsureLease();
    this.latestLease = lease;
    if (!created && lease) {
      try {
        await this.retryUpdateLease(lease);
      } catch (err) {
        this.logger.error({ err: (err as Error).message, intervalMs: this.renewIntervalMs }, 'Will retry updating lease');
      }
    }
  }

  /** Ensures the lease exists, backing off 100 ms doubling to 7 s between failures; gives up only when stopped. */
  private async backoffEnsureLease(): Promise<{ lease?: Lease; created: boolean }> {
    let sleep = 100;
    for (;;) {
      try {
        return await this.ensureLease();
      } catch (err) {
        sleep = Math.min(2 * sleep, MAX_BACKOFF_MS);
        this.logger.error({ err: (err as Error).message, intervalMs: sleep }, 'Failed to ensure lease exists, will retry');
        if (!this.running) return { created: false };
        try {
          await this.clock.sleep(sleep, this.abort?.signal);
        } catch {
          return { created: false };
        }
      }
    }
  }

  private async ensureLease(): Promise<{ lease?: Lease; created: boolean }> {
    const existing = await this.leases.get(NODE_LEASE_NAMESPACE, this.options.nodeName);
    if (existing) return { lease: existing, created: false };
    let toCreate: Lease;
    try {
      toCreate = await this.newLease(undefined);
    } catch (err) {
      // No Node yet: no lease without its owner; the next interval tries again.
      this.logger.info({ err: (err as Error).message }, 'the node lease waits for the Node');
      return { created: false };
    }
    return { lease: await this.leases.create(toCreate), created: true };
  }

  private async retryUpdateLease(base: Lease | undefined): Promise<void> {
    for (let i = 0; i < MAX_UPDATE_RETRIES && this.running; i++) {
      let toUpdate: Lease | undefined;
      try {
        toUpdate = await this.newLease(base);
      } catch (err) {
        this.logger.error({ err: (err as Error).message }, 'Failed to prepare lease');
      }
      if (toUpdate) {
        try {
          this.latestLease = await this.leases.update(toUpdate);
          return;
        } catch (err) {
          this.logger.error({ err: (err as Error).message }, 'Failed to update lease');
          if (isConflict(err)) {
            base = (await this.backoffEnsureLease()).lease;
            continue;
          }
        }
      }
    }
    throw new Error(`failed ${MAX_UPDATE_RETRIES} attempts to update lease`);
  }

  /** newLease: the base (or a new one) with the duration and renewTime now, and the Node as its owner. */
  private async newLease(base: Lease | undefined): Promise<Lease> {
    const lease: Lease = base
      ? structuredClone(base)
      : { apiVersion: 'coordination.k8s.io/v1', kind: 'Lease', metadata: { name: this.options.nodeName, namespace: NODE_LEASE_NAMESPACE }, spec: { holderIdentity: this.options.nodeName } };
    lease.spec = { ...lease.spec, leaseDurationSeconds: this.leaseDurationSeconds, renewTime: microTime(this.clock.now()) };
    await this.setNodeOwner(lease);
    return lease;
  }

  /** util.SetNodeOwnerFunc: the Node's UID as the owner, tried at every renewal until it is there. */
  private async setNodeOwner(lease: Lease): Promise<void> {
    if ((lease.metadata?.ownerReferences ?? []).length > 0) return;
    const node = await this.nodes.getNode(this.options.nodeName);
    if (!node?.metadata.uid) throw new Error(`failed to get node "${this.options.nodeName}" when trying to set owner ref to the node lease`);
    lease.metadata = { ...lease.metadata, ownerReferences: [{ apiVersion: 'v1', kind: 'Node', name: this.options.nodeName, uid: node.metadata.uid }] };
  }
}
