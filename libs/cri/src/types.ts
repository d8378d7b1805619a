/**
 * CRI `runtime.v1` messages as TypeScript types.
 *
 * These types mirror proto/runtime/v1/api.proto field for field, in the
 * JSON-ish shape that @grpc/proto-loader produces and accepts when loaded with
 * `{ keepCase: false, longs: String, enums: String, defaults: true,
 * arrays: true, objects: true, oneofs: true }`:
 *
 * - field names are lowerCamelCase (`pod_sandbox_id` -> `podSandboxId`);
 *   names that upstream does not spell in snake_case keep their first letter
 *   (`CDI_devices` -> `CDIDevices`, PSI fields `Full`, `Total`, `Avg10`);
 * - int64 / uint64 are decimal strings (`Int64`) in responses; requests may
 *   also give them as numbers (`Int64Input`); int32 / uint32 / double are
 *   numbers;
 * - enums are their value names as string literals;
 * - map<string, string> is `Record<string, string>`, repeated is an array;
 * - bytes are base64 text: the cri-gateway adds `bytes: String` to the options
 *   above so replies survive JSON (without it proto-loader yields a Buffer).
 *   Only ExecSyncResponse has bytes.
 *
 * Two shapes, one rule each:
 * - Response messages (what the runtime returns) are typed as decoded with
 *   `defaults: true`: scalars, arrays and maps are always present; nested
 *   messages are optional and may be `null` when unset.
 * - Request messages (what the kubelet sends) have every field optional;
 *   an omitted field is the proto default. Messages that travel both ways
 *   (ImageSpec, Mount, LinuxContainerResources, ...) are declared once in
 *   response shape and used in requests through `CriInput<T>`; the ones with
 *   int64 fields take the int64 type as a parameter, so the request side
 *   (`CriInput<LinuxContainerResources<Int64Input>>`) accepts numbers too.
 *
 * Keep this file in step with the .proto: every change there lands here too.
 */

// ---------------------------------------------------------------------------
// Scalars and helpers
// ---------------------------------------------------------------------------

/** An int64 or uint64 value as decoded: a decimal string (proto-loader `longs: String`). */
export type Int64 = string;

/** An int64 or uint64 value in a request: a decimal string or a safe integer. */
export type Int64Input = string | number;

/**
 * The request-side view of a message declared in response shape: every field
 * optional, recursively; nested messages may also be `null`. Maps and scalars
 * keep their types.
 */
export type CriInput<T> = T extends readonly (infer E)[]
  ? CriInput<E>[]
  : T extends object
    ? string extends keyof T
      ? T
      : { [K in keyof T]?: CriInput<NonNullable<T[K]>> | (null extends T[K] ? null : never) }
    : T;

// ---------------------------------------------------------------------------
// Enums (value names, as proto-loader `enums: String` yields them)
// ---------------------------------------------------------------------------

export type Protocol = 'TCP' | 'UDP' | 'SCTP';

export type NamespaceMode = 'POD' | 'CONTAINER' | 'NODE' | 'TARGET';

export type SupplementalGroupsPolicy = 'Merge' | 'Strict';

/** SecurityProfile.ProfileType. */
export type ProfileType = 'RuntimeDefault' | 'Unconfined' | 'Localhost';

export type PodSandboxState = 'SANDBOX_READY' | 'SANDBOX_NOTREADY';

export type ContainerState = 'CONTAINER_CREATED' | 'CONTAINER_RUNNING' | 'CONTAINER_EXITED' | 'CONTAINER_UNKNOWN';

export type MountPropagation = 'PROPAGATION_PRIVATE' | 'PROPAGATION_HOST_TO_CONTAINER' | 'PROPAGATION_BIDIRECTIONAL';

export type ContainerEventType =
  | 'CONTAINER_CREATED_EVENT'
  | 'CONTAINER_STARTED_EVENT'
  | 'CONTAINER_STOPPED_EVENT'
  | 'CONTAINER_DELETED_EVENT';

