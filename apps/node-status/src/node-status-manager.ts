/**
 * The Node in the API, as the kubelet keeps it (pkg/kubelet/kubelet_node_status.go):
 * registered when this status manager starts leading, then its status
 * computed every nodeStatusUpdateFrequency (10 s) and at once when the
 * runtime's or the network's health turns, and patched when it changed or
 * when nodeStatusReportFrequency (5 min) has passed since the last patch;
 * the Lease (node-lease.ts) is the heartbeat in between.
 *
 *   lead ─▶ registerWithAPIServer ──────────────▶ every 10 s / on a health turn: syncNodeStatus
 *            create the Node                       get ─▶ setters (node-status.ts) ─▶ changed or 5 min?
 *            AlreadyExists/Forbidden: get,           └─ yes: patch nodes/status   └─ no: nothing
 *            reconcile labels, resources             (5 tries, nodeStatusUpdateRetry)
 *            (retry 100 ms doubling to 7 s)
 *
 * Invariants:
 *  - One computation at a time (ticks and health turns are serialized).
 *  - Only while leading: stop() ends the loop at once, and every write
 *    goes through NodeApi, whose adapter checks the leader fence.
 *  - The allocatable is the one admission uses (@app/kube nodeAllocatable of
 *    the same settings); the Ready condition reads the same runtimeState as
 *    the sync loop's gate (@app/kube RuntimeState).
 */
import type { Clock, Timer } from '@app/clock';
import type { Node, NodeCondition } from '@app/contracts';
import { configuredCapacity, goArch, nodeAllocatable, nodeReservationsFrom, type NodeReservations, type NodeResourceSettings, type ResourceAmounts, type RuntimeState } from '@app/kube';
import { isAlreadyExists, ApiError } from '@app/apiserver';
import type { Logger } from '@app/observability';
import { ensureRequiredLabels, initialNode, nodeStatusHasChanged, reconcileExistingNode, setNodeStatus, type NodeStatusFeatures, type NodeStatusInputs } from './node-status.js';
import { Machine, NodeApi, NodeLabelsSink, NodePressureView, NodeWatch, RuntimeVersion, type MachineInfo, type RuntimeNetworkConfig } from './ports.js';

/** kubelet config defaults: nodeStatusUpdateFrequency and nodeStatusReportFrequency. */
export const NODE_STATUS_UPDATE_FREQUENCY_MS = 10_000;
export const NODE_STATUS_REPORT_FREQUENCY_MS = 5 * 60_000;
/** kubelet.go nodeStatusUpdateRetry. */
export const NODE_STATUS_UPDATE_RETRY = 5;

/** The kubelet's version as the Node reports it: the upstream it follows, marked as this project. */
export const KUBELET_VERSION = 'v1.34.4-kubelet-split';

export interface NodeStatusOptions {
  nodeName: string;
  hostname: string;
  nodeIP: string;
  /** initialNode's labels, --node-labels included (@app/kube nodeLabels). */
  labels: Record<string, string>;
  settings: NodeResourceSettings;
  kubeletPort: number;
  kubeletVersion?: string;
  updateFrequencyMs?: number;
  reportFrequencyMs?: number;
  /** Called once the Node is registered in a term (the Lease can have its owner). */
  onRegistered?: () => void;
  /**
   * recordNodeStatusEvent: a Normal event on the Node, "Node <node> status is
   * now: <reason>" (NodeReady, NodeNotReady, NodeHasSufficientMemory, ...),
   * once the status that says it is patched.
   */
  recordEvent?: (reason: string, message: string) => void;
  /** Where the Node's spec.podCIDRs go once they are set or change (updatePodCIDR); none: nowhere. */
  runtimeNetwork?: RuntimeNetworkConfig;
  /** Where the Node's labels go as the API has them, when they change (the sync loop's admission); none: nowhere. */
  nodeLabels?: NodeLabelsSink;
  /** The Node watched while leading, so that a label set on it reaches admission at once, not at the next status update. */
  nodeWatch?: NodeWatch;
}

export class NodeStatusManager {
  private registered = false;
  private lastStatusReportTime?: number;
  /** The labels last published (JSON), so that only a change is written. */
  private publishedLabels?: string;
  private running = false;
  private timer?: Timer;
  private abort?: AbortController;
  private chain: Promise<unknown> = Promise.resolve();
  private machineInfo?: MachineInfo;
  private runtimeVersion = '';
  /** runtimeState.podCIDR: what the runtime was last given. */
  private podCIDR = '';
  private readonly reservations: NodeReservations;
  private pressureConditions: readonly string[] = [];
  private lastConditions: NodeCondition[] = [];

