export { AdmitReason, canAdmitPod, nodeInfoFrom } from './admission.js';
export type { AdmitResult, NodeInfo } from './admission.js';
export { applyPodDefaults, defaultImagePullPolicy, parseImageReference } from './defaults.js';
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
  staticPodHash,
  staticPodUID,
} from './static-pod.js';
export type { StaticPodOrigin } from './static-pod.js';
export { formatFieldErrors, isDNS1123Label, isDNS1123Subdomain, isValidPortName, validatePod } from './validation.js';
export type { FieldError } from './validation.js';
export { KubeletAnnotations, findContainerStatus, runtimeContainerState, toRuntimeContainerStatus, toRuntimePodStatus } from './runtime-status.js';
export type { RuntimeContainerState, RuntimeContainerStatus, RuntimePodStatus } from './runtime-status.js';
export { computePodPhase, containersReadyCondition, generateAPIPodStatus, getPodQOS, isPodPhaseTerminal, podReadyCondition, terminatePodStatus } from './pod-status.js';
export type { ContainerWaitingReason, PodPhaseOptions, PodQOSClass, StatusInputs } from './pod-status.js';
export { pastActiveDeadline } from './active-deadline.js';
