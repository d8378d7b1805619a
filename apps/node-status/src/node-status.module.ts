/**
 * node-status: upstream's pkg/kubelet/nodestatus, nodelease and oom (and
 * the mirror pods of pkg/kubelet/pod/mirror_client.go). The Node's
 * registration and status, its Lease, the node conditions from the
 * pressure record, the mirror pods, and the OOM watcher. Leader-elected
 * (`leader.node-status`); the only part of the stack that reads
 * `/dev/kmsg`, so the only one that needs root for it. One provider per
 * port; the adapters are in adapters/. The Node's providers are null when
 * KUBECONFIG is unset: a standalone node has no Node object to keep.
 *
 * NodeAgent follows the leadership: on onStartedLeading it starts the
 * runtime state's updates, the Node's registration and status, the Lease
 * and the mirror pods; on onStoppedLeading it stops them all at once (and
 * every write is fenced). The Node's events go out on NATS as every
 * service's do; the status manager posts them to the apiserver.
 */
import { Inject, Module, type OnApplicationShutdown, type OnModuleInit } from '@nestjs/common';
import { ReflectorApiPods, connectApiServer, type ApiServer } from '@app/apiserver';
import { Clock, SystemClock } from '@app/clock';
import type { NodeCondition, PodRecord } from '@app/contracts';
import { DEFAULT_CRI_TIMEOUTS, NatsCriClient, type CriRuntime } from '@app/cri/client';
import { NodeHealth, RUNTIME_UP_PERIOD_MS, RuntimeState, RuntimeStateUpdater, nodeLabels, parseMapStringString } from '@app/kube';
import { LeaderElector, LeaderFence } from '@app/leader-election';
import { NatsBus, NatsEventRecorder } from '@app/nats';
import type { Logger } from '@app/observability';
import { CriKvNodeHealth } from '@app/pod-cache';
import { HealthChecks, SERVICE_CONFIG, SERVICE_CONTEXT, SERVICE_LOGGER, bucketOf, type ServiceContext } from '@app/service';
import { KvPodManager, PodManager } from '@app/pod-manager';
import { ApiLeaseClient, ApiMirrorPodClient, ApiNodeClient } from './adapters/api-node-client.js';
import { CriRuntimeNetworkConfig, CriRuntimeVersion } from './adapters/cri-runtime-version.js';
import { DevKmsg } from './adapters/dev-kmsg.js';
import { HostMachine } from './adapters/host-machine.js';
import { KvNodePressureView } from './adapters/kv-node-pressure.js';
import { KvNodeLabelsSink } from './adapters/kv-node-labels.js';
import { ReflectorNodeWatch } from './adapters/reflector-node-watch.js';
import { KvDesiredPodsView } from './adapters/kv-desired-pods-view.js';
import { KvPodWorkers } from './adapters/kv-pod-workers.js';
import type { NodeStatusConfig } from './node-status.config.js';
import { MirrorPodReconciler } from './mirror-pods.js';
import { NodeConditionsController } from './node-conditions.controller.js';
import { NodeLeaseController } from './node-lease.js';
import { NodeStatusManager } from './node-status-manager.js';
import { KernelLog, OomWatcher } from './oom-watcher.js';
import { ApiPods, DesiredPodsWatch, LeaseApi, Machine, MirrorPodApi, NodeApi, NodeLabelsSink, NodePressureView, NodeWatch, PodWorkers, RuntimeNetworkConfig, RuntimeVersion, NodeConditionsReader } from './ports.js';

const API_SERVER = Symbol('API_SERVER');

/** The CRI client of the Node's runtime reads (Status, Version), with a short deadline. */
const NODE_CRI = Symbol('NODE_CRI');

/** The desired pods as the watch last said them (while leading), else read from KV. */
export class FollowedDesiredPods {
  pods?: PodRecord[];
  constructor(private readonly read: () => Promise<PodRecord[]>) {}
  all(): Promise<PodRecord[]> {
    return this.pods ? Promise.resolve(this.pods) : this.read();
  }
}

/**
 * The OOM watcher follows the leadership too, joined to a cluster or not:
 * its SystemOOM events go out on NATS as every service's events do, so the
 * status manager keeps them (and posts them to the apiserver when joined).
 */
export class OomWatcherAgent implements OnModuleInit, OnApplicationShutdown {
  constructor(
    private readonly watcher: OomWatcher,
    private readonly leadership: LeaderElector,
  ) {}

