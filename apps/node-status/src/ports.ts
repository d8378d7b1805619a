/**
 * What the Node, its Lease and the mirror pods depend on; the adapters are
 * in adapters/, the fakes in ./testing.ts. Every API write goes through a
 * port whose adapter checks the leader fence first: only the leading
 * node-status writes the Node, its Lease and the mirror pods.
 */
import type { Lease, Node, NodeCondition, NodePressureRecord, Pod, PodRecord, PodSyncStatusRecord } from '@app/contracts';

/**
 * The node's pods in the apiserver (`spec.nodeName=<node>`), as a list +
 * watch keeps them (@app/apiserver ReflectorApiPods): the mirror pods are
 * among them. Every instance keeps it, a standby too.
 */
export abstract class ApiPods {
  /** The first list has arrived (the informer's HasSynced); until then nothing is known, which is not "no pods". */
  abstract get hasSynced(): boolean;
  /** Every pod of the node in the apiserver, as last seen. */
  abstract all(): Pod[];
  /** Calls `listener` after the first list and after each change. Returns the unsubscribe. */
  abstract subscribe(listener: (pods: readonly Pod[]) => void): () => void;
}

/** The pod workers' records (the `workers` bucket, podSyncStatuses), read only. */
export abstract class PodWorkers {
  /** The record of a pod UID; undefined when the worker never had the pod or purged it after it finished. */
  abstract get(uid: string): Promise<PodSyncStatusRecord | undefined>;
}

/** The Node object (core/v1 nodes and nodes/status). */
export abstract class NodeApi {
  /** The Node, or undefined when it does not exist (404). */
  abstract getNode(name: string): Promise<Node | undefined>;
  /** Create; rejects with the ApiError (AlreadyExists, Forbidden, ...). */
  abstract createNode(node: Node): Promise<Node>;
  /** A JSON merge patch of nodes/status (labels and annotations go through it too, as PatchNodeStatus sends them). */
  abstract patchNodeStatus(name: string, patch: object): Promise<Node>;
}

/** coordination.k8s.io/v1 leases in one namespace. */
export abstract class LeaseApi {
  /** The Lease, or undefined when it does not exist (404). */
  abstract get(namespace: string, name: string): Promise<Lease | undefined>;
  abstract create(lease: Lease): Promise<Lease>;
  /** Update with the lease's resourceVersion (a conflict rejects with 409). */
  abstract update(lease: Lease): Promise<Lease>;
}

/** What cadvisor's MachineInfo and the OS say of this machine; read once at start (bootID changes only with a reboot). */
export interface MachineInfo {
  machineID: string;
  systemUUID: string;
  bootID: string;
  kernelVersion: string;
  osImage: string;
  /** Huge pages pre-allocated, by resource name (`hugepages-2Mi`) in bytes. */
  hugePages: Record<string, number>;
  /** The node filesystem's size in bytes (ephemeral-storage capacity); undefined when it cannot be read. */
  nodeFsCapacityBytes?: number;
}

/** The machine (cadvisor's MachineInfo). */
export abstract class Machine {
  abstract info(): Promise<MachineInfo>;
}

/**
 * What the sync loop's eviction manager last observed (`<node>.node-pressure`
 * in the `pods` bucket, ADR 0014): the Node's pressure conditions come from
 * the same measure that evicts pods.
 */
export abstract class NodePressureView {
  /** The record, or undefined while the eviction manager has written none. */
  abstract read(): Promise<NodePressureRecord | undefined>;
}

/** A watch of the node's own Node in the API (the kubelet's node informer): each change as it comes. */
export abstract class NodeWatch {
  /** Starts watching; `onNode` gets the Node after the first list and after each change (undefined: it does not exist). */
  abstract start(onNode: (node: Node | undefined) => void): void;
  abstract stop(): void;
}

/** Where the Node's labels go as the API has them (`<node>.node-labels` in the `leases` bucket), for the sync loop's admission. */
export abstract class NodeLabelsSink {
  abstract publish(labels: Record<string, string>): Promise<void>;
}

/** The runtime's Version call: `<runtimeName>://<runtimeVersion>` (nodeInfo.containerRuntimeVersion). */
export abstract class RuntimeVersion {
  abstract containerRuntimeVersion(): Promise<string>;
}

/**
 * The runtime's network configuration (kubelet_network.go updatePodCIDR,
 * kuberuntime UpdatePodCIDR): the Node's pod CIDRs, comma-separated, to the
 * runtime (CRI UpdateRuntimeConfig), for a CNI configuration that needs them.
 */
export abstract class RuntimeNetworkConfig {
  abstract updatePodCIDR(cidrs: string): Promise<void>;
}

/** mirror_client.go: mirror pods in the API. */
export abstract class MirrorPodApi {
  /** Create; rejects with the ApiError (AlreadyExists when a pod of that name is there). */
  abstract createMirrorPod(pod: Pod): Promise<Pod>;
  /**
   * DeleteMirrorPod: grace 0, `uid` as the precondition. Whether it was
   * deleted; a pod already gone (404) or another pod now (409) is false, not an error.
   */
  abstract deleteMirrorPod(namespace: string, name: string, uid: string): Promise<boolean>;
}

/** The desired pods (the sync loop's `pods` bucket), followed: what the mirror pods are made from, and when to look again. */
export abstract class DesiredPodsWatch {
  /**
   * Calls `onChange` with every desired pod once loaded and after each
   * change, `onLost` when the watch dies by itself (what it said is stale
   * until the next `onChange`: the watch is listed and opened again);
   * resolves with the stop once first loaded.
   */
  abstract watch(onChange: (pods: PodRecord[]) => void, onLost: () => void): Promise<() => void>;
}

/** The Node's conditions as this instance knows them (Subjects.nodeConditions): the leader's last computed, a standby's none. */
export abstract class NodeConditionsReader {
  abstract read(): { leading: boolean; conditions: readonly NodeCondition[] };
}