/** Stop signal of a container; RUNTIME_DEFAULT leaves it to the image / runtime. */
export type Signal =
  | 'RUNTIME_DEFAULT'
  | 'SIGABRT'
  | 'SIGALRM'
  | 'SIGBUS'
  | 'SIGCHLD'
  | 'SIGCLD'
  | 'SIGCONT'
  | 'SIGFPE'
  | 'SIGHUP'
  | 'SIGILL'
  | 'SIGINT'
  | 'SIGIO'
  | 'SIGIOT'
  | 'SIGKILL'
  | 'SIGPIPE'
  | 'SIGPOLL'
  | 'SIGPROF'
  | 'SIGPWR'
  | 'SIGQUIT'
  | 'SIGSEGV'
  | 'SIGSTKFLT'
  | 'SIGSTOP'
  | 'SIGSYS'
  | 'SIGTERM'
  | 'SIGTRAP'
  | 'SIGTSTP'
  | 'SIGTTIN'
  | 'SIGTTOU'
  | 'SIGURG'
  | 'SIGUSR1'
  | 'SIGUSR2'
  | 'SIGVTALRM'
  | 'SIGWINCH'
  | 'SIGXCPU'
  | 'SIGXFSZ'
  | 'SIGRTMIN'
  | 'SIGRTMINPLUS1'
  | 'SIGRTMINPLUS2'
  | 'SIGRTMINPLUS3'
  | 'SIGRTMINPLUS4'
  | 'SIGRTMINPLUS5'
  | 'SIGRTMINPLUS6'
  | 'SIGRTMINPLUS7'
  | 'SIGRTMINPLUS8'
  | 'SIGRTMINPLUS9'
  | 'SIGRTMINPLUS10'
  | 'SIGRTMINPLUS11'
  | 'SIGRTMINPLUS12'
  | 'SIGRTMINPLUS13'
  | 'SIGRTMINPLUS14'
  | 'SIGRTMINPLUS15'
  | 'SIGRTMAXMINUS14'
  | 'SIGRTMAXMINUS13'
  | 'SIGRTMAXMINUS12'
  | 'SIGRTMAXMINUS11'
  | 'SIGRTMAXMINUS10'
  | 'SIGRTMAXMINUS9'
  | 'SIGRTMAXMINUS8'
  | 'SIGRTMAXMINUS7'
  | 'SIGRTMAXMINUS6'
  | 'SIGRTMAXMINUS5'
  | 'SIGRTMAXMINUS4'
  | 'SIGRTMAXMINUS3'
  | 'SIGRTMAXMINUS2'
  | 'SIGRTMAXMINUS1'
  | 'SIGRTMAX';

// ---------------------------------------------------------------------------
// Messages used in both directions (response shape; wrap in CriInput to send)
// ---------------------------------------------------------------------------

export interface Int64Value<I extends Int64Input = Int64> {
  value: I;
}

export interface UInt64Value {
  value: Int64;
}

export interface IDMapping {
  hostId: number;
  containerId: number;
  length: number;
}

export interface UserNamespace {
  mode: NamespaceMode;
  uids: IDMapping[];
  gids: IDMapping[];
}

export interface NamespaceOption {
  network: NamespaceMode;
  pid: NamespaceMode;
  ipc: NamespaceMode;
  /** Container whose namespaces a TARGET mode joins. */
  targetId: string;
  usernsOptions?: UserNamespace | null;
}

export interface HugepageLimit<I extends Int64Input = Int64> {
  /** e.g. "2MB", "1GB". */
  pageSize: string;
  limit: I;
}

/** cgroup settings; "0" / "" / empty means not specified. */
export interface LinuxContainerResources<I extends Int64Input = Int64> {
  cpuPeriod: I;
  cpuQuota: I;
  cpuShares: I;
  memoryLimitInBytes: I;
  oomScoreAdj: I;
  cpusetCpus: string;
  cpusetMems: string;
  hugepageLimits: HugepageLimit<I>[];
  /** Raw cgroup v2 files, e.g. { "memory.high": "1073741824" }. */
  unified: Record<string, string>;
  memorySwapLimitInBytes: I;
}

