export { AdmitReason, canAdmitPod, nodeInfoFrom } from './admission.js';
export { SYSCTL_FORBIDDEN_REASON, SysctlAllowlist, normalizeSysctlName, safeSysctlAllowlist } from './sysctl.js';
export type { AdmitResult, NodeInfo } from './admission.js';
export { APPARMOR_NOT_ENABLED, appArmorRefusal, validateAppArmor } from './apparmor.js';
export type { AppArmorHost } from './apparmor.js';
export { EVICTION_REASON, SYSTEM_CRITICAL_PRIORITY, TAINT_NODE_MEMORY_PRESSURE, evictionAdmit, isCriticalPod, podIsEvicted } from './eviction.js';
export { VOLUME_SOURCE_FIELDS, applyPodDefaults, defaultImagePullPolicy, parseImageReference } from './defaults.js';
export { KubeletLabels } from './labels.js';
export { extractPods, parseManifest } from './manifest.js';
export type { ManifestDocument, ParsedManifest } from './manifest.js';
export { CONFIG_SEEN_ANNOTATION, canonicalJson, diffListing, emptyOperations, hasOperations, podsDifferSemantically } from './pod-update.js';
export type { PodOperations } from './pod-update.js';
export { QuantityError, cpuMillis, memoryBytes, nanosToMillis, nanosToUnits, parseQuantity, parseQuantityNanos } from './quantity.js';
export { hostPorts, podRequests } from './resources.js';
export type { HostPort, PodRequests } from './resources.js';
export {
  ConfigFirstSeenAnnotation,
  ConfigHashAnnotation,
  ConfigMirrorAnnotation,
  ConfigSourceAnnotation,
  generatePodName,
  isMirrorPod,
  isStaticPod,
  makeStaticPod,
  staticPodUID,
} from './static-pod.js';
export type { StaticPodOrigin } from './static-pod.js';
export { formatFieldErrors } from './validation/field.js';
export type { FieldError } from './validation/field.js';
export { isDNS1123Label, isDNS1123Subdomain, isValidPortName } from './validation/names.js';
export { validatePod } from './validation/spec.js';
export { KubeletAnnotations, findContainerStatus, runtimeContainerState, toRuntimeContainerStatus, toRuntimePodStatus } from './runtime-status.js';
export type { RuntimeContainerState, RuntimeContainerStatus, RuntimePodStatus } from './runtime-status.js';
export { generateAPIPodStatus } from './pod-status.js';
export type { ContainerWaitingReason, StatusInputs } from './pod-status.js';
export { computePodPhase, isPodPhaseTerminal } from './pod-phase.js';
export type { PodPhaseOptions } from './pod-phase.js';
export { containersReadyCondition, podReadyCondition, updateLastTransitionTimes, withContainerProbeResult } from './pod-conditions.js';
export { getPodQOS } from './qos.js';
export type { PodQOSClass } from './qos.js';
export { terminatePodStatus } from './terminate.js';
export { rfc3339 } from './api-time.js';
export { checkSubPath, expandContainerCommandOnlyStatic, expandContainerVolumeMounts, parseContainerID, shouldContainerBeRestarted } from './container-helpers.js';
export type { ContainerID } from './container-helpers.js';
export { expand, mappingFuncFor } from './expansion.js';
export { fromServices, getServiceEnvVarMap, isServiceIPSet } from './envvars.js';
export { parseColonSeparatedMapStringString, parseMapStringString } from './flags.js';
export { hasAnyRegularContainerCreated, networkNamespaceForPod, podSandboxChanged } from './kuberuntime.js';
export type { SandboxChange } from './kuberuntime.js';
export { PodConditionType, PodConditionsByKubelet, hasRestartableInitContainer, podConditionByKubelet, podConditionSharedByKubelet } from './kubetypes.js';
export { joinHostPort } from './net.js';
export { LEGACY_CONTAINER_LOGS_DIR, containerIdOfLegacyLogSymlink, legacyLogSymlink } from './legacy-log.js';
export { findContainerStatusByID, getContainerStatus, isRestartableInitContainer } from './pod-util.js';
export { applyProbeResults } from './probe-status.js';
export type { ContainerProbeState } from './probe-status.js';
export { pastActiveDeadline } from './active-deadline.js';
export { DEFAULT_PLEG_RELIST_THRESHOLD_MS, MAX_WAIT_FOR_CONTAINER_RUNTIME_MS, NodeHealth, RUNTIME_UP_PERIOD_MS, RuntimeState, RuntimeStateUpdater, plegHealth, runtimeHandlersAndFeatures } from './runtime-state.js';
export type { RuntimeFeaturesInfo, RuntimeHandlerInfo, RuntimeStateUpdaterOptions } from './runtime-state.js';
export {
  EvictionSignal,
  configuredCapacity,
  formatResource,
  hardEvictionReservation,
  isHugePageResourceName,
  nodeAllocatable,
  nodeReservationsFrom,
  parseEvictionHard,
  parseReservation,
  resourceAmount,
  thresholdAmount,
  toResourceList,
} from './node-allocatable.js';
export type { EvictionThreshold, NodeReservations, NodeResourceSettings, ResourceAmounts } from './node-allocatable.js';
export { DEFAULT_NODE_LABELS, LabelArchBeta, LabelArchStable, LabelHostname, LabelOSBeta, LabelOSStable, goArch, nodeLabels } from './node-labels.js';
export { extractFieldPathAsString, formatMap, isObjectFieldPath } from './fieldpath.js';
