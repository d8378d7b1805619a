import type { NodeSelectorRequirement, NodeSelectorTerm, Pod } from '@app/contracts';
import { cpuMillis, memoryBytes } from './quantity.js';
import { nodeLabels } from './node-labels.js';
import { hostPorts, podRequests, type HostPort } from './resources.js';
import { SysctlAllowlist, safeSysctlAllowlist } from './sysctl.js';
import { appArmorRefusal } from './apparmor.js';
import type { AppArmorHost } from './apparmor.js';

/**
 * The kubelet's own admission of a pod it is about to run, in the order of
 * its admit handlers: the sysctl allowlist (pkg/kubelet/sysctl, safe
 * sysctls and --allowed-unsafe-sysctls), then
 * pkg/kubelet/lifecycle/predicate.go, predicateAdmitHandler.Admit: the
 * pod's OS first, then the scheduler's general predicates that the kubelet
 * re-runs itself (pkg/scheduler AdmissionCheck): resources (pods, cpu,
 * memory), node affinity, node name and host ports; then AppArmor
 * (lifecycle.appArmorAdmitHandler, apparmor.ts). Every failure is
 * collected in that order and the first one is reported, so a pod that is
 * both too big and on the wrong node is OutOfcpu, not NodeAffinity.
 *
 * Not modelled: taints (the kubelet only checks NoExecute ones, and never
 * for static pods), extended resources and ephemeral storage, pod overhead
 * and pod-level resources, and the critical-pod preemption the kubelet tries
 * when only resources are short (that evicts pods: the caller's business).
 */

/**
 * The node as admission sees it: the scheduler framework's NodeInfo (its
 * node's name and labels, and its allocatable resources parsed once), not a
 * core/v1 Node.
 */
export interface NodeInfo {
  name: string;
  /** e.g. kubernetes.io/hostname, kubernetes.io/os=linux, kubernetes.io/arch. */
  labels: Record<string, string>;
  allocatable: { cpuMillis: number; memoryBytes: number; pods: number };
  /** The OS the kubelet runs on (runtime.GOOS): "linux". */
  os: string;
  /** The sysctls pods may set (safe ones and --allowed-unsafe-sysctls); none: no sysctl check. */
  sysctls?: SysctlAllowlist;
  /** Whether the host enforces AppArmor (apparmor.NewValidator); none: no AppArmor check (upstream adds it on Linux only). */
  appArmor?: AppArmorHost;
  /**
   * Whether the runtime honours SupplementalGroupsPolicy Strict (the Node's status.features, from the runtime's
   * Status: containerd 2 does, 1.6 says nothing); absent: not known to, as upstream takes a Node without features.
   */
  supplementalGroupsPolicy?: boolean;
}

export interface AdmitResult {
  admit: boolean;
  /** A CamelCase reason for status.reason, set when admit is false. */
  reason?: string;
  /** A sentence for status.message, set when admit is false. */
  message?: string;
}

/** The reasons canAdmitPod gives, spelled as the kubelet spells them. */
export const AdmitReason = {
  /** The pod's kubernetes.io/os label names another OS (predicate.go). */
  PodOSSelectorNodeLabelDoesNotMatch: 'PodOSSelectorNodeLabelDoesNotMatch',
  /** spec.os.name names another OS (predicate.go). */
  PodOSNotSupported: 'PodOSNotSupported',
  /** A sysctl that is neither safe nor allowed (sysctl/allowlist.go ForbiddenReason). */
  SysctlForbidden: 'SysctlForbidden',
  /** "OutOf" + the resource name (predicate.go InsufficientResourcePrefix). */
  OutOfPods: 'OutOfpods',
  OutOfCPU: 'OutOfcpu',
  OutOfMemory: 'OutOfmemory',
  /** The predicate (scheduler plugin) names, used as reasons for PredicateFailureError. */
  NodeAffinity: 'NodeAffinity',
  NodeName: 'NodeName',
  NodePorts: 'NodePorts',
  /** lifecycle.AppArmorNotAdmittedReason: a profile the host cannot enforce. */
  AppArmor: 'AppArmor',
  /** predicate.go SupplementalGroupsPolicyNotSupported: Strict asked of a runtime that does not honour it. */
  SupplementalGroupsPolicyNotSupported: 'SupplementalGroupsPolicyNotSupported',
} as const;
export type AdmitReason = (typeof AdmitReason)[keyof typeof AdmitReason];