export interface PodSandboxMetadata {
  name: string;
  uid: string;
  namespace: string;
  attempt: number;
}

export interface ContainerMetadata {
  name: string;
  attempt: number;
}

export interface ImageSpec {
  image: string;
  annotations: Record<string, string>;
  userSpecifiedImage: string;
  runtimeHandler: string;
  imageRef: string;
}

export interface Mount {
  containerPath: string;
  hostPath: string;
  readonly: boolean;
  selinuxRelabel: boolean;
  propagation: MountPropagation;
  uidMappings: IDMapping[];
  gidMappings: IDMapping[];
  recursiveReadOnly: boolean;
  /** Image volume: mount this image instead of hostPath. */
  image?: ImageSpec | null;
  imageSubPath: string;
}

// ---------------------------------------------------------------------------
// Request-only messages (every field optional)
// ---------------------------------------------------------------------------

export interface KeyValue {
  key?: string;
  value?: string;
}

export interface SELinuxOption {
  user?: string;
  role?: string;
  type?: string;
  level?: string;
}

export interface SecurityProfile {
  profileType?: ProfileType;
  /** With Localhost only: seccomp file path or AppArmor profile name. */
  localhostRef?: string;
}

export interface Capability {
  addCapabilities?: string[];
  dropCapabilities?: string[];
  addAmbientCapabilities?: string[];
}

export interface DNSConfig {
  servers?: string[];
  searches?: string[];
  options?: string[];
}

export interface PortMapping {
  protocol?: Protocol;
  containerPort?: number;
  /** 0 means no host port. */
  hostPort?: number;
  hostIp?: string;
}

export interface LinuxSandboxSecurityContext {
  namespaceOptions?: CriInput<NamespaceOption> | null;
  selinuxOptions?: SELinuxOption | null;
  runAsUser?: CriInput<Int64Value<Int64Input>> | null;
  readonlyRootfs?: boolean;
  supplementalGroups?: Int64Input[];
  privileged?: boolean;
  /** @deprecated use `seccomp`. */
  seccompProfilePath?: string;
  runAsGroup?: CriInput<Int64Value<Int64Input>> | null;
  seccomp?: SecurityProfile | null;
  apparmor?: SecurityProfile | null;
  supplementalGroupsPolicy?: SupplementalGroupsPolicy;
}

export interface LinuxPodSandboxConfig {
  cgroupParent?: string;
  securityContext?: LinuxSandboxSecurityContext | null;
  sysctls?: Record<string, string>;
  overhead?: CriInput<LinuxContainerResources<Int64Input>> | null;
  resources?: CriInput<LinuxContainerResources<Int64Input>> | null;
}

export interface PodSandboxConfig {
  metadata?: CriInput<PodSandboxMetadata> | null;
  hostname?: string;
  /** e.g. /var/log/pods/<namespace>_<name>_<uid>/ */
  logDirectory?: string;
  dnsConfig?: DNSConfig | null;
  portMappings?: PortMapping[];
  labels?: Record<string, string>;
  annotations?: Record<string, string>;
  linux?: LinuxPodSandboxConfig | null;
}

export interface Device {
  containerPath?: string;
  hostPath?: string;
  /** Any of r, w, m. */
  permissions?: string;
}

export interface CDIDevice {
  name?: string;
}

export interface LinuxContainerSecurityContext {
  capabilities?: Capability | null;
  privileged?: boolean;
  namespaceOptions?: CriInput<NamespaceOption> | null;
  selinuxOptions?: SELinuxOption | null;
  runAsUser?: CriInput<Int64Value<Int64Input>> | null;
  runAsUsername?: string;
  readonlyRootfs?: boolean;
  supplementalGroups?: Int64Input[];
  /** @deprecated use `apparmor`. */
  apparmorProfile?: string;
  /** @deprecated use `seccomp`. */
  seccompProfilePath?: string;
  noNewPrivs?: boolean;
  runAsGroup?: CriInput<Int64Value<Int64Input>> | null;
  maskedPaths?: string[];
  readonlyPaths?: string[];
  seccomp?: SecurityProfile | null;
  apparmor?: SecurityProfile | null;
  supplementalGroupsPolicy?: SupplementalGroupsPolicy;
}