  constructor(
    private readonly api: NodeApi,
    private readonly machine: Machine,
    private readonly pressure: NodePressureView,
    private readonly runtimeState: RuntimeState,
    private readonly version: RuntimeVersion,
    private readonly clock: Clock,
    private readonly logger: Logger,
    private readonly options: NodeStatusOptions,
  ) {
    this.reservations = nodeReservationsFrom(options.settings);
  }

  /** Whether the Node has been registered in this term. */
  get isRegistered(): boolean {
    return this.registered;
  }

  /**
   * The Node's conditions as this term last computed them (the setters'
   * result, patched or not: what the node itself says), none before the
   * first computation and none once stopped. Read by the fleet
   * (Subjects.nodeConditions).
   */
  get conditions(): readonly NodeCondition[] {
    return this.running ? this.lastConditions : [];
  }

  /** Leading: register, then sync every updateFrequency. */
  start(): void {
    if (this.running) return;
    this.running = true;
    this.registered = false;
    this.abort = new AbortController();
    const tick = async () => {
      await this.serially(() => this.syncNodeStatus());
      if (this.running) this.timer = this.clock.setTimer(this.options.updateFrequencyMs ?? NODE_STATUS_UPDATE_FREQUENCY_MS, () => void tick());
    };
    void tick();
    this.options.nodeWatch?.start((node) => {
      if (node && this.running) void this.publishLabels(node.metadata.labels ?? {});
    });
  }

  /** No longer leading: nothing more is written. */
  stop(): void {
    this.running = false;
    this.lastConditions = [];
    this.timer?.cancel();
    this.abort?.abort();
    this.options.nodeWatch?.stop();
  }

  /** A condition's input turned (runtime, network, PLEG health): compute and patch now, not at the next tick. */
  kick(): void {
    if (this.running && this.registered) void this.serially(() => this.updateNodeStatus());
  }

  /** syncNodeStatus: register when not yet, then update. */
  async syncNodeStatus(): Promise<void> {
    if (!this.running) return;
    if (!this.registered) await this.registerWithAPIServer();
    if (this.registered) await this.updateNodeStatus();
  }

  /** registerWithAPIServer: try until registered (or stopped), 100 ms doubling to 7 s between tries. */
  private async registerWithAPIServer(): Promise<void> {
    let step = 100;
    while (this.running && !this.registered) {
      try {
        await this.clock.sleep(step, this.abort?.signal);
      } catch {
        return;
      }
      step = Math.min(step * 2, 7000);
      let node: Node;
      const events: string[] = [];
      try {
        node = initialNode(this.options.nodeName, this.options.labels, await this.inputs(), this.clock.now(), events);
        this.lastConditions = node.status?.conditions ?? [];
      } catch (err) {
        this.logger.error({ err: (err as Error).message }, 'Unable to construct v1.Node object for kubelet');
        continue;
      }
      if (!this.running) return;
      this.registered = await this.tryRegisterWithAPIServer(node);
      if (this.registered) {
        this.logger.info({ node: this.options.nodeName }, 'Successfully registered node');
        this.recordEvents(events);
        this.options.onRegistered?.();
      }
    }
  }

  private async tryRegisterWithAPIServer(node: Node): Promise<boolean> {
    try {
      await this.api.createNode(node);
      return true;
    } catch (err) {
      if (!isAlreadyExists(err) && !(err instanceof ApiError && err.code === 403)) {
        this.logger.error({ err: (err as Error).message }, 'Unable to register node with API server');
        return false;
      }
    }
    let existing: Node | undefined;
    try {
      existing = await this.api.getNode(this.options.nodeName);
    } catch (err) {
      this.logger.error({ err: (err as Error).message }, 'Unable to register node with API server, error getting existing node');
      return false;
    }
    if (!existing) {
      this.logger.info({ node: this.options.nodeName }, 'Unable to register node with API server, no node instance returned');
      return false;
    }
    this.logger.info({ node: this.options.nodeName }, 'Node was previously registered');
    const reconciled = reconcileExistingNode(node, existing);
    if (reconciled) {
      try {
        await this.api.patchNodeStatus(this.options.nodeName, mergePatch(existing, reconciled));
      } catch (err) {
        this.logger.error({ err: (err as Error).message }, 'Unable to reconcile node with API server, error updating node');
        return false;
      }
    }
    return true;
  }