const LABEL_OS = 'kubernetes.io/os';

const ADMIT: AdmitResult = { admit: true };

function reject(reason: AdmitReason, message: string): AdmitResult {
  return { admit: false, reason, message };
}

/** predicate.go PredicateFailureError.Error(), with the scheduler plugin's reason. */
function predicateFailure(predicate: AdmitReason, why: string): AdmitResult {
  return reject(predicate, `Predicate ${predicate} failed: ${why}`);
}

/** predicate.go InsufficientResourceError.Error(). */
function insufficient(reason: AdmitReason, resource: string, requested: number, used: number, capacity: number): AdmitResult {
  return reject(reason, `Node didn't have enough resource: ${resource}, requested: ${requested}, used: ${used}, capacity: ${capacity}`);
}

/**
 * Whether the node can run `pod` beside `activePods` (the pods already
 * admitted and still active; `pod` is not among them). Throws QuantityError
 * if a pod carries a malformed quantity.
 */
export function canAdmitPod(activePods: readonly Pod[], pod: Pod, node: NodeInfo): AdmitResult {
  const sysctls = node.sysctls?.admit(pod);
  if (sysctls && !sysctls.admit) return reject(AdmitReason.SysctlForbidden, sysctls.message);
  // The kubelet forces its node's OS label to its own OS before comparing;
  // it reads the pod's *labels* here, not its nodeSelector (a nodeSelector on
  // kubernetes.io/os is node affinity, checked below).
  const podOSLabel = pod.metadata.labels?.[LABEL_OS];
  if (podOSLabel !== undefined && podOSLabel !== node.os) {
    return reject(
      AdmitReason.PodOSSelectorNodeLabelDoesNotMatch,
      "Failed to admit pod as the `kubernetes.io/os` label doesn't match node label",
    );
  }
  if (pod.spec.os !== undefined && pod.spec.os.name !== node.os) {
    return reject(AdmitReason.PodOSNotSupported, "Failed to admit pod as the OS field doesn't match node OS");
  }
  // rejectPodAdmissionBasedOnSupplementalGroupsPolicy: a runtime that ignored Strict would give the container the
  // groups of its image's /etc/group, which the pod asked not to have.
  if (supplementalGroupsPolicyOf(pod) === 'Strict' && node.supplementalGroupsPolicy !== true) {
    return reject(AdmitReason.SupplementalGroupsPolicyNotSupported, 'SupplementalGroupsPolicy=Strict is not supported in this node');
  }
  const appArmor = node.appArmor && appArmorRefusal(pod, node.appArmor);
  return generalFilter(activePods, pod, node) ?? (appArmor ? reject(AdmitReason.AppArmor, appArmor) : ADMIT);
}

/** PodSecurityContext.supplementalGroupsPolicy (v1.31, newer than the API types here). */
function supplementalGroupsPolicyOf(pod: Pod): unknown {
  return (pod.spec.securityContext as { supplementalGroupsPolicy?: unknown } | undefined)?.supplementalGroupsPolicy;
}

/** The scheduler's AdmissionCheck, in its order, stopping at the first failure. */
function generalFilter(activePods: readonly Pod[], pod: Pod, node: NodeInfo): AdmitResult | undefined {
  return (
    fitsResources(activePods, pod, node) ??
    (matchesNodeAffinity(pod, node) ? undefined : predicateFailure(AdmitReason.NodeAffinity, "node(s) didn't match Pod's node affinity/selector")) ??
    fitsNodeName(pod, node) ??
    fitsHostPorts(activePods, pod)
  );
}