  onModuleInit(): void {
    this.leadership.subscribe({ onStartedLeading: () => void this.watcher.start(), onStoppedLeading: () => void this.watcher.stop() });
  }

  async onApplicationShutdown(): Promise<void> {
    await this.watcher.stop();
  }
}

/** Starts and stops the Node's loops with the leadership. */
export class NodeAgent implements OnModuleInit, OnApplicationShutdown {
  private leading = false;
  private unsubscribe: (() => void)[] = [];

  constructor(
    private readonly runtime: RuntimeStateUpdater,
    readonly status: NodeStatusManager,
    readonly lease: NodeLeaseController,
    private readonly mirrors: MirrorPodReconciler | undefined,
    /** What the mirror pods are reconciled on: the API's pods changed; the desired pods, followed. */
    private readonly mirrorInputs: { apiPods?: ApiPods; desired?: DesiredPodsWatch; followed?: FollowedDesiredPods },
    private readonly leadership: LeaderElector,
    private readonly health: HealthChecks,
    private readonly logger: Logger,
  ) {}

  onModuleInit(): void {
    this.health.addReadiness('node', () => {
      if (!this.leading) return { ok: true, detail: 'standby: the leader keeps the Node' };
      const errs = this.runtime.state.runtimeErrors() ?? this.runtime.state.networkErrors();
      return { ok: true, detail: `${this.status.isRegistered ? 'Node registered' : 'registering the Node'}; ${errs === undefined ? 'Ready' : `NotReady: ${errs}`}` };
    });
    this.leadership.subscribe({ onStartedLeading: () => this.start(), onStoppedLeading: () => this.stop() });
  }

  private start(): void {
    this.leading = true;
    this.logger.info('leading: registering the Node, renewing its Lease, keeping the mirror pods');
    this.runtime.start();
    this.status.start();
    this.lease.start();
    const mirrors = this.mirrors;
    if (!mirrors) return;
    mirrors.start();
    const apiPods = this.mirrorInputs.apiPods;
    if (apiPods) this.unsubscribe.push(apiPods.subscribe(() => mirrors.kick()));
    const followed = this.mirrorInputs.followed;
    this.mirrorInputs.desired
      ?.watch(
        (pods) => {
          if (!this.leading) return;
          if (followed) followed.pods = pods;
          mirrors.kick();
        },
        () => {
          if (followed) followed.pods = undefined;
          this.logger.warn('the watch of the desired pods died: the mirror pods read them every 2 s until it is back');
        },
      )
      .then((stop) => (this.leading ? this.unsubscribe.push(stop) : stop()))
      .catch((err: unknown) => this.logger.warn({ err: (err as Error).message }, 'could not watch the desired pods: the mirror pods read them every 2 s'));
  }

  private stop(): void {
    if (!this.leading) return;
    this.leading = false;
    for (const stop of this.unsubscribe.splice(0)) stop();
    if (this.mirrorInputs.followed) this.mirrorInputs.followed.pods = undefined;
    this.mirrors?.stop();
    this.lease.stop();
    this.status.stop();
    this.runtime.stop();
  }

  onApplicationShutdown(): void {
    this.stop();
  }

  /** The Node's conditions as this instance knows them: the leader's last computed, a standby's none. */
  nodeConditions(): { leading: boolean; conditions: readonly NodeCondition[] } {
    return { leading: this.leading, conditions: this.leading ? this.status.conditions : [] };
  }
}