  /** updateNodeStatus: up to nodeStatusUpdateRetry tries. */
  private async updateNodeStatus(): Promise<void> {
    for (let i = 0; i < NODE_STATUS_UPDATE_RETRY && this.running; i++) {
      try {
        await this.tryUpdateNodeStatus();
        return;
      } catch (err) {
        this.logger.error({ err: (err as Error).message }, 'Error updating node status, will retry');
      }
    }
  }

  private async tryUpdateNodeStatus(): Promise<void> {
    const original = await this.api.getNode(this.options.nodeName);
    if (!original) throw new Error(`error getting node "${this.options.nodeName}": not found`);
    const podCIDRs = original.spec?.podCIDRs;
    if (podCIDRs && podCIDRs.length > 0) await this.updatePodCIDR(podCIDRs.join(','));
    await this.publishLabels(original.metadata.labels ?? {});
    const inputs = await this.inputs();
    const now = this.clock.now();
    const node = structuredClone(original);
    const labelsMissing = ensureRequiredLabels(node, 'linux', goArch());
    const events = setNodeStatus(node, inputs, now);
    this.lastConditions = node.status?.conditions ?? [];
    const changed = labelsMissing || nodeStatusHasChanged(original.status, node.status);
    const reportFrequency = this.options.reportFrequencyMs ?? NODE_STATUS_REPORT_FREQUENCY_MS;
    if (!changed && this.lastStatusReportTime !== undefined && now - this.lastStatusReportTime < reportFrequency) return;
    if (!this.running) return;
    await this.api.patchNodeStatus(this.options.nodeName, mergePatch(original, node));
    this.lastStatusReportTime = now;
    this.recordEvents(events);
  }

  /** The Node's labels to the sync loop's admission when they changed; a failure is logged, tried again at the next read. */
  private async publishLabels(labels: Record<string, string>): Promise<void> {
    const sink = this.options.nodeLabels;
    const text = JSON.stringify(Object.fromEntries(Object.entries(labels).sort(([a], [b]) => a.localeCompare(b))));
    if (!sink || text === this.publishedLabels) return;
    try {
      await sink.publish(labels);
      this.publishedLabels = text;
    } catch (err) {
      this.logger.warn({ err: (err as Error).message }, "publishing the Node's labels for admission failed; tried again at the next status update");
    }
  }

  /** updatePodCIDR: the runtime told when the CIDRs differ from what it was last given; a failure is logged, tried again next time. */
  private async updatePodCIDR(cidrs: string): Promise<void> {
    const runtime = this.options.runtimeNetwork;
    if (!runtime || cidrs === this.podCIDR) return;
    try {
      await runtime.updatePodCIDR(cidrs);
    } catch (err) {
      this.logger.error({ err: `failed to update pod CIDR: ${(err as Error).message}` }, 'Error updating pod CIDR');
      return;
    }
    this.logger.info({ originalPodCIDR: this.podCIDR, newPodCIDR: cidrs }, 'Updating Pod CIDR');
    this.podCIDR = cidrs;
  }

  private recordEvents(reasons: string[]): void {
    for (const reason of reasons) {
      const message = `Node ${this.options.nodeName} status is now: ${reason}`;
      this.logger.info({ node: this.options.nodeName, event: reason }, message);
      this.options.recordEvent?.(reason, message);
    }
  }

  /** Capacity and allocatable of this machine and the settings (the same rule admission uses). */
  resources(info: MachineInfo | undefined): { capacity: ResourceAmounts; allocatable: ResourceAmounts } {
    const capacity: ResourceAmounts = { ...configuredCapacity(this.options.settings) };
    if (info?.nodeFsCapacityBytes !== undefined) capacity['ephemeral-storage'] = info.nodeFsCapacityBytes;
    for (const [size, bytes] of Object.entries(info?.hugePages ?? {})) capacity[size] = bytes;
    return { capacity, allocatable: nodeAllocatable(capacity, this.reservations) };
  }