/** noderesources.Fits: pods, then cpu, then memory. */
function fitsResources(activePods: readonly Pod[], pod: Pod, node: NodeInfo): AdmitResult | undefined {
  const { allocatable } = node;
  if (activePods.length + 1 > allocatable.pods) {
    return insufficient(AdmitReason.OutOfPods, 'pods', 1, activePods.length, allocatable.pods);
  }
  const want = podRequests(pod);
  // A pod that asks for nothing fits however full the node is.
  if (want.cpuMillis === 0 && want.memoryBytes === 0) return undefined;

  let usedCPU = 0;
  let usedMemory = 0;
  for (const p of activePods) {
    const r = podRequests(p);
    usedCPU += r.cpuMillis;
    usedMemory += r.memoryBytes;
  }
  if (want.cpuMillis > 0 && want.cpuMillis > allocatable.cpuMillis - usedCPU) {
    return insufficient(AdmitReason.OutOfCPU, 'cpu', want.cpuMillis, usedCPU, allocatable.cpuMillis);
  }
  if (want.memoryBytes > 0 && want.memoryBytes > allocatable.memoryBytes - usedMemory) {
    return insufficient(AdmitReason.OutOfMemory, 'memory', want.memoryBytes, usedMemory, allocatable.memoryBytes);
  }
  return undefined;
}

/** nodename.Fits. */
function fitsNodeName(pod: Pod, node: NodeInfo): AdmitResult | undefined {
  const wanted = pod.spec.nodeName;
  if (wanted === undefined || wanted === '' || wanted === node.name) return undefined;
  return predicateFailure(AdmitReason.NodeName, "node(s) didn't match the requested node name");
}

/**
 * The labels node affinity is matched against. The OS check above rewrites
 * the kubelet's node object's OS label in place when the node has labels at
 * all, and node affinity then reads that same object.
 */
function effectiveNodeLabels(node: NodeInfo): Record<string, string> {
  if (Object.keys(node.labels).length === 0) return node.labels;
  return { ...node.labels, [LABEL_OS]: node.os };
}

/**
 * component-helpers GetRequiredNodeAffinity(pod).Match(node): every
 * nodeSelector pair, and, if required node affinity is set, at least one of
 * its terms.
 */
function matchesNodeAffinity(pod: Pod, node: NodeInfo): boolean {
  const labels = effectiveNodeLabels(node);
  for (const [key, value] of Object.entries(pod.spec.nodeSelector ?? {})) {
    if (labels[key] !== value) return false;
  }
  const required = pod.spec.affinity?.nodeAffinity?.requiredDuringSchedulingIgnoredDuringExecution;
  if (required === undefined) return true;
  // No terms match nothing; a term that does not parse is skipped.
  return required.nodeSelectorTerms.some((term) => termMatches(term, labels, { 'metadata.name': node.name }));
}

function termMatches(term: NodeSelectorTerm, labels: Record<string, string>, fields: Record<string, string>): boolean {
  const expressions = term.matchExpressions ?? [];
  const fieldExpressions = term.matchFields ?? [];
  // An empty term matches no node.
  if (expressions.length === 0 && fieldExpressions.length === 0) return false;
  return expressions.every((r) => labelRequirementMatches(r, labels)) && fieldExpressions.every((r) => fieldRequirementMatches(r, fields));
}

