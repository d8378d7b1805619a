/**
 * The node's health as the kubelet's runtimeState holds it (pkg/kubelet/runtime_state.go,
 * and kubelet.go updateRuntimeUp): whether the container runtime answered
 * its Status call lately and says RuntimeReady, whether its network is
 * ready, and the health checks registered beside them (the PLEG's: its last
 * successful relist within the threshold, pleg/generic.go Healthy).
 *
 *   updateRuntimeUp (every 5s) ──▶ RuntimeState ──▶ runtimeErrors() ──▶ syncLoop's gate
 *     CRI Status                    lastBaseRuntimeSync  networkErrors()   (sync-loop: the ticks wait)
 *     pod-cache <node>.global       runtimeError, networkError      ──▶ the Node's Ready condition
 *                                   health checks (PLEG)                (status-manager)
 *                                   handlers, features  ──▶ runtimeFeatures() ──▶ admission (Strict
 *                                                           runtimeHandlers()     supplemental groups),
 *                                                                                 the Node's features
 *
 * One home for both readers (sync-loop and status-manager): each runs its
 * own updater on its own NodeHealth adapter, and both say the same thing.
 *
 * Invariants:
 *  - A failed Status call changes nothing: the runtime counts as down only
 *    once its last good answer is older than the threshold (30s upstream:
 *    maxWaitForContainerRuntime), so a blip does not stop the loop.
 *  - Before the first good answer the runtime is not known to be up
 *    ("container runtime status check may not have completed yet").
 *  - The PLEG is unhealthy before its first relist and when its last
 *    successful relist is older than the threshold it wrote beside it
 *    (3m generic; longer in evented mode, where relists are rare).
 */
import type { Clock, Timer } from '@app/clock';
import type { PodCacheGlobal } from '@app/contracts';
import type { StatusResponse } from '@app/cri';
import type { Logger } from '@app/observability';

/** What runtimeState is fed from: the runtime's Status and the PLEG's last relist. */
export abstract class NodeHealth {
  /** The runtime's Status call (RuntimeReady, NetworkReady); rejects when the runtime does not answer. */
  abstract runtimeStatus(): Promise<StatusResponse>;
  /** The PLEG's last successful relist and its threshold (`pod-cache` bucket, `<node>.global`); undefined before the first. */
  abstract plegRelist(): Promise<PodCacheGlobal | undefined>;
}

export interface RuntimeStateUpdaterOptions {
  periodMs?: number;
  /** What the log lines say a bad state means for this reader. */
  unhealthyMeans?: string;
  /** Called after an update that turned the runtime (or the PLEG) or the network healthy or unhealthy. */
  onChange?: () => void;
}

/** kubelet.go maxWaitForContainerRuntime. */
export const MAX_WAIT_FOR_CONTAINER_RUNTIME_MS = 30_000;
/** kubelet.go: updateRuntimeUp runs every 5s. */
export const RUNTIME_UP_PERIOD_MS = 5_000;
/** How often the state is read again while it is unhealthy (ours: upstream keeps 5s). */
export const UNHEALTHY_RECHECK_MS = 1_000;
/** pleg/generic.go RelistThreshold, when the PLEG did not write its own. */
export const DEFAULT_PLEG_RELIST_THRESHOLD_MS = 3 * 60_000;

type HealthCheck = { name: string; fn: () => string | undefined };

/** A runtime handler and what it supports (kubecontainer.RuntimeHandler), as the Node's status.runtimeHandlers reports it. */
export interface RuntimeHandlerInfo {
  /** The handler's name; `` is the default one. */
  name: string;
  recursiveReadOnlyMounts: boolean;
  userNamespaces: boolean;
}

/**
 * What the runtime implements beyond the CRI's core (kubecontainer.RuntimeFeatures), as the Node's
 * status.features reports it; a runtime that says nothing of it (containerd 1.6) has none.
 */
export interface RuntimeFeaturesInfo {
  /** SupplementalGroupsPolicy Strict honoured (containerd 2.0 and later). */
  supplementalGroupsPolicy: boolean;
}

