/**
 * The Kubernetes core/v1 API types that travel in our messages, from the
 * maintained kubernetes-types package (generated from the API's OpenAPI
 * schema): plain JSON, timestamps are RFC 3339 strings, quantities are
 * strings, every field the API has is there and unknown ones pass through.
 *
 * The package is v1.30. Where we depart from it, it is below, named and
 * explained; nothing else is ours:
 * - Pod: metadata and spec are present and status is writable (see Pod).
 * - PodCondition.lastProbeTime may be null, as Go writes a zero time.
 * - PodPhase names the phases (the package types phase as a plain string).
 * A field newer than v1.30 goes in an extension of the type that carries it
 * (`interface PodSpec extends core.PodSpec { newField?: ... }`), naming the
 * Kubernetes version that added it, until the package catches up.
 */
import type * as core from 'kubernetes-types/core/v1.js';
import type * as meta from 'kubernetes-types/meta/v1.js';

export type ObjectMeta = meta.ObjectMeta;

export type {
  AppArmorProfile,
  Container,
  ContainerPort,
  ContainerState,
  ContainerStateRunning,
  ContainerStateTerminated,
  ContainerStateWaiting,
  ContainerStatus,
  EnvVar,
  ExecAction,
  GRPCAction,
  HTTPGetAction,
  Lifecycle,
  LifecycleHandler,
  NodeSelectorRequirement,
  NodeSelectorTerm,
  PodSpec,
  Probe,
  ResourceRequirements,
  SecurityContext,
  TCPSocketAction,
  Toleration,
  Volume,
  VolumeMount,
} from 'kubernetes-types/core/v1.js';

/**
 * core/v1 Pod as the kubelet holds it. In Go, Pod.ObjectMeta and Pod.Spec are
 * values, never nil, and the kubelet reads them without a check; the package
 * marks them optional only because the OpenAPI schema does not list them as
 * required. Every pod that reaches our services has both: makeStaticPod gives
 * a source's pod an empty metadata and spec when it lacks them, and
 * validatePod then requires its name and containers. Status is writable
 * because the kubelet is the one that writes it (the package marks it
 * read-only, for API clients).
 */
export interface Pod extends Omit<core.Pod, 'status'> {
  metadata: ObjectMeta;
  spec: core.PodSpec;
  status?: PodStatus;
}

/** core/v1 PodList, of our Pod. */
export interface PodList extends Omit<core.PodList, 'items'> {
  items: Pod[];
}

/** core/v1 PodStatus, with conditions that may carry a null lastProbeTime. */
export interface PodStatus extends Omit<core.PodStatus, 'conditions'> {
  conditions?: PodCondition[];
}

/**
 * core/v1 PodCondition. lastProbeTime is null on the wire when unset: Go
 * marshals a zero metav1.Time as null, and the kubelet never sets it.
 */
export interface PodCondition extends Omit<core.PodCondition, 'lastProbeTime'> {
  lastProbeTime?: string | null;
}

/** core/v1 PodPhase: Go's constants for PodStatus.phase. */
export type PodPhase = 'Pending' | 'Running' | 'Succeeded' | 'Failed' | 'Unknown';

export type { NodeAddress, NodeCondition, NodeSystemInfo } from 'kubernetes-types/core/v1.js';
/** core/v1 Service and its ports: the services a pod's environment names (kubelet_pods.go getServiceEnvVarMap). */
export type { Service, ServicePort } from 'kubernetes-types/core/v1.js';
export type { Lease } from 'kubernetes-types/coordination/v1.js';
/** core/v1 Event (the recorder's events as the apiserver stores them) and what it refers to. */
export type { Event, EventSource, ObjectReference } from 'kubernetes-types/core/v1.js';

/** core/v1 NodeStatus, writable: the kubelet is the one that writes it (the package marks Node.status read-only, for API clients). */
export type NodeStatus = core.NodeStatus;

/** core/v1 Node as the kubelet registers and updates it: metadata present, status writable. */
export interface Node extends Omit<core.Node, 'status'> {
  metadata: ObjectMeta;
  status?: NodeStatus;
}