/** labels.Requirement.Matches, false for a requirement the API would reject. */
function labelRequirementMatches(r: NodeSelectorRequirement, labels: Record<string, string>): boolean {
  const values = r.values ?? [];
  const has = Object.hasOwn(labels, r.key);
  const value = labels[r.key];
  switch (r.operator) {
    case 'In':
      return values.length > 0 && value !== undefined && values.includes(value);
    case 'NotIn':
      return values.length > 0 && (value === undefined || !values.includes(value));
    case 'Exists':
      return values.length === 0 && has;
    case 'DoesNotExist':
      return values.length === 0 && !has;
    case 'Gt':
    case 'Lt': {
      const [bound] = values;
      if (values.length !== 1 || bound === undefined || !isInteger(bound) || value === undefined || !isInteger(value)) return false;
      const [have, limit] = [BigInt(value), BigInt(bound)];
      return r.operator === 'Gt' ? have > limit : have < limit;
    }
    default:
      return false;
  }
}

/** Field requirements: In or NotIn with exactly one value. */
function fieldRequirementMatches(r: NodeSelectorRequirement, fields: Record<string, string>): boolean {
  const [wanted] = r.values ?? [];
  if (r.values?.length !== 1 || wanted === undefined) return false;
  const have = fields[r.key] ?? '';
  if (r.operator === 'In') return have === wanted;
  if (r.operator === 'NotIn') return have !== wanted;
  return false;
}

function isInteger(s: string): boolean {
  return /^[+-]?\d+$/.test(s);
}

/** 0.0.0.0, :: and their spellings bind every address (HostPortInfo sanitize). */
function bindsAll(hostIP: string): boolean {
  if (hostIP === '') return true;
  if (/^\d{1,3}(\.\d{1,3}){3}$/.test(hostIP)) return hostIP.split('.').every((octet) => Number(octet) === 0);
  return hostIP.includes(':') && /^[0:]+$/.test(hostIP);
}

/** HostPortInfo.CheckConflict: same port and protocol, overlapping addresses. */
function conflicts(want: HostPort, used: HostPort): boolean {
  if (want.port !== used.port || want.protocol !== used.protocol) return false;
  return bindsAll(want.hostIP) || bindsAll(used.hostIP) || want.hostIP === used.hostIP;
}

/**
 * nodeports.Fits. The message is upstream's, with the ports that clash
 * appended so that a user can see which ones.
 */
function fitsHostPorts(activePods: readonly Pod[], pod: Pod): AdmitResult | undefined {
  const wanted = hostPorts(pod);
  if (wanted.length === 0) return undefined;
  const used = activePods.flatMap(hostPorts);
  const clashing = new Set<string>();
  for (const want of wanted) {
    if (used.some((u) => conflicts(want, u))) {
      clashing.add(bindsAll(want.hostIP) ? `${want.port}/${want.protocol}` : `${want.hostIP}:${want.port}/${want.protocol}`);
    }
  }
  if (clashing.size === 0) return undefined;
  return predicateFailure(
    AdmitReason.NodePorts,
    `node(s) didn't have free ports for the requested pod ports (${[...clashing].join(', ')})`,
  );
}

/**
 * A NodeInfo for this kubelet's node: allocatable from quantities, and the
 * labels the kubelet sets on its own Node (node-labels.ts: hostname, os,
 * arch) under any the caller gives. The OS is linux: the runtime this project drives.
 */
export function nodeInfoFrom(opts: {
  name: string;
  cpu: string;
  memory: string;
  maxPods: number;
  labels?: Record<string, string>;
  /** --allowed-unsafe-sysctls: names and `prefix*` patterns allowed beside the safe ones (throws for one not namespaced). */
  allowedUnsafeSysctls?: readonly string[];
  /** The kernel's release (os.release()), which decides the safe sysctls it namespaces. */
  kernelRelease?: string;
}): NodeInfo {
  return {
    sysctls: new SysctlAllowlist([...safeSysctlAllowlist(opts.kernelRelease), ...(opts.allowedUnsafeSysctls ?? [])]),
    name: opts.name,
    labels: nodeLabels(opts.name, opts.labels),
    allocatable: { cpuMillis: cpuMillis(opts.cpu), memoryBytes: memoryBytes(opts.memory), pods: opts.maxPods },
    os: 'linux',
  };
}
