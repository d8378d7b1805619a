/**
 * The kubelet's serviceLister (kubelet.go NewMainKubelet: an informer of
 * every Service, `kl.serviceLister`, `kl.serviceHasSynced`) for config-source,
 * which alone holds the node's credentials (ADR 0013): pod-worker asks on
 * `kubelet.<node>.service.config-source.services` for the services of a
 * pod's namespace, and makes the container's service environment
 * variables from them (libs/kube envvars.ts, getServiceEnvVarMap).
 *
 *   start ─▶ a watch of every Service (list + watch /api/v1/services), when the node joined a cluster
 *   list(ns) ─▶ not joined: NotJoined (no services: a kubelet without a master)
 *            ─▶ listed once: the services of ns and of `default`
 *            ─▶ not listed yet: wait for the first list (syncTimeoutMs), else
 *               Unavailable "failed to sync service cache: <what failed>"
 *
 * Invariants:
 *  - once listed, the last view is served while the apiserver is away (a
 *    reflector's store);
 *  - the reply carries only what the variables need (name, namespace,
 *    clusterIP, ports): every pod start asks.
 */
import { Clock } from '@app/clock';
import { MessageTypes, type Service, type ServiceListMessage } from '@app/contracts';
import type { Logger } from '@app/observability';
import { ApiObjectError } from './object-manager.js';
import type { ApiServiceWatch } from './ports.js';

const NAMESPACE_DEFAULT = 'default';

/** A service as the variables need it. */
function trimmed(s: Service): Service {
  return {
    metadata: { name: s.metadata?.name ?? '', namespace: s.metadata?.namespace ?? '' },
    spec: { ...(s.spec?.clusterIP !== undefined ? { clusterIP: s.spec.clusterIP } : {}), ports: (s.spec?.ports ?? []).map((p) => ({ port: p.port, ...(p.name ? { name: p.name } : {}), ...(p.protocol ? { protocol: p.protocol } : {}) })) },
  };
}

export class ServiceLister {
  private services: Service[] = [];
  private synced = false;
  private lastError?: string;
  private stopWatch?: () => void;
  private readonly waiters = new Set<() => void>();

  constructor(
    /** Every Service; null when the node has not joined a cluster (no KUBECONFIG). */
    private readonly watcher: ApiServiceWatch | null,
    private readonly clock: Clock,
    private readonly logger: Logger,
    private readonly syncTimeoutMs = 5000,
  ) {}

  /** Whether the services were listed once (serviceHasSynced). */
  get hasSynced(): boolean {
    return this.synced;
  }

  start(): void {
    if (!this.watcher || this.stopWatch) return;
    this.logger.info({}, 'watching the services of the cluster (service environment variables)');
    this.stopWatch = this.watcher.watch(
      (services) => {
        this.services = services;
        this.synced = true;
        this.lastError = undefined;
        this.wake();
      },
      (err) => {
        this.lastError = err.message;
        this.wake();
      },
    );
  }

  stop(): void {
    this.stopWatch?.();
    this.stopWatch = undefined;
    this.wake();
  }

  /** The services of `namespace` and of `default`; rejects with an ApiObjectError when that cannot be said. */
  async list(namespace: string): Promise<ServiceListMessage> {
    if (!this.watcher) throw new ApiObjectError('NotJoined', 'this node has not joined a cluster (config-source has no KUBECONFIG): it knows no services');
    if (!this.synced) await this.nextOutcome();
    if (!this.synced) throw new ApiObjectError('Unavailable', `failed to sync service cache: ${this.lastError ?? `no list of it within ${this.syncTimeoutMs} ms`}`);
    const services = this.services.filter((s) => s.metadata?.namespace === namespace || s.metadata?.namespace === NAMESPACE_DEFAULT).map(trimmed);
    return { type: MessageTypes.serviceList, services };
  }

  private wake(): void {
    for (const w of [...this.waiters]) w();
  }

  /** Resolves at the watch's next list or error, or after syncTimeoutMs. */
  private nextOutcome(): Promise<void> {
    return new Promise((resolve) => {
      const done = () => {
        timer.cancel();
        this.waiters.delete(done);
        resolve();
      };
      const timer = this.clock.setTimer(this.syncTimeoutMs, done);
      this.waiters.add(done);
    });
  }
}