/** kuberuntime toKubeRuntimeStatus: the handlers (a handler without features supports neither) and the features of a Status answer. */
export function runtimeHandlersAndFeatures(status: StatusResponse): { handlers: RuntimeHandlerInfo[]; features?: RuntimeFeaturesInfo } {
  const handlers = status.runtimeHandlers.map((h) => ({ name: h.name, recursiveReadOnlyMounts: h.features?.recursiveReadOnlyMounts ?? false, userNamespaces: h.features?.userNamespaces ?? false }));
  return status.features ? { handlers, features: { supplementalGroupsPolicy: status.features.supplementalGroupsPolicy } } : { handlers };
}

/** runtime_state.go runtimeState. */
export class RuntimeState {
  private lastBaseRuntimeSync?: number;
  private runtimeError?: string;
  private networkError?: string;
  private handlers: RuntimeHandlerInfo[] = [];
  private features?: RuntimeFeaturesInfo;
  private readonly healthChecks: HealthCheck[] = [];

  constructor(
    private readonly clock: Clock,
    private readonly baseRuntimeSyncThresholdMs = MAX_WAIT_FOR_CONTAINER_RUNTIME_MS,
  ) {}

  /** Registers a check that must pass for the runtime to count as healthy (the PLEG's). */
  addHealthCheck(name: string, fn: () => string | undefined): void {
    this.healthChecks.push({ name, fn });
  }

  setRuntimeSync(t: number): void {
    this.lastBaseRuntimeSync = t;
  }

  setRuntimeState(err: string | undefined): void {
    this.runtimeError = err;
  }

  setNetworkState(err: string | undefined): void {
    this.networkError = err;
  }

  setRuntimeHandlers(handlers: RuntimeHandlerInfo[]): void {
    this.handlers = handlers;
  }

  setRuntimeFeatures(features: RuntimeFeaturesInfo | undefined): void {
    this.features = features;
  }

  /** The handlers the runtime said it has at its last ready answer (none before it). */
  runtimeHandlers(): readonly RuntimeHandlerInfo[] {
    return this.handlers;
  }

  /** The features the runtime said it has at its last ready answer; undefined before it, or where it says nothing of them. */
  runtimeFeatures(): RuntimeFeaturesInfo | undefined {
    return this.features;
  }

  /** Why pod synchronization must wait, or undefined when it need not. */
  runtimeErrors(): string | undefined {
    const errs: string[] = [];
    if (this.lastBaseRuntimeSync === undefined) errs.push('container runtime status check may not have completed yet');
    else if (this.lastBaseRuntimeSync + this.baseRuntimeSyncThresholdMs <= this.clock.now()) errs.push('container runtime is down');
    for (const hc of this.healthChecks) {
      const err = hc.fn();
      if (err !== undefined) errs.push(`${hc.name} is not healthy: ${err}`);
    }
    if (this.runtimeError !== undefined) errs.push(this.runtimeError);
    return errs.length > 0 ? errs.join(', ') : undefined;
  }

  networkErrors(): string | undefined {
    return this.networkError;
  }
}

/**
 * pleg/generic.go Healthy, from the record the PLEG keeps at `<node>.global`:
 * unhealthy when its last successful relist is older than the relist
 * threshold (widened to 10 minutes in evented mode, as upstream's), or when
 * its last sign of life (a relist or, between evented mode's rare relists, a
 * heartbeat) is older than RELIST_THRESHOLD. The second is what notices a
 * PLEG that stopped in evented mode within RELIST_THRESHOLD, not 10 minutes:
 * upstream's PLEG lives in the kubelet's process, ours may die alone.
 */
export function plegHealth(global: PodCacheGlobal | undefined, now: number): string | undefined {
  if (!global || global.timestamp <= 0) return 'pleg has yet to be successful';
  const alive = global.aliveAt === undefined ? undefined : staleness(now - global.aliveAt, global.aliveThresholdMs ?? DEFAULT_PLEG_RELIST_THRESHOLD_MS);
  return alive ?? staleness(now - global.timestamp, global.relistThresholdMs ?? DEFAULT_PLEG_RELIST_THRESHOLD_MS);
}