export interface LinuxContainerConfig {
  resources?: CriInput<LinuxContainerResources<Int64Input>> | null;
  securityContext?: LinuxContainerSecurityContext | null;
}

export interface ContainerConfig {
  metadata?: CriInput<ContainerMetadata> | null;
  image?: CriInput<ImageSpec> | null;
  /** Entrypoint. */
  command?: string[];
  args?: string[];
  workingDir?: string;
  envs?: KeyValue[];
  mounts?: CriInput<Mount>[];
  devices?: Device[];
  labels?: Record<string, string>;
  annotations?: Record<string, string>;
  /** Relative to PodSandboxConfig.logDirectory. */
  logPath?: string;
  stdin?: boolean;
  stdinOnce?: boolean;
  tty?: boolean;
  linux?: LinuxContainerConfig | null;
  /** proto `CDI_devices`. */
  CDIDevices?: CDIDevice[];
  stopSignal?: Signal;
}

export interface PodSandboxStateValue {
  state?: PodSandboxState;
}

export interface PodSandboxFilter {
  id?: string;
  state?: PodSandboxStateValue | null;
  labelSelector?: Record<string, string>;
}

export interface ContainerStateValue {
  state?: ContainerState;
}

export interface ContainerFilter {
  id?: string;
  state?: ContainerStateValue | null;
  podSandboxId?: string;
  labelSelector?: Record<string, string>;
}

export interface ContainerStatsFilter {
  id?: string;
  podSandboxId?: string;
  labelSelector?: Record<string, string>;
}

export interface PodSandboxStatsFilter {
  id?: string;
  labelSelector?: Record<string, string>;
}

export interface ImageFilter {
  image?: CriInput<ImageSpec> | null;
}

/** Registry credentials: password, auth and the tokens are secrets, never log them. */
export interface AuthConfig {
  username?: string;
  password?: string;
  auth?: string;
  serverAddress?: string;
  identityToken?: string;
  registryToken?: string;
}

export interface NetworkConfig {
  podCidr?: string;
}

export interface RuntimeConfig {
  networkConfig?: NetworkConfig | null;
}

// ---------------------------------------------------------------------------
// RuntimeService: requests
// ---------------------------------------------------------------------------

export interface VersionRequest {
  version?: string;
}

export interface StatusRequest {
  verbose?: boolean;
}

export interface UpdateRuntimeConfigRequest {
  runtimeConfig?: RuntimeConfig | null;
}

export interface RunPodSandboxRequest {
  config?: PodSandboxConfig | null;
  runtimeHandler?: string;
}

export interface StopPodSandboxRequest {
  podSandboxId?: string;
}

export interface RemovePodSandboxRequest {
  podSandboxId?: string;
}

export interface PodSandboxStatusRequest {
  podSandboxId?: string;
  verbose?: boolean;
}

export interface ListPodSandboxRequest {
  filter?: PodSandboxFilter | null;
}

export interface CreateContainerRequest {
  podSandboxId?: string;
  config?: ContainerConfig | null;
  sandboxConfig?: PodSandboxConfig | null;
}

export interface StartContainerRequest {
  containerId?: string;
}

export interface StopContainerRequest {
  containerId?: string;
  /** Grace period in seconds; 0 kills at once. */
  timeout?: Int64Input;
}

export interface RemoveContainerRequest {
  containerId?: string;
}

export interface ListContainersRequest {
  filter?: ContainerFilter | null;
}

export interface ContainerStatusRequest {
  containerId?: string;
  verbose?: boolean;
}

export interface UpdateContainerResourcesRequest {
  containerId?: string;
  linux?: CriInput<LinuxContainerResources<Int64Input>> | null;
  annotations?: Record<string, string>;
}

