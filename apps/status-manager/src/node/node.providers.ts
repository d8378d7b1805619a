/**
 * The Nest providers of the Node, its Lease and the mirror pods, spread
 * into StatusManagerModule's (one provider per port; the adapters are in
 * ../adapters/). Every one of them is null when KUBECONFIG is unset: a
 * standalone node has no Node object to keep.
 *
 * NodeAgent follows the status manager's leadership: on
 * onStartedLeading it starts the runtime state's updates, the Node's
 * registration and status, the Lease and the mirror pods; on
 * onStoppedLeading it stops them all at once (and every write is fenced).
 */
import type { OnApplicationShutdown, OnModuleInit, Provider } from '@nestjs/common';
import { ApiServer } from '@app/apiserver';
import { Clock } from '@app/clock';
import { ConfigError } from '@app/config';
import { DEFAULT_CRI_TIMEOUTS, NatsCriClient } from '@app/cri';
import { RUNTIME_UP_PERIOD_MS, RuntimeState, RuntimeStateUpdater, nodeLabels, parseMapStringString } from '@app/kube';
import { LeaderElector, LeaderFence } from '@app/nats';
import type { Logger } from '@app/observability';
import { CriKvNodeHealth } from '@app/pod-cache';
import { HealthChecks, SERVICE_CONFIG, SERVICE_CONTEXT, SERVICE_LOGGER, bucketOf, type ServiceContext } from '@app/service';
import { ApiLeaseClient, ApiMirrorPodClient, ApiNodeClient } from '../adapters/api-node-client.js';
import { CriRuntimeVersion } from '../adapters/cri-runtime-version.js';
import { HostMachine } from '../adapters/host-machine.js';
import type { StatusManagerConfig } from '../status-manager.config.js';
import type { MirrorPodReconciler } from './mirror-pods.js';
import { NodeLeaseController } from './node-lease.js';
import { NodeStatusManager } from './node-status-manager.js';

/** The Nest token of the node's apiserver client (null without KUBECONFIG). */
export const NODE_API_SERVER = Symbol('NODE_API_SERVER');

/** Starts and stops the Node's loops with the leadership. */
export class NodeAgent implements OnModuleInit, OnApplicationShutdown {
  private leading = false;

  constructor(
    private readonly runtime: RuntimeStateUpdater,
    readonly status: NodeStatusManager,
    readonly lease: NodeLeaseController,
    private readonly mirrors: MirrorPodReconciler | undefined,
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
    this.mirrors?.start();
  }

  private stop(): void {
    if (!this.leading) return;
    this.leading = false;
    this.mirrors?.stop();
    this.lease.stop();
    this.status.stop();
    this.runtime.stop();
  }

  onApplicationShutdown(): void {
    this.stop();
  }
}

/** The apiserver of KUBECONFIG, or null; a kubeconfig that cannot be used is a ConfigError (exit 1). */
async function apiServerOf(kubeconfig: string | undefined): Promise<ApiServer | null> {
  if (!kubeconfig) return null;
  try {
    return await ApiServer.fromKubeconfig(kubeconfig, 'kubelet-split/status-manager');
  } catch (err) {
    throw new ConfigError([`KUBECONFIG cannot be used: ${(err as Error).message}`]);
  }
}

export const nodeProviders: Provider[] = [
  { provide: NODE_API_SERVER, inject: [SERVICE_CONFIG], useFactory: (cfg: StatusManagerConfig) => apiServerOf(cfg.KUBECONFIG) },
  { provide: ApiNodeClient, inject: [NODE_API_SERVER, LeaderFence], useFactory: (api: ApiServer | null, fence: LeaderFence) => api && new ApiNodeClient(api, fence) },
  { provide: ApiLeaseClient, inject: [NODE_API_SERVER, LeaderFence], useFactory: (api: ApiServer | null, fence: LeaderFence) => api && new ApiLeaseClient(api, fence) },
  { provide: ApiMirrorPodClient, inject: [NODE_API_SERVER, LeaderFence], useFactory: (api: ApiServer | null, fence: LeaderFence) => api && new ApiMirrorPodClient(api, fence) },
  {
    provide: NodeAgent,
    inject: [NODE_API_SERVER, ApiNodeClient, ApiLeaseClient, SERVICE_CONTEXT, Clock, SERVICE_LOGGER, LeaderElector, HealthChecks],
    useFactory: (api: ApiServer | null, nodes: ApiNodeClient | null, leases: ApiLeaseClient | null, ctx: ServiceContext, clock: Clock, logger: Logger, leadership: LeaderElector, health: HealthChecks) => {
      if (!api || !nodes || !leases) return null;
      const cfg = ctx.config as StatusManagerConfig;
      const node = cfg.NODE_NAME;
      // A short deadline for Status and Version: a lost reply must not hold the next update.
      const cri = new NatsCriClient(ctx.connection, node, 'status-manager', { ...DEFAULT_CRI_TIMEOUTS, listMs: RUNTIME_UP_PERIOD_MS });
      const log = logger.child({ component: 'node' });
      const state = new RuntimeState(clock);
      const status = new NodeStatusManager(nodes, new HostMachine(cfg.POD_ROOT_DIR), state, new CriRuntimeVersion(cri), clock, log, {
        nodeName: node,
        hostname: node,
        nodeIP: cfg.NODE_IP,
        labels: nodeLabels(node, parseMapStringString(cfg.NODE_LABELS, 'NODE_LABELS')),
        settings: { cpu: cfg.NODE_CPU, memory: cfg.NODE_MEMORY, maxPods: cfg.NODE_MAX_PODS, kubeReserved: cfg.KUBE_RESERVED, systemReserved: cfg.SYSTEM_RESERVED, evictionHard: cfg.EVICTION_HARD },
        kubeletPort: cfg.PORT,
        updateFrequencyMs: cfg.NODE_STATUS_UPDATE_FREQUENCY,
        reportFrequencyMs: cfg.NODE_STATUS_REPORT_FREQUENCY,
      });
      // Ready follows the runtime's and the PLEG's health at once, not at the next 10 s tick.
      const runtime = new RuntimeStateUpdater(state, new CriKvNodeHealth(cri, bucketOf(ctx, 'podCache'), node), clock, log, {
        unhealthyMeans: 'the Node is NotReady until it is',
        onChange: () => status.kick(),
      });
      const lease = new NodeLeaseController(leases, nodes, clock, log.child({ component: 'node-lease' }), { nodeName: node, leaseDurationSeconds: Math.round(cfg.NODE_LEASE_DURATION / 1000) });
      return new NodeAgent(runtime, status, lease, undefined, leadership, health, log);
    },
  },
];
