/**
 * The Node object as the kubelet builds and updates it: upstream
 * pkg/kubelet/kubelet_node_status.go (initialNode, the reconciliation of
 * tryRegisterWithAPIServer, updateNode, nodeStatusHasChanged) and
 * pkg/kubelet/nodestatus/setters.go (NodeAddress, MachineInfo, VersionInfo,
 * DaemonEndpoints, GoRuntime, MemoryPressureCondition, DiskPressureCondition,
 * PIDPressureCondition, RuntimeHandlers, NodeFeatures, ReadyCondition). Pure: what the machine, the runtime
 * and the eviction signals say comes in as NodeStatusInputs.
 *
 *   setNodeStatus(node, inputs, now), in upstream's order:
 *     addresses ─ capacity/allocatable/nodeInfo ids ─ versions ─ daemonEndpoints ─ os/arch
 *     ─ runtimeHandlers ─ features
 *     ─ MemoryPressure ─ DiskPressure ─ PIDPressure ─ Ready (last: version skew, kubernetes#16961)
 *
 * Invariants:
 *  - A condition's lastTransitionTime moves only when its status changes;
 *    lastHeartbeatTime moves on every computation, and nodeStatusHasChanged
 *    ignores it, so an unchanged node is not patched (the Lease is the heartbeat).
 *  - Conditions and resources the kubelet does not own (another
 *    controller's condition, an extended resource) are kept as they are.
 */
import type { Node, NodeAddress, NodeCondition, NodeStatus, NodeSystemInfo } from '@app/contracts';
import type { RuntimeFeaturesInfo, RuntimeHandlerInfo } from '@app/kube';
import { DEFAULT_NODE_LABELS, LabelArchStable, LabelOSStable, isHugePageResourceName, parseQuantity, resourceAmount, rfc3339, toResourceList, type ResourceAmounts } from '@app/kube';


/** What the machine, the runtime and the eviction manager say, for one computation. */
export interface NodeStatusInputs {
  hostname: string;
  /** --node-ip: the InternalIP (NODE_IP). */
  nodeIP: string;
  capacity: ResourceAmounts;
  allocatable: ResourceAmounts;
  /** machineID, systemUUID, bootID, kernelVersion, osImage, containerRuntimeVersion, kubeletVersion, operatingSystem, architecture. */
  nodeInfo: Omit<NodeSystemInfo, 'kubeProxyVersion'>;
  /** The kubelet's port (daemonEndpoints.kubeletEndpoint). */
  kubeletPort: number;
  /** runtimeState's handlers (RuntimeHandlers setter): none before the runtime's first ready answer. */
  runtimeHandlers?: readonly RuntimeHandlerInfo[];
  /** runtimeState's features (NodeFeatures setter): undefined before the first ready answer, or where the runtime says nothing of them. */
  runtimeFeatures?: RuntimeFeaturesInfo;
  /** runtimeState.runtimeErrors(): the runtime down or not ready, the PLEG unhealthy. */
  runtimeErrors?: string;
  /** runtimeState.networkErrors(). */
  networkErrors?: string;
  memoryPressure: boolean;
  diskPressure: boolean;
  pidPressure: boolean;
}

/** recordNodeStatusEvent: the events upstream records as conditions change (NodeReady, NodeHasSufficientMemory, ...). */
export type NodeEventReason = string;

export const NodeConditionType = { Ready: 'Ready', MemoryPressure: 'MemoryPressure', DiskPressure: 'DiskPressure', PIDPressure: 'PIDPressure' } as const;

/** initialNode: name, labels (the kubelet's, then --node-labels over them), the attach/detach annotation, the status. */
export function initialNode(name: string, labels: Record<string, string>, inputs: NodeStatusInputs, now: number, events: NodeEventReason[] = []): Node {
  const node: Node = {
    apiVersion: 'v1',
    kind: 'Node',
    metadata: { name, labels: { ...labels }, annotations: { 'volumes.kubernetes.io/controller-managed-attach-detach': 'true' } },
    spec: {},
    status: {},
  };
  events.push(...setNodeStatus(node, inputs, now));
  return node;
}