export interface ReopenContainerLogRequest {
  containerId?: string;
}

export interface ExecSyncRequest {
  containerId?: string;
  cmd?: string[];
  /** Seconds; 0 means no limit. */
  timeout?: Int64Input;
}

export interface ExecRequest {
  containerId?: string;
  cmd?: string[];
  tty?: boolean;
  stdin?: boolean;
  stdout?: boolean;
  stderr?: boolean;
  auditRequestId?: string;
}

export interface AttachRequest {
  containerId?: string;
  stdin?: boolean;
  tty?: boolean;
  stdout?: boolean;
  stderr?: boolean;
  auditRequestId?: string;
}

export interface PortForwardRequest {
  podSandboxId?: string;
  port?: number[];
}

export interface ContainerStatsRequest {
  containerId?: string;
}

export interface ListContainerStatsRequest {
  filter?: ContainerStatsFilter | null;
}

export interface PodSandboxStatsRequest {
  podSandboxId?: string;
}

export interface ListPodSandboxStatsRequest {
  filter?: PodSandboxStatsFilter | null;
}

export type GetEventsRequest = Record<string, never>;

// ---------------------------------------------------------------------------
// RuntimeService: responses
// ---------------------------------------------------------------------------

export interface VersionResponse {
  version: string;
  runtimeName: string;
  runtimeVersion: string;
  runtimeApiVersion: string;
}

/** The kubelet needs types "RuntimeReady" and "NetworkReady" to be true. */
export interface RuntimeCondition {
  type: string;
  status: boolean;
  reason: string;
  message: string;
}

export interface RuntimeStatus {
  conditions: RuntimeCondition[];
}

export interface RuntimeHandlerFeatures {
  recursiveReadOnlyMounts: boolean;
  userNamespaces: boolean;
}

export interface RuntimeHandler {
  /** "" is the default handler. */
  name: string;
  features?: RuntimeHandlerFeatures | null;
}

export interface RuntimeFeatures {
  supplementalGroupsPolicy: boolean;
  userNamespacesHostNetwork: boolean;
}

export interface StatusResponse {
  status?: RuntimeStatus | null;
  /** Debug data (JSON values), only when verbose. */
  info: Record<string, string>;
  runtimeHandlers: RuntimeHandler[];
  features?: RuntimeFeatures | null;
}

export type UpdateRuntimeConfigResponse = Record<string, never>;

export interface RunPodSandboxResponse {
  podSandboxId: string;
}

export type StopPodSandboxResponse = Record<string, never>;

export type RemovePodSandboxResponse = Record<string, never>;

export interface PodIP {
  ip: string;
}

export interface PodSandboxNetworkStatus {
  ip: string;
  /** Other IPs (e.g. the second family), the primary excluded. */
  additionalIps: PodIP[];
}

export interface Namespace {
  options?: NamespaceOption | null;
}

export interface LinuxPodSandboxStatus {
  namespaces?: Namespace | null;
}

export interface PodSandboxStatus {
  id: string;
  metadata?: PodSandboxMetadata | null;
  state: PodSandboxState;
  /** Nanoseconds since the epoch. */
  createdAt: Int64;
  network?: PodSandboxNetworkStatus | null;
  linux?: LinuxPodSandboxStatus | null;
  labels: Record<string, string>;
  annotations: Record<string, string>;
  runtimeHandler: string;
}

export interface ContainerResources {
  linux?: LinuxContainerResources | null;
}

export interface LinuxContainerUser {
  uid: Int64;
  gid: Int64;
  supplementalGroups: Int64[];
}

export interface ContainerUser {
  linux?: LinuxContainerUser | null;
}