@Module({
  controllers: [NodeConditionsController],
  providers: [
  { provide: Clock, useClass: SystemClock },
  { provide: API_SERVER, inject: [SERVICE_CONFIG], useFactory: (cfg: NodeStatusConfig) => connectApiServer(cfg.KUBECONFIG, 'node-status') },
  {
    provide: ApiPods,
    inject: [API_SERVER, Clock, SERVICE_LOGGER, SERVICE_CONFIG],
    useFactory: (api: ApiServer | null, clock: Clock, logger: Logger, cfg: NodeStatusConfig) => api && new ReflectorApiPods(api, clock, logger.child({ component: 'api-pods' }), cfg.NODE_NAME),
  },
  { provide: PodManager, inject: [SERVICE_CONTEXT], useFactory: (ctx: ServiceContext) => new KvPodManager(bucketOf(ctx, 'pods'), ctx.config.NODE_NAME) },
  { provide: PodWorkers, inject: [SERVICE_CONTEXT], useFactory: (ctx: ServiceContext) => new KvPodWorkers(bucketOf(ctx, 'workers'), ctx.config.NODE_NAME) },
  { provide: NatsEventRecorder, inject: [NatsBus, SERVICE_CONFIG, Clock], useFactory: (bus: NatsBus, cfg: NodeStatusConfig, clock: Clock) => new NatsEventRecorder(bus, cfg.NODE_NAME, clock) },
  { provide: KernelLog, useFactory: () => new DevKmsg() },
  {
    provide: OomWatcherAgent,
    inject: [KernelLog, NatsEventRecorder, Clock, SERVICE_LOGGER, LeaderElector],
    useFactory: (log: KernelLog, recorder: NatsEventRecorder, clock: Clock, logger: Logger, leadership: LeaderElector) =>
      new OomWatcherAgent(new OomWatcher(log, recorder, clock, logger.child({ component: 'oom-watcher' })), leadership),
  },
  { provide: NodeApi, inject: [API_SERVER, LeaderFence], useFactory: (api: ApiServer | null, fence: LeaderFence) => api && new ApiNodeClient(api, fence) },
  { provide: LeaseApi, inject: [API_SERVER, LeaderFence], useFactory: (api: ApiServer | null, fence: LeaderFence) => api && new ApiLeaseClient(api, fence) },
  { provide: MirrorPodApi, inject: [API_SERVER, LeaderFence], useFactory: (api: ApiServer | null, fence: LeaderFence) => api && new ApiMirrorPodClient(api, fence) },
  // A short deadline for Status and Version: a lost reply must not hold the next update.
  { provide: NODE_CRI, inject: [SERVICE_CONTEXT], useFactory: (ctx: ServiceContext) => new NatsCriClient(ctx.connection, ctx.config.NODE_NAME, 'status-manager', { ...DEFAULT_CRI_TIMEOUTS, listMs: RUNTIME_UP_PERIOD_MS }) },
  { provide: NodeHealth, inject: [NODE_CRI, SERVICE_CONTEXT], useFactory: (cri: CriRuntime, ctx: ServiceContext) => new CriKvNodeHealth(cri, bucketOf(ctx, 'podCache'), ctx.config.NODE_NAME) },
  { provide: RuntimeVersion, inject: [NODE_CRI], useFactory: (cri: CriRuntime) => new CriRuntimeVersion(cri) },
  { provide: RuntimeNetworkConfig, inject: [NODE_CRI], useFactory: (cri: CriRuntime) => new CriRuntimeNetworkConfig(cri) },
  { provide: Machine, inject: [SERVICE_CONFIG], useFactory: (cfg: NodeStatusConfig) => new HostMachine(cfg.POD_ROOT_DIR) },
  { provide: NodePressureView, inject: [SERVICE_CONTEXT], useFactory: (ctx: ServiceContext) => new KvNodePressureView(bucketOf(ctx, 'pods'), ctx.config.NODE_NAME) },
  {
    provide: NodeWatch,
    inject: [API_SERVER, Clock, SERVICE_LOGGER, SERVICE_CONFIG],
    useFactory: (api: ApiServer | null, clock: Clock, logger: Logger, cfg: NodeStatusConfig) => api && new ReflectorNodeWatch(api, clock, logger.child({ component: 'node-watch' }), cfg.NODE_NAME),
  },
  { provide: NodeLabelsSink, inject: [SERVICE_CONTEXT, Clock], useFactory: (ctx: ServiceContext, clock: Clock) => new KvNodeLabelsSink(bucketOf(ctx, 'leases'), ctx.config.NODE_NAME, clock) },
  {
    provide: DesiredPodsWatch,
    inject: [SERVICE_CONTEXT, Clock, SERVICE_LOGGER],
    useFactory: (ctx: ServiceContext, clock: Clock, logger: Logger) => new KvDesiredPodsView({ kv: bucketOf(ctx, 'pods'), node: ctx.config.NODE_NAME, clock, logger: logger.child({ component: 'desired-pods' }) }),
  },
  {
    provide: NodeAgent,
    inject: [NodeApi, LeaseApi, MirrorPodApi, ApiPods, PodManager, DesiredPodsWatch, PodWorkers, NatsEventRecorder, NodeHealth, RuntimeVersion, RuntimeNetworkConfig, Machine, NodePressureView, NodeLabelsSink, NodeWatch, SERVICE_CONFIG, Clock, SERVICE_LOGGER, LeaderElector, HealthChecks],
    useFactory: (
      nodes: NodeApi | null,
      leases: LeaseApi | null,
      mirrorApi: MirrorPodApi | null,
      apiPods: ApiPods | null,
      desired: PodManager,
      desiredWatch: DesiredPodsWatch,
      workers: PodWorkers,
      events: NatsEventRecorder,
      health: NodeHealth,
      version: RuntimeVersion,
      runtimeNetwork: RuntimeNetworkConfig,
      machine: Machine,
      pressure: NodePressureView,
      labelsSink: NodeLabelsSink,
      nodeWatch: NodeWatch | null,
      cfg: NodeStatusConfig,
      clock: Clock,
      logger: Logger,
      leadership: LeaderElector,
      checks: HealthChecks,
    ) => {
      if (!nodes || !leases || !mirrorApi || !apiPods) return null;
      const node = cfg.NODE_NAME;
      const log = logger.child({ component: 'node' });
      const state = new RuntimeState(clock);
      const lease = new NodeLeaseController(leases, nodes, clock, log.child({ component: 'node-lease' }), { nodeName: node, leaseDurationSeconds: Math.round(cfg.NODE_LEASE_DURATION / 1000) });
      const status = new NodeStatusManager(nodes, machine, pressure, state, version, clock, log, {
        nodeName: node,
        hostname: node,
        nodeIP: cfg.NODE_IP,
        labels: nodeLabels(node, parseMapStringString(cfg.NODE_LABELS, 'NODE_LABELS')),
        settings: { cpu: cfg.NODE_CPU, memory: cfg.NODE_MEMORY, maxPods: cfg.NODE_MAX_PODS, kubeReserved: cfg.KUBE_RESERVED, systemReserved: cfg.SYSTEM_RESERVED, evictionHard: cfg.EVICTION_HARD },
        // daemonEndpoints.kubeletEndpoint: where the apiserver reaches the kubelet API (logs, exec, port-forward).
        kubeletPort: cfg.KUBELET_SERVER_PORT || cfg.PORT,
        updateFrequencyMs: cfg.NODE_STATUS_UPDATE_FREQUENCY,
        reportFrequencyMs: cfg.NODE_STATUS_REPORT_FREQUENCY,
        onRegistered: () => lease.nodeRegistered(),
        // recordNodeStatusEvent: a Normal event on the Node, sent as the pods' are (the status manager posts it).
        recordEvent: (reason, message) => events.nodeEvent('Normal', reason, message),
        runtimeNetwork,
        nodeLabels: labelsSink,
        ...(nodeWatch ? { nodeWatch } : {}),
      });
      // Ready follows the runtime's and the PLEG's health at once, not at the next 10 s tick.
      const runtime = new RuntimeStateUpdater(state, health, clock, log, { unhealthyMeans: 'the Node is NotReady until it is', onChange: () => status.kick() });
      const followed = new FollowedDesiredPods(() => desired.all());
      const mirrors = new MirrorPodReconciler(
        mirrorApi,
        nodes,
        {
          desired: () => followed.all(),
          apiPods: () => (apiPods.hasSynced ? apiPods.all() : undefined),
          // IsPodForMirrorPodTerminatingByFullName, from the workers bucket: the pod worker still has the pod and
          // has not terminated it. Not "terminatingAt set": the REMOVE reaches the pods bucket before the pod
          // worker has written that it is terminating, and upstream asks for the kill in the same step.
          terminating: async (uid) => {
            const r = await workers.get(uid);
            return r !== undefined && r.terminatedAt === undefined;
          },
        },
        clock,
        log.child({ component: 'mirror-pods' }),
        node,
      );
      return new NodeAgent(runtime, status, lease, mirrors, { apiPods, desired: desiredWatch, followed }, leadership, checks, log);
    },
  },
  {
    provide: NodeConditionsReader,
    inject: [NodeAgent, LeaderElector],
    useFactory: (agent: NodeAgent | null, leadership: LeaderElector): NodeConditionsReader => ({
      // No apiserver, no Node: whether it leads, and no conditions.
      read: () => agent?.nodeConditions() ?? { leading: leadership.isLeader, conditions: [] },
    }),
  },
  ],
})
export class NodeStatusModule implements OnModuleInit, OnApplicationShutdown {
  constructor(@Inject(ApiPods) private readonly apiPods: ReflectorApiPods | null) {}

  onModuleInit(): void {
    // Read by every instance, a standby too: a takeover starts with the apiserver's view of the mirror pods.
    this.apiPods?.start();
  }

  onApplicationShutdown(): void {
    this.apiPods?.stop();
  }
}