function staleness(elapsedMs: number, thresholdMs: number): string | undefined {
  return elapsedMs > thresholdMs ? `pleg was last seen active ${Math.round(elapsedMs / 1000)}s ago; threshold is ${Math.round(thresholdMs / 1000)}s` : undefined;
}

/** A runtime condition as upstream prints it in its errors. */
function describeCondition(status: StatusResponse, type: string): { ready: boolean; text: string } {
  const c = status.status?.conditions.find((x) => x.type === type);
  return c ? { ready: c.status, text: `${type}=${String(c.status)} reason:${c.reason} message:${c.message}` } : { ready: false, text: `${type} missing` };
}

/**
 * updateRuntimeUp every RUNTIME_UP_PERIOD_MS, and the PLEG's last relist read
 * with it, into a RuntimeState; the first update runs at start.
 */
export class RuntimeStateUpdater {
  private timer?: Timer;
  private stopped = false;
  private pleg?: PodCacheGlobal;
  private lastLogged?: string;
  private lastSeen?: string;
  private readonly periodMs: number;

  constructor(
    readonly state: RuntimeState,
    private readonly health: NodeHealth,
    private readonly clock: Clock,
    private readonly logger: Logger,
    private readonly options: RuntimeStateUpdaterOptions = {},
  ) {
    this.periodMs = options.periodMs ?? RUNTIME_UP_PERIOD_MS;
    state.addHealthCheck('PLEG', () => plegHealth(this.pleg, this.clock.now()));
  }

  /** Updates every `periodMs`; while something is unhealthy (at start too), every second, so the gate opens soon after. */
  start(): void {
    const tick = async () => {
      await this.update();
      const next = this.state.runtimeErrors() === undefined ? this.periodMs : Math.min(this.periodMs, UNHEALTHY_RECHECK_MS);
      if (!this.stopped) this.timer = this.clock.setTimer(next, () => void tick());
    };
    void tick();
  }

  stop(): void {
    this.stopped = true;
    this.timer?.cancel();
  }

  /** One updateRuntimeUp, and the PLEG's relist time read again. */
  async update(): Promise<void> {
    await Promise.all([this.updateRuntimeUp(), this.readPleg()]);
    const errs = this.state.runtimeErrors();
    if (errs !== this.lastLogged) {
      const means = this.options.unhealthyMeans ?? 'the sync loop skips its ticks until it is';
      if (errs !== undefined) this.logger.warn({ err: errs }, `the runtime or the PLEG is not healthy: ${means}`);
      else if (this.lastLogged !== undefined) this.logger.info('the runtime and the PLEG are healthy again');
      this.lastLogged = errs;
    }
    const seen = `${errs === undefined}|${this.state.networkErrors() === undefined}`;
    if (this.lastSeen !== undefined && seen !== this.lastSeen) this.options.onChange?.();
    this.lastSeen = seen;
  }

  private async updateRuntimeUp(): Promise<void> {
    let s: StatusResponse;
    try {
      s = await this.health.runtimeStatus();
    } catch (err) {
      // Container runtime sanity check failed: nothing changes; the runtime is down once the last good answer is old.
      this.logger.debug({ err: (err as Error).message }, 'container runtime sanity check failed');
      return;
    }
    const network = describeCondition(s, 'NetworkReady');
    this.state.setNetworkState(network.ready ? undefined : `container runtime network not ready: ${network.text}`);
    const runtime = describeCondition(s, 'RuntimeReady');
    if (!runtime.ready) {
      this.state.setRuntimeState(`container runtime not ready: ${runtime.text}`);
      return;
    }
    this.state.setRuntimeState(undefined);
    const { handlers, features } = runtimeHandlersAndFeatures(s);
    this.state.setRuntimeHandlers(handlers);
    this.state.setRuntimeFeatures(features);
    this.state.setRuntimeSync(this.clock.now());
  }

  private async readPleg(): Promise<void> {
    try {
      this.pleg = await this.health.plegRelist();
    } catch (err) {
      // The pod cache cannot be read (NATS away): the last value read stands, it ages by itself.
      this.logger.debug({ err: (err as Error).message }, 'could not read the PLEG\'s last relist');
    }
  }
}