export interface ContainerStatus {
  id: string;
  metadata?: ContainerMetadata | null;
  state: ContainerState;
  /** Nanoseconds since the epoch. */
  createdAt: Int64;
  /** "0" if not started. */
  startedAt: Int64;
  /** "0" if not finished. */
  finishedAt: Int64;
  /** Meaningful only when finishedAt is not "0". */
  exitCode: number;
  image?: ImageSpec | null;
  imageRef: string;
  /** "OOMKilled" after a cgroup OOM kill. */
  reason: string;
  message: string;
  labels: Record<string, string>;
  annotations: Record<string, string>;
  mounts: Mount[];
  logPath: string;
  resources?: ContainerResources | null;
  imageId: string;
  user?: ContainerUser | null;
  stopSignal: Signal;
}

export interface PodSandboxStatusResponse {
  status?: PodSandboxStatus | null;
  info: Record<string, string>;
  containersStatuses: ContainerStatus[];
  timestamp: Int64;
}

export interface PodSandbox {
  id: string;
  metadata?: PodSandboxMetadata | null;
  state: PodSandboxState;
  createdAt: Int64;
  labels: Record<string, string>;
  annotations: Record<string, string>;
  runtimeHandler: string;
}

export interface ListPodSandboxResponse {
  items: PodSandbox[];
}

export interface CreateContainerResponse {
  containerId: string;
}

export type StartContainerResponse = Record<string, never>;

export type StopContainerResponse = Record<string, never>;

export type RemoveContainerResponse = Record<string, never>;

export interface Container {
  id: string;
  podSandboxId: string;
  metadata?: ContainerMetadata | null;
  image?: ImageSpec | null;
  imageRef: string;
  state: ContainerState;
  createdAt: Int64;
  labels: Record<string, string>;
  annotations: Record<string, string>;
  imageId: string;
}

export interface ListContainersResponse {
  containers: Container[];
}

export interface ContainerStatusResponse {
  status?: ContainerStatus | null;
  info: Record<string, string>;
}

export type UpdateContainerResourcesResponse = Record<string, never>;

export type ReopenContainerLogResponse = Record<string, never>;

export interface ExecSyncResponse {
  /** base64 (bytes); capped at 16 MiB by the runtime. */
  stdout: string;
  /** base64 (bytes); capped at 16 MiB by the runtime. */
  stderr: string;
  exitCode: number;
}

export interface ExecResponse {
  url: string;
}

export interface AttachResponse {
  url: string;
}

export interface PortForwardResponse {
  url: string;
}

// Stats ---------------------------------------------------------------------

export interface FilesystemIdentifier {
  mountpoint: string;
}

export interface FilesystemUsage {
  timestamp: Int64;
  fsId?: FilesystemIdentifier | null;
  usedBytes?: UInt64Value | null;
  inodesUsed?: UInt64Value | null;
}

/** Pressure stall data; upstream spells these fields in PascalCase. */
export interface PsiData {
  /** Total stall time, nanoseconds. */
  Total: Int64;
  Avg10: number;
  Avg60: number;
  Avg300: number;
}

export interface PsiStats {
  Full?: PsiData | null;
  Some?: PsiData | null;
}

export interface CpuUsage {
  timestamp: Int64;
  usageCoreNanoSeconds?: UInt64Value | null;
  usageNanoCores?: UInt64Value | null;
  psi?: PsiStats | null;
}

export interface MemoryUsage {
  timestamp: Int64;
  workingSetBytes?: UInt64Value | null;
  availableBytes?: UInt64Value | null;
  usageBytes?: UInt64Value | null;
  rssBytes?: UInt64Value | null;
  pageFaults?: UInt64Value | null;
  majorPageFaults?: UInt64Value | null;
  psi?: PsiStats | null;
}

export interface SwapUsage {
  timestamp: Int64;
  swapAvailableBytes?: UInt64Value | null;
  swapUsageBytes?: UInt64Value | null;
}

export interface IoUsage {
  timestamp: Int64;
  psi?: PsiStats | null;
}

export interface ContainerAttributes {
  id: string;
  metadata?: ContainerMetadata | null;
  labels: Record<string, string>;
  annotations: Record<string, string>;
}