/**
 * tryRegisterWithAPIServer's reconciliation of a Node that already exists:
 * the default labels (updateDefaultLabels), capacity and allocatable when
 * missing (updateDefaultResources), the huge page sizes (reconcileHugePageResource),
 * the attach/detach annotation. Returns the reconciled copy, or undefined
 * when nothing needs an update.
 */
export function reconcileExistingNode(initial: Node, existing: Node): Node | undefined {
  const node = structuredClone(existing);
  let requiresUpdate = false;
  const cmad = 'volumes.kubernetes.io/controller-managed-attach-detach';
  const wantCmad = initial.metadata.annotations?.[cmad];
  if (wantCmad !== undefined && node.metadata.annotations?.[cmad] !== wantCmad) {
    node.metadata.annotations = { ...node.metadata.annotations, [cmad]: wantCmad };
    requiresUpdate = true;
  }
  const labels = { ...node.metadata.labels };
  for (const label of DEFAULT_NODE_LABELS) {
    const want = initial.metadata.labels?.[label];
    if (want === undefined) continue;
    if (labels[label] !== want) {
      labels[label] = want;
      requiresUpdate = true;
    }
    if (labels[label] === '') delete labels[label];
  }
  node.metadata.labels = labels;
  const status: NodeStatus = (node.status ??= {});
  // updateDefaultResources: capacity and allocatable, when the existing Node has none.
  if (!status.capacity || Object.keys(status.capacity).length === 0) {
    status.capacity = { ...initial.status?.capacity };
    requiresUpdate = true;
  }
  if (!status.allocatable || Object.keys(status.allocatable).length === 0) {
    status.allocatable = { ...initial.status?.allocatable };
    requiresUpdate = true;
  }
  const capacity = status.capacity;
  const allocatable = status.allocatable;
  const supported = Object.keys(initial.status?.capacity ?? {}).filter(isHugePageResourceName);
  for (const size of supported) {
    const c = initial.status?.capacity?.[size];
    const a = initial.status?.allocatable?.[size];
    if (c !== undefined && !sameQuantity(capacity[size], c)) {
      capacity[size] = c;
      requiresUpdate = true;
    }
    if (a !== undefined && !sameQuantity(allocatable[size], a)) {
      allocatable[size] = a;
      requiresUpdate = true;
    }
  }
  for (const size of Object.keys(capacity).filter(isHugePageResourceName)) {
    if (supported.includes(size)) continue;
    delete capacity[size];
    delete allocatable[size];
    requiresUpdate = true;
  }
  return requiresUpdate ? node : undefined;
}

/** The kubelet's setters, in upstream's order, on `node` (a copy the caller owns). Returns the events to record. */
export function setNodeStatus(node: Node, inputs: NodeStatusInputs, now: number): NodeEventReason[] {
  const status: NodeStatus = (node.status ??= {});
  const events: NodeEventReason[] = [];
  // NodeAddress: no cloud provider, --node-ip given.
  status.addresses = nodeAddresses(inputs);
  machineInfo(status, inputs);
  // VersionInfo, GoRuntime: the rest of nodeInfo.
  status.nodeInfo = {
    ...(status.nodeInfo ?? { kubeProxyVersion: '' }),
    ...inputs.nodeInfo,
    kubeProxyVersion: status.nodeInfo?.kubeProxyVersion ?? '',
  };
  // DaemonEndpoints.
  status.daemonEndpoints = { kubeletEndpoint: { Port: inputs.kubeletPort } };
  runtimeHandlersAndFeatures(status, inputs);
  const time = rfc3339(now);
  pressureCondition(status, NodeConditionType.MemoryPressure, inputs.memoryPressure, time, events, {
    trueReason: 'KubeletHasInsufficientMemory',
    trueMessage: 'kubelet has insufficient memory available',
    trueEvent: 'NodeHasInsufficientMemory',
    falseReason: 'KubeletHasSufficientMemory',
    falseMessage: 'kubelet has sufficient memory available',
    falseEvent: 'NodeHasSufficientMemory',
  });
  pressureCondition(status, NodeConditionType.DiskPressure, inputs.diskPressure, time, events, {
    trueReason: 'KubeletHasDiskPressure',
    trueMessage: 'kubelet has disk pressure',
    trueEvent: 'NodeHasDiskPressure',
    falseReason: 'KubeletHasNoDiskPressure',
    falseMessage: 'kubelet has no disk pressure',
    falseEvent: 'NodeHasNoDiskPressure',
  });
  pressureCondition(status, NodeConditionType.PIDPressure, inputs.pidPressure, time, events, {
    trueReason: 'KubeletHasInsufficientPID',
    trueMessage: 'kubelet has insufficient PID available',
    trueEvent: 'NodeHasInsufficientPID',
    falseReason: 'KubeletHasSufficientPID',
    falseMessage: 'kubelet has sufficient PID available',
    falseEvent: 'NodeHasSufficientPID',
  });
  readyCondition(status, inputs, time, events);
  return events;
}