  /** Everything the setters read, now. A machine or runtime that cannot say keeps what it said last. */
  private async inputs(): Promise<NodeStatusInputs> {
    if (!this.machineInfo) {
      try {
        this.machineInfo = await this.machine.info();
      } catch (err) {
        this.logger.warn({ err: (err as Error).message }, 'could not read the machine info');
      }
    }
    try {
      this.runtimeVersion = await this.version.containerRuntimeVersion();
    } catch (err) {
      this.logger.debug({ err: (err as Error).message }, 'could not read the runtime version');
    }
    // The eviction manager's conditions (IsUnderMemoryPressure...); a record that cannot be read keeps what it said last.
    try {
      this.pressureConditions = (await this.pressure.read())?.conditions ?? [];
    } catch (err) {
      this.logger.debug({ err: (err as Error).message }, 'could not read the node pressure');
    }
    const under = (c: string) => this.pressureConditions.includes(c);
    const info = this.machineInfo;
    const { capacity, allocatable } = this.resources(info);
    return {
      hostname: this.options.hostname,
      nodeIP: this.options.nodeIP,
      capacity,
      allocatable,
      nodeInfo: {
        machineID: info?.machineID ?? '',
        systemUUID: info?.systemUUID ?? '',
        bootID: info?.bootID ?? '',
        kernelVersion: info?.kernelVersion ?? '',
        osImage: info?.osImage ?? '',
        containerRuntimeVersion: this.runtimeVersion,
        kubeletVersion: this.options.kubeletVersion ?? KUBELET_VERSION,
        operatingSystem: 'linux',
        architecture: goArch(),
      },
      kubeletPort: this.options.kubeletPort,
      runtimeHandlers: this.runtimeState.runtimeHandlers(),
      runtimeFeatures: this.runtimeState.runtimeFeatures(),
      runtimeErrors: this.runtimeState.runtimeErrors(),
      networkErrors: this.runtimeState.networkErrors(),
      memoryPressure: under('MemoryPressure'),
      diskPressure: under('DiskPressure'),
      pidPressure: under('PIDPressure'),
    };
  }

  private serially<T>(fn: () => Promise<T>): Promise<T> {
    const next = this.chain.then(fn, fn);
    this.chain = next.catch(() => undefined);
    return next;
  }
}

/**
 * The JSON merge patch from `original` to `node` of what the kubelet owns
 * (PatchNodeStatus sends the two-way patch of the same): labels and
 * annotations that changed, and the status's fields whole (conditions and
 * addresses as lists: the setters kept the conditions others own), with
 * resources that went away as null.
 */
export function mergePatch(original: Node, node: Node): object {
  const patch: { metadata?: Record<string, unknown>; status: Record<string, unknown> } = { status: {} };
  const labels = mapDiff(original.metadata.labels, node.metadata.labels);
  const annotations = mapDiff(original.metadata.annotations, node.metadata.annotations);
  if (labels || annotations) patch.metadata = { ...(labels ? { labels } : {}), ...(annotations ? { annotations } : {}) };
  const s = node.status ?? {};
  const o = original.status ?? {};
  patch.status = {
    ...(s.addresses ? { addresses: s.addresses } : {}),
    ...(s.conditions ? { conditions: s.conditions } : {}),
    ...(s.nodeInfo ? { nodeInfo: s.nodeInfo } : {}),
    ...(s.daemonEndpoints ? { daemonEndpoints: s.daemonEndpoints } : {}),
    ...(s.runtimeHandlers ? { runtimeHandlers: s.runtimeHandlers } : o.runtimeHandlers ? { runtimeHandlers: null } : {}),
    ...((s as { features?: NodeStatusFeatures }).features ? { features: (s as { features?: NodeStatusFeatures }).features } : {}),
  };
  const capacity = mapDiff(o.capacity, s.capacity);
  const allocatable = mapDiff(o.allocatable, s.allocatable);
  if (capacity) patch.status['capacity'] = capacity;
  if (allocatable) patch.status['allocatable'] = allocatable;
  return patch;
}

/** The keys of `b` that differ from `a`, and those only `a` has as null; undefined when none. */
function mapDiff(a: Record<string, string> | undefined, b: Record<string, string> | undefined): Record<string, string | null> | undefined {
  const out: Record<string, string | null> = {};
  for (const [k, v] of Object.entries(b ?? {})) if (a?.[k] !== v) out[k] = v;
  for (const k of Object.keys(a ?? {})) if (b?.[k] === undefined) out[k] = null;
  return Object.keys(out).length > 0 ? out : undefined;
}