export interface ContainerStats {
  attributes?: ContainerAttributes | null;
  cpu?: CpuUsage | null;
  memory?: MemoryUsage | null;
  writableLayer?: FilesystemUsage | null;
  swap?: SwapUsage | null;
  io?: IoUsage | null;
}

export interface ContainerStatsResponse {
  stats?: ContainerStats | null;
}

export interface ListContainerStatsResponse {
  stats: ContainerStats[];
}

export interface NetworkInterfaceUsage {
  name: string;
  rxBytes?: UInt64Value | null;
  rxErrors?: UInt64Value | null;
  txBytes?: UInt64Value | null;
  txErrors?: UInt64Value | null;
}

export interface NetworkUsage {
  timestamp: Int64;
  defaultInterface?: NetworkInterfaceUsage | null;
  interfaces: NetworkInterfaceUsage[];
}

export interface ProcessUsage {
  timestamp: Int64;
  processCount?: UInt64Value | null;
}

export interface LinuxPodSandboxStats {
  cpu?: CpuUsage | null;
  memory?: MemoryUsage | null;
  network?: NetworkUsage | null;
  process?: ProcessUsage | null;
  containers: ContainerStats[];
  io?: IoUsage | null;
}

export interface PodSandboxAttributes {
  id: string;
  metadata?: PodSandboxMetadata | null;
  labels: Record<string, string>;
  annotations: Record<string, string>;
}

export interface PodSandboxStats {
  attributes?: PodSandboxAttributes | null;
  linux?: LinuxPodSandboxStats | null;
}

export interface PodSandboxStatsResponse {
  stats?: PodSandboxStats | null;
}

export interface ListPodSandboxStatsResponse {
  stats: PodSandboxStats[];
}

/** One message of the GetContainerEvents server stream. */
export interface ContainerEventResponse {
  containerId: string;
  containerEventType: ContainerEventType;
  createdAt: Int64;
  podSandboxStatus?: PodSandboxStatus | null;
  containersStatuses: ContainerStatus[];
}

// ---------------------------------------------------------------------------
// ImageService: requests and responses
// ---------------------------------------------------------------------------

export interface ListImagesRequest {
  filter?: ImageFilter | null;
}

export interface ImageStatusRequest {
  image?: CriInput<ImageSpec> | null;
  verbose?: boolean;
}

export interface PullImageRequest {
  image?: CriInput<ImageSpec> | null;
  auth?: AuthConfig | null;
  sandboxConfig?: PodSandboxConfig | null;
}

export interface RemoveImageRequest {
  image?: CriInput<ImageSpec> | null;
}

export type ImageFsInfoRequest = Record<string, never>;

export interface Image {
  id: string;
  repoTags: string[];
  repoDigests: string[];
  size: Int64;
  uid?: Int64Value | null;
  username: string;
  spec?: ImageSpec | null;
  pinned: boolean;
}

export interface ListImagesResponse {
  images: Image[];
}

export interface ImageStatusResponse {
  /** Unset (null) when the image is not present. */
  image?: Image | null;
  info: Record<string, string>;
}

export interface PullImageResponse {
  imageRef: string;
}

export type RemoveImageResponse = Record<string, never>;

export interface ImageFsInfoResponse {
  imageFilesystems: FilesystemUsage[];
  containerFilesystems: FilesystemUsage[];
}

// ---------------------------------------------------------------------------
// Method tables
// ---------------------------------------------------------------------------