/** NodeStatus.features (v1.31, newer than the API types here). */
export type NodeStatusFeatures = { supplementalGroupsPolicy?: boolean };

/**
 * RuntimeHandlers and NodeFeatures (both behind gates on by default in v1.34: RecursiveReadOnlyMounts,
 * UserNamespacesSupport, SupplementalGroupsPolicy): what the runtime said of its handlers, each with both
 * features; and its features once it said any (containerd 1.6 says none: the field stays as it was).
 */
function runtimeHandlersAndFeatures(status: NodeStatus & { features?: NodeStatusFeatures }, inputs: NodeStatusInputs): void {
  const handlers = inputs.runtimeHandlers ?? [];
  if (handlers.length > 0) status.runtimeHandlers = handlers.map((h) => ({ name: h.name, features: { recursiveReadOnlyMounts: h.recursiveReadOnlyMounts, userNamespaces: h.userNamespaces } }));
  else delete status.runtimeHandlers; // an empty list is no field (omitempty)
  if (inputs.runtimeFeatures) status.features = { supplementalGroupsPolicy: inputs.runtimeFeatures.supplementalGroupsPolicy };
}

/** updateNode's check of the labels the kubelet requires (os and arch); sets them, and says whether it had to. */
export function ensureRequiredLabels(node: Node, os: string, arch: string): boolean {
  const labels = (node.metadata.labels ??= {});
  let missing = false;
  if (labels[LabelOSStable] !== os) {
    labels[LabelOSStable] = os;
    missing = true;
  }
  if (labels[LabelArchStable] !== arch) {
    labels[LabelArchStable] = arch;
    missing = true;
  }
  return missing;
}

function nodeAddresses(inputs: NodeStatusInputs): NodeAddress[] {
  const addresses: NodeAddress[] = [];
  if (inputs.nodeIP && inputs.nodeIP !== '0.0.0.0' && inputs.nodeIP !== '::') addresses.push({ type: 'InternalIP', address: inputs.nodeIP });
  addresses.push({ type: 'Hostname', address: inputs.hostname });
  return addresses;
}

/** MachineInfo: the kubelet's resources over whatever else the Node has (extended resources stay), huge page sizes that went away removed. */
function machineInfo(status: NodeStatus, inputs: NodeStatusInputs): void {
  const capacity: Record<string, string> = { ...status.capacity };
  const allocatable: Record<string, string> = { ...status.allocatable };
  for (const name of Object.keys(capacity)) {
    if (isHugePageResourceName(name) && inputs.capacity[name] === undefined) {
      delete capacity[name];
      delete allocatable[name];
    }
  }
  Object.assign(capacity, toResourceList(inputs.capacity));
  Object.assign(allocatable, toResourceList(inputs.allocatable));
  status.capacity = capacity;
  status.allocatable = allocatable;
}

interface PressureText {
  trueReason: string;
  trueMessage: string;
  trueEvent: string;
  falseReason: string;
  falseMessage: string;
  falseEvent: string;
}

/** MemoryPressureCondition, DiskPressureCondition, PIDPressureCondition: the same shape, their own words. */
function pressureCondition(status: NodeStatus, type: string, pressure: boolean, time: string, events: NodeEventReason[], text: PressureText): void {
  const conditions = (status.conditions ??= []);
  let condition = conditions.find((c) => c.type === type);
  if (!condition) {
    condition = { type, status: 'Unknown' };
    conditions.push(condition);
  }
  condition.lastHeartbeatTime = time;
  if (pressure) {
    if (condition.status !== 'True') {
      Object.assign(condition, { status: 'True', reason: text.trueReason, message: text.trueMessage, lastTransitionTime: time });
      events.push(text.trueEvent);
    }
  } else if (condition.status !== 'False') {
    Object.assign(condition, { status: 'False', reason: text.falseReason, message: text.falseMessage, lastTransitionTime: time });
    events.push(text.falseEvent);
  }
}

