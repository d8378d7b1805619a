/**
 * What the status manager's API side depends on when the node has joined a
 * cluster (KUBECONFIG set): the node's pods as the apiserver shows them.
 * The adapters are in adapters/, over @app/apiserver; the module binds
 * them only when KUBECONFIG is set (each of these tokens is null otherwise,
 * and the service then works as a standalone node: docs/adr/0013).
 *
 * The status manager is the node's only writer to the apiserver (pod
 * status, deletion of terminated pods, mirror pods, the Node, its Lease,
 * Events); config-source is the only reader of API pods for running them.
 */
import type { Event, EventMessage, Pod, PodSyncStatusRecord } from '@app/contracts';

/**
 * The node's pods in the apiserver (`spec.nodeName=<node>`), as a list +
 * watch keeps them: API pods and mirror pods alike. This is upstream's
 * podManager view of what the apiserver holds (the status manager's
 * GetPodByUID, GetMirrorPodByPod, TranslatePodUID read it). Read only;
 * every instance keeps it, a standby too, so that a takeover starts with it.
 */
export abstract class ApiPods {
  /** The first list has arrived (the informer's HasSynced); until then nothing is known, which is not "no pods". */
  abstract get hasSynced(): boolean;
  /** Every pod of the node in the apiserver, as last seen. */
  abstract all(): Pod[];
  /** A pod by namespace and name (a static pod's mirror is found under the static pod's). */
  abstract get(namespace: string, name: string): Pod | undefined;
  /** A pod by its API UID. */
  abstract byUid(uid: string): Pod | undefined;
  /**
   * Calls `listener` with every pod after the first list and after each
   * change (a hint to act; read the set again when acting). Returns the
   * unsubscribe.
   */
  abstract subscribe(listener: (pods: readonly Pod[]) => void): () => void;
}

/**
 * The pod calls of the status sync (upstream's kubeClient.CoreV1().Pods()).
 * Writes are the leader's only: the adapter refuses them (NotLeaderError)
 * once this instance may no longer act.
 */
export abstract class PodStatusApi {
  /** GET the pod; undefined when the apiserver has no pod of that name. Any other failure throws. */
  abstract getPod(namespace: string, name: string): Promise<Pod | undefined>;
  /** PATCH its `status` subresource with a strategic-merge patch; resolves with the pod as stored. */
  abstract patchPodStatus(namespace: string, name: string, patch: Record<string, unknown>): Promise<Pod>;
  /**
   * DELETE it at once (gracePeriodSeconds 0) if it is still the pod `uid`
   * (preconditions.uid). A pod already gone, or another one of the same
   * name now, is not an error: there is nothing left to delete.
   */
  abstract deletePod(namespace: string, name: string, uid: string): Promise<void>;
}

/** The pod workers' records (the `workers` bucket, podSyncStatuses), read only. */
export abstract class PodWorkerRecords {
  /** The record of a pod UID; undefined when the worker never had the pod or purged it after it finished. */
  abstract get(uid: string): Promise<PodSyncStatusRecord | undefined>;
}

/**
 * The apiserver's Events (client-go's record.EventSink). Writes are the
 * leader's only: refused (NotLeaderError) once this instance may no longer act.
 */
export abstract class EventSink {
  /** POST the event in its namespace; resolves with it as stored (its resourceVersion). */
  abstract create(event: Event): Promise<Event>;
  /** PATCH (strategic merge) the event of that name, e.g. its count; resolves with it as stored. */
  abstract patch(event: Event, patch: Record<string, unknown>): Promise<Event>;
}

/**
 * The Nest token of the node's @app/apiserver ApiServer: null when
 * KUBECONFIG is unset (a standalone node: nothing API-side runs).
 */
export const API_SERVER = Symbol('API_SERVER');

/**
 * The node's events, kept by JetStream (KUBELET_EVENTS, libs/nats
 * event-stream.ts): the leader reads them through the node's durable
 * consumer and acknowledges each once it is settled; the status manager's
 * own events (OOMKilled) are published into it, idempotent by message ID.
 */
export abstract class DurableEvents {
  /**
   * Hands out the node's events one at a time until stop(): `handle` says
   * 'done' (acknowledged) or 'again' (handed out again later, to whichever
   * instance leads). Resolves once stopped; rejects when the consumer cannot be read.
   */
  abstract consume(handle: (event: EventMessage, seq: number, working: () => void) => Promise<'done' | 'again'>): Promise<void>;
  /** Stops handing out; what is in flight is handed out again. */
  abstract stop(): void;
  /** Publishes `event` and resolves once the stream has it; a second publish with the same `msgId` (within 2 min) is dropped. */
  abstract publish(event: EventMessage, msgId: string): Promise<void>;
}