/** Every unary RuntimeService RPC: request and response types. */
export interface RuntimeServiceMethods {
  Version: { request: VersionRequest; response: VersionResponse };
  Status: { request: StatusRequest; response: StatusResponse };
  UpdateRuntimeConfig: { request: UpdateRuntimeConfigRequest; response: UpdateRuntimeConfigResponse };
  RunPodSandbox: { request: RunPodSandboxRequest; response: RunPodSandboxResponse };
  StopPodSandbox: { request: StopPodSandboxRequest; response: StopPodSandboxResponse };
  RemovePodSandbox: { request: RemovePodSandboxRequest; response: RemovePodSandboxResponse };
  PodSandboxStatus: { request: PodSandboxStatusRequest; response: PodSandboxStatusResponse };
  ListPodSandbox: { request: ListPodSandboxRequest; response: ListPodSandboxResponse };
  CreateContainer: { request: CreateContainerRequest; response: CreateContainerResponse };
  StartContainer: { request: StartContainerRequest; response: StartContainerResponse };
  StopContainer: { request: StopContainerRequest; response: StopContainerResponse };
  RemoveContainer: { request: RemoveContainerRequest; response: RemoveContainerResponse };
  ListContainers: { request: ListContainersRequest; response: ListContainersResponse };
  ContainerStatus: { request: ContainerStatusRequest; response: ContainerStatusResponse };
  UpdateContainerResources: { request: UpdateContainerResourcesRequest; response: UpdateContainerResourcesResponse };
  ReopenContainerLog: { request: ReopenContainerLogRequest; response: ReopenContainerLogResponse };
  ExecSync: { request: ExecSyncRequest; response: ExecSyncResponse };
  Exec: { request: ExecRequest; response: ExecResponse };
  Attach: { request: AttachRequest; response: AttachResponse };
  PortForward: { request: PortForwardRequest; response: PortForwardResponse };
  ContainerStats: { request: ContainerStatsRequest; response: ContainerStatsResponse };
  ListContainerStats: { request: ListContainerStatsRequest; response: ListContainerStatsResponse };
  PodSandboxStats: { request: PodSandboxStatsRequest; response: PodSandboxStatsResponse };
  ListPodSandboxStats: { request: ListPodSandboxStatsRequest; response: ListPodSandboxStatsResponse };
}

/** Server-streaming RuntimeService RPCs (not in RuntimeServiceMethods). */
export interface RuntimeServiceStreams {
  GetContainerEvents: { request: GetEventsRequest; response: ContainerEventResponse };
}

/** Every ImageService RPC (all unary): request and response types. */
export interface ImageServiceMethods {
  ListImages: { request: ListImagesRequest; response: ListImagesResponse };
  ImageStatus: { request: ImageStatusRequest; response: ImageStatusResponse };
  PullImage: { request: PullImageRequest; response: PullImageResponse };
  RemoveImage: { request: RemoveImageRequest; response: RemoveImageResponse };
  ImageFsInfo: { request: ImageFsInfoRequest; response: ImageFsInfoResponse };
}

/** The unary RuntimeService method names, in proto order. */
export const RUNTIME_METHODS = [
  'Version',
  'Status',
  'UpdateRuntimeConfig',
  'RunPodSandbox',
  'StopPodSandbox',
  'RemovePodSandbox',
  'PodSandboxStatus',
  'ListPodSandbox',
  'CreateContainer',
  'StartContainer',
  'StopContainer',
  'RemoveContainer',
  'ListContainers',
  'ContainerStatus',
  'UpdateContainerResources',
  'ReopenContainerLog',
  'ExecSync',
  'Exec',
  'Attach',
  'PortForward',
  'ContainerStats',
  'ListContainerStats',
  'PodSandboxStats',
  'ListPodSandboxStats',
] as const;

/** The ImageService method names, in proto order. */
export const IMAGE_METHODS = ['ListImages', 'ImageStatus', 'PullImage', 'RemoveImage', 'ImageFsInfo'] as const;

// Compile-time checks: each list names only methods of its table ...
const _runtimeListed: readonly (keyof RuntimeServiceMethods)[] = RUNTIME_METHODS;
const _imageListed: readonly (keyof ImageServiceMethods)[] = IMAGE_METHODS;
// ... and every method of the table is listed (else the missing names show up in the error).
type _Unlisted<All, Listed> = [Exclude<All, Listed>] extends [never] ? true : Exclude<All, Listed>;
const _runtimeComplete: _Unlisted<keyof RuntimeServiceMethods, (typeof RUNTIME_METHODS)[number]> = true;
const _imageComplete: _Unlisted<keyof ImageServiceMethods, (typeof IMAGE_METHODS)[number]> = true;