const REQUIRED_CAPACITIES = ['cpu', 'memory', 'pods', 'ephemeral-storage'];

/**
 * ReadyCondition: True "kubelet is posting ready status", or False
 * KubeletNotReady with the errors aggregated as upstream's
 * errors.NewAggregate prints them (one: itself; several: "[a, b]").
 */
function readyCondition(status: NodeStatus, inputs: NodeStatusInputs, time: string, events: NodeEventReason[]): void {
  const errs = [inputs.runtimeErrors, inputs.networkErrors].filter((e): e is string => e !== undefined && e !== '');
  const missing = REQUIRED_CAPACITIES.filter((r) => status.capacity?.[r] === undefined);
  if (missing.length > 0) errs.push(`missing node capacity for resources: ${missing.join(', ')}`);
  const next: NodeCondition =
    errs.length === 0
      ? { type: 'Ready', status: 'True', reason: 'KubeletReady', message: 'kubelet is posting ready status', lastHeartbeatTime: time }
      : { type: 'Ready', status: 'False', reason: 'KubeletNotReady', message: errs.length === 1 ? (errs[0] ?? '') : `[${errs.join(', ')}]`, lastHeartbeatTime: time };
  const conditions = (status.conditions ??= []);
  const i = conditions.findIndex((c) => c.type === 'Ready');
  if (i < 0) {
    conditions.push({ ...next, lastTransitionTime: time });
    return;
  }
  const prev = conditions[i];
  if (prev?.status === next.status) next.lastTransitionTime = prev.lastTransitionTime;
  else {
    next.lastTransitionTime = time;
    events.push(next.status === 'True' ? 'NodeReady' : 'NodeNotReady');
  }
  conditions[i] = next;
}

/** nodeStatusHasChanged: anything but the conditions' heartbeats; quantities compared by value, as Semantic.DeepEqual does. */
export function nodeStatusHasChanged(original: NodeStatus | undefined, status: NodeStatus | undefined): boolean {
  if (!original && !status) return false;
  if (!original || !status) return true;
  if (nodeConditionsHaveChanged(original.conditions ?? [], status.conditions ?? [])) return true;
  const { conditions: _a, capacity: c1, allocatable: a1, ...rest1 } = original;
  const { conditions: _b, capacity: c2, allocatable: a2, ...rest2 } = status;
  if (!sameResourceList(c1, c2) || !sameResourceList(a1, a2)) return true;
  return canonical(rest1) !== canonical(rest2);
}

function nodeConditionsHaveChanged(a: NodeCondition[], b: NodeCondition[]): boolean {
  if (a.length !== b.length) return true;
  const strip = (cs: NodeCondition[]) => canonical([...cs].sort((x, y) => x.type.localeCompare(y.type)).map(({ lastHeartbeatTime: _, ...c }) => c));
  return strip(a) !== strip(b);
}

function sameResourceList(a: Record<string, string> | undefined, b: Record<string, string> | undefined): boolean {
  const ka = Object.keys(a ?? {});
  if (ka.length !== Object.keys(b ?? {}).length) return false;
  return ka.every((k) => sameQuantity(a?.[k], b?.[k]));
}

function sameQuantity(a: string | undefined, b: string | undefined): boolean {
  if (a === undefined || b === undefined) return a === b;
  if (a === b) return true;
  try {
    return parseQuantity(a) === parseQuantity(b);
  } catch {
    return false;
  }
}

/** JSON with sorted keys, for comparing objects whose key order may differ. */
function canonical(v: unknown): string {
  return JSON.stringify(v, (_k, x: unknown) => (x && typeof x === 'object' && !Array.isArray(x) ? Object.fromEntries(Object.entries(x).sort(([p], [q]) => p.localeCompare(q))) : x));
}

/** A resource amount of the Node (for tests and logs): the allocatable of `resource` in its base unit. */
export function allocatableOf(node: Node, resource: string): number | undefined {
  const q = node.status?.allocatable?.[resource];
  return q === undefined ? undefined : resourceAmount(resource, q);
}
