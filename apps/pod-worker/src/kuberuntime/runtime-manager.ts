/**
 * The kubelet's runtime manager for one pod (kuberuntime_manager.go SyncPod,
 * killPodWithSyncResult; kuberuntime_container.go startContainer,
 * killContainer; kuberuntime_sandbox.go createPodSandbox), on the CRI
 * through cri-gateway. What to do comes from computePodActions (pure);
 * this file does it, in the kubelet's order:
 *
 *   1. compute sandbox and container changes
 *   2. kill the pod's sandbox if necessary        (and purge init containers)
 *   3. kill containers that should not run
 *   4. prune duplicate init containers
 *   5. create the sandbox if necessary, then start the new ephemeral containers
 *   6. start the next init container / sidecars
 *   7. start the main containers
 *
 * Every step's failure is kept per container (the kubelet's reasonCache):
 * the pod's status shows it as the waiting reason.
 *
 * No cancellation: as upstream, which runs the runtime's SyncPod with
 * context.WithoutCancel (kubelet.go SyncPod) and kills with a background
 * context (SyncTerminatingPod), what is started here runs to its end: an
 * image pull, a postStart hook, a kill with its preStop hooks. A kill or a
 * shorter grace period that arrives meanwhile waits for it (pod worker), so
 * a preStop hook runs once per container instance (ADR 0026).
 */
import { join } from 'node:path';
import { Clock } from '@app/clock';
import type { Container, EventRecorder, KillPodOptions, Pod } from '@app/contracts';
import type { ContainerConfig, PodSandboxConfig } from '@app/cri';
import { CriError, type CriInput, type CriRuntime } from '@app/cri/client';
import { KubeletLabels, findContainerStatus, getServiceEnvVarMap, hasRestartableInitContainer, isStaticPod, type RuntimeContainerStatus, type RuntimePodStatus } from '@app/kube';
import { NotLeaderError } from '@app/leader-election';
import type { Logger } from '@app/observability';
import { formatPod } from '@app/probe';
import { CrashLoopBackOff } from './backoff.js';
import { hashContainer } from './container-hash.js';
import { graceReasonOf, killContainerGracePeriod, preStopHookTimeoutSeconds, remainingGracePeriodSeconds, type KillReasonInput } from './grace-period.js';
import { computePodActions, type ProbeResults } from './pod-actions.js';
import { TerminationOrdering } from './termination-order.js';
import { getPodDNS, type DNSConfig } from '../network/dns.js';
import { envObjectNames, generateContainerConfig, generatePodSandboxConfig, podContainerDirectory, withNamespaceTarget, type EnvObjects, type NodeFacts } from './runtime-config.js';
import { containerMountsEtcHosts, etcHostsPath, managedHostsFileContent, nodeHostsFileContent, shouldMountHostsFile } from '../etc-hosts.js';
import { ApiObjects, ApiObjectsError, ContainerFiles, ContainerLogLinks, HookRunner } from '../ports.js';
import { verifyRunAsNonRoot, type ImageUser } from './security-context.js';
import { imageUserOf, type ImagePuller } from '../images/image-puller.js';
import { RuntimeClassManager } from '../runtimeclass/runtime-class.js';
import type { PlegInspections } from '../pleg-inspections.js';

/** Where each kind of container is in the pod spec (its events' fieldPath, container/ref.go). */
const FIELD_OF = { container: 'containers', init_container: 'initContainers', ephemeral_container: 'ephemeralContainers' } as const;

/** A failed step for one container, as the status shows it (reason, message). */
export interface SyncError {
  reason: string;
  message: string;
  /** When a back-off ends and the pod is worth syncing again (ms from now). */
  retryAfterMs?: number;
}

export interface PodSyncResult {
  /** By container name. */
  errors: Map<string, SyncError>;
  /** A failure of the pod as a whole (the sandbox). */
  podError?: SyncError;
  startedContainers: number;
  createdSandbox: boolean;
}

/** How killContainer kills, besides the why. */
export interface KillContainerOptions {
  /** The pod worker's grace period (killContainer's gracePeriodOverride): replaces the pod's and the probes'. */
  gracePeriodOverride?: number | undefined;
  /** The pod's termination ordering, when the whole pod is killed and it has sidecars. */
  ordering?: TerminationOrdering | undefined;
}

/** The kind of container started: the metrics' label (metrics.Container, InitContainer, EphemeralContainer). */
export type ContainerType = 'container' | 'init_container' | 'ephemeral_container';

export interface RuntimeMetrics {
  startedContainer(containerType: ContainerType, failed: boolean, code?: string): void;
  startedPod(failed: boolean): void;
}

/** What a RuntimeManager is built from. */
export interface RuntimeManagerDeps {
  cri: CriRuntime;
  images: ImagePuller;
  backOff: CrashLoopBackOff;
  hooks: HookRunner;
  events: EventRecorder;
  node: NodeFacts;
  clock: Clock;
  logger: Logger;
  metrics?: RuntimeMetrics;
  /** The apiserver's objects (config-source): RuntimeClasses, env's configMaps and secrets; none: a runtimeClassName is the handler itself and env from objects fails. */
  objects?: ApiObjects;
  /** Told of every pod a sync changes in the runtime, so the PLEG inspects it as the sync ends. */
  inspections?: PlegInspections;
  /** The hosts and termination message files a container gets; none: neither is made (the runtime's /etc/hosts, no termination message). */
  files?: ContainerFiles;
  /** /var/log/containers: each started container's log linked there; none: no links. */
  logLinks?: ContainerLogLinks;
}

export class RuntimeManager {
  private readonly runtimeClasses?: RuntimeClassManager;

  constructor(private readonly deps: RuntimeManagerDeps) {
    this.runtimeClasses = deps.objects ? new RuntimeClassManager(deps.objects) : undefined;
  }

  /**
   * The service environment variables of a pod (getServiceEnvVarMap), from the services config-source watches.
   * A node without an apiserver has none. Services not listed once yet: an API pod's container waits (upstream's
   * "services have not yet been read at least once"), a static pod's goes without them, as upstream.
   */
  private async serviceEnv(pod: Pod): Promise<Map<string, string>> {
    if (!this.deps.objects) return new Map();
    const ns = pod.metadata.namespace ?? 'default';
    try {
      return getServiceEnvVarMap(await this.deps.objects.services(ns), ns, pod.spec.enableServiceLinks ?? true);
    } catch (err) {
      if ((err instanceof ApiObjectsError && err.code === 'NotJoined') || isStaticPod(pod)) return new Map();
      throw new Error(`services have not yet been read at least once, cannot construct envvars: ${(err as Error).message}`);
    }
  }

  /** The configMaps and secrets the container's env names, read now (a missing one is undefined), and the services; rejects when they cannot be read. */
  private async envObjects(pod: Pod, c: Container): Promise<EnvObjects> {
    const services = await this.serviceEnv(pod);
    const names = envObjectNames(c);
    if (names.configMaps.length + names.secrets.length === 0) return { configMaps: new Map(), secrets: new Map(), services };
    const objects = this.deps.objects;
    if (!objects) throw new Error(`couldn't get the configMaps and secrets of container ${c.name}'s environment: this pod worker has no source of apiserver objects`);
    const ns = pod.metadata.namespace ?? 'default';
    const read = async (kind: 'ConfigMap' | 'Secret', list: string[]) => new Map(await Promise.all(list.map(async (n) => [n, await objects.get(kind, ns, n)] as const)));
    return { configMaps: await read('ConfigMap', names.configMaps), secrets: await read('Secret', names.secrets), services };
  }

  /** getImageUser: the image's user, from the ImageStatus the pull policy already read, else asked now (after a pull). */
  private async imageUser(image: { ref: string; user?: ImageUser }): Promise<ImageUser> {
    if (image.user) return image.user;
    return imageUserOf((await this.deps.cri.image('ImageStatus', { image: { image: image.ref } })).image);
  }

  /**
   * makeMounts' files: the pod's managed hosts file, written for this start
   * when the pod has an IP or the host's network (and the container mounts
   * nothing at /etc/hosts), and an empty termination message file for this
   * instance. A hosts file that cannot be written fails the start; a
   * termination message file is only logged, as upstream.
   */
  private async containerFiles(pod: Pod, c: Container, podIPs: string[]): Promise<{ etcHostsFile?: string; terminationMessageFile?: string }> {
    const files = this.deps.files;
    if (!files) return {};
    const out: { etcHostsFile?: string; terminationMessageFile?: string } = {};
    if (shouldMountHostsFile(pod, podIPs) && !containerMountsEtcHosts(c)) {
      const path = etcHostsPath(pod, this.deps.node.podRoot);
      const content = pod.spec.hostNetwork ? nodeHostsFileContent(pod, await files.nodeHostsFile()) : managedHostsFileContent(pod, podIPs, this.deps.node.clusterDomain);
      await files.writeHostsFile(path, content);
      out.etcHostsFile = path;
    }
    if (c.terminationMessagePath) {
      try {
        out.terminationMessageFile = await files.createTerminationMessageFile(podContainerDirectory(pod, c.name, this.deps.node.podRoot));
      } catch (err) {
        this.deps.logger.warn({ podUid: pod.metadata.uid, container: c.name, err: (err as Error).message }, 'error on creating termination-log file');
      }
    }
    return out;
  }

  /** SyncPod: brings the runtime in line with the pod spec. */
  async syncPod(pod: Pod, given: RuntimePodStatus, probes: ProbeResults): Promise<PodSyncResult> {
    const result: PodSyncResult = { errors: new Map(), startedContainers: 0, createdSandbox: false };
    const status = await this.removeStrayContainers(given);
    const actions = computePodActions(pod, status, probes);

    // 2. Kill the pod if its sandbox must be recreated (or nothing is left to run).
    if (actions.killPod) {
      if (actions.createSandbox && status.sandboxStatuses.length > 0) {
        this.deps.events.event(pod, 'Normal', 'SandboxChanged', 'Pod sandbox changed, it will be killed and re-created.');
      }
      await this.killPod(pod, status, undefined);
      if (actions.createSandbox) await this.purgeInitContainers(pod, status);
    } else {
      // 3. Kill the containers that should not run, in parallel.
      await Promise.all(
        [...actions.containersToKill.values()].map((k) => {
          const c = findContainerStatus(status, k.name);
          return this.killContainer(pod, k.container, k.containerId, k.name, c, k.message || `Stopping container ${k.name}`, graceReasonOf(k.reason)).catch((err: unknown) => {
            result.errors.set(k.name, { reason: 'KillContainerError', message: (err as Error).message });
          });
        }),
      );
      // Upstream returns here when a kill fails: starting the replacement
      // beside a container that may still run would make two of them.
      if (result.errors.size > 0) return result;
      // 4. Prune duplicate init containers.
      await this.pruneInitContainers(pod, status);
    }

    // 5. Create the sandbox.
    let sandboxId = actions.sandboxId;
    let podIPs = status.ips;
    let sandboxConfig: CriInput<PodSandboxConfig>;
    try {
      sandboxConfig = generatePodSandboxConfig(pod, actions.attempt, this.deps.node, this.podDNS(pod));
    } catch (err) {
      // createPodSandbox's failure when it makes the config (FailedCreatePodSandBox); otherwise SyncPod's ConfigPodSandbox one.
      if (actions.createSandbox) {
        const message = `Failed to create pod sandbox: ${(err as Error).message}`;
        this.deps.events.event(pod, 'Warning', 'FailedCreatePodSandBox', message);
        result.podError = { reason: 'FailedCreatePodSandBox', message };
        this.deps.metrics?.startedPod(true);
      } else result.podError = { reason: 'ConfigPodSandboxError', message: `GeneratePodSandboxConfig for pod "${formatPod(pod)}" failed: ${(err as Error).message}` };
      return result;
    }
    if (actions.createSandbox) {
      const created = await this.createSandbox(pod, sandboxConfig);
      if ('error' in created) {
        result.podError = created.error;
        this.deps.metrics?.startedPod(true);
        return result;
      }
      sandboxId = created.id;
      podIPs = created.ips;
      result.createdSandbox = true;
      this.deps.metrics?.startedPod(false);
    }
    if (!sandboxId) return result;

    // 5. Ephemeral containers, before the init containers so that one can debug a pod whose init container
    // cannot start (upstream's step 5). computePodActions asks for one only while the runtime has no instance of it:
    // a failed create is tried again, a container that ran is never restarted.
    const ephemerals = pod.spec.ephemeralContainers ?? [];
    for (const i of actions.ephemeralContainersToStart) {
      const ec = ephemerals[i];
      if (!ec) continue;
      const { targetContainerName, ...common } = ec;
      const err = await this.startContainer(pod, common, 'ephemeral_container', status, sandboxId, sandboxConfig, podIPs, targetContainerName);
      if (err) result.errors.set(ec.name, err);
      else result.startedContainers++;
    }

    // 6. Init containers: the next one in the classic path, then restartable ones (sidecars) in order.
    const inits = pod.spec.initContainers ?? [];
    const initToStart = [...(actions.nextInitContainerToStart ? [actions.nextInitContainerToStart] : []), ...actions.initContainersToStart.map((i) => inits[i]).filter((c): c is Container => c !== undefined)];
    for (const c of initToStart) {
      const err = await this.startContainer(pod, c, 'init_container', status, sandboxId, sandboxConfig, podIPs);
      if (err) {
        result.errors.set(c.name, err);
        // The classic init path goes one container at a time; a failed one stops the rest.
        if (c.restartPolicy !== 'Always') return result;
      } else result.startedContainers++;
    }

    // 7. Main containers.
    for (const i of actions.containersToStart) {
      const c = pod.spec.containers[i];
      if (!c) continue;
      const err = await this.startContainer(pod, c, 'container', status, sandboxId, sandboxConfig, podIPs);
      if (err) result.errors.set(c.name, err);
      else result.startedContainers++;
    }
    return result;
  }

  /**
   * killPodWithSyncResult: every running container at once, then the
   * sandboxes. A pod with sidecars stops them only once its main containers
   * exited, in reverse order of declaration (killContainersWithSyncResult's
   * terminationOrdering). A call refused by the pod's shard fence
   * (NotLeaderError: the replica lost the shard) fails the kill at once
   * with that error; the new owner kills the pod.
   */
  async killPod(pod: Pod, status: RuntimePodStatus, gracePeriodOverride: number | undefined, kill?: KillPodOptions): Promise<void> {
    const running = status.containerStatuses.filter((c) => c.state === 'running' || c.state === 'created' || c.state === 'unknown');
    const specs = new Map([...pod.spec.containers, ...(pod.spec.initContainers ?? [])].map((c) => [c.name, c]));
    const ordering = hasRestartableInitContainer(pod) ? new TerminationOrdering(pod, running.map((c) => c.name), this.deps.clock) : undefined;
    const errors: string[] = [];
    let refused: NotLeaderError | undefined;
    await Promise.all(
      running.map((c) =>
        this.killContainer(pod, specs.get(c.name), c.id, c.name, c, kill?.message ?? `Stopping container ${c.name}`, 'other', { gracePeriodOverride, ordering }).catch((err: unknown) => {
          if (err instanceof NotLeaderError) refused ??= err;
          errors.push(`${c.name}: ${(err as Error).message}`);
        }),
      ),
    );
    // The pod's shard is no longer ours: the kill is the new owner's now (its StopPodSandbox would be refused too).
    if (refused) throw refused;
    for (const sb of status.sandboxStatuses) {
      if (sb.state !== 'SANDBOX_READY') continue;
      try {
        this.deps.inspections?.mark(pod.metadata.uid);
        await this.deps.cri.runtime('StopPodSandbox', { podSandboxId: sb.id });
      } catch (err) {
        // A sandbox gone since the status was read is stopped, as upstream's killPodWithSyncResult takes it:
        // containerd 1.6 answers NotFound for it, containerd 2 answers OK (docs/adr/0040).
        if (err instanceof CriError && err.code === 'NotFound') continue;
        errors.push(`sandbox ${sb.id}: ${(err as Error).message}`);
      }
    }
    if (errors.length > 0) throw new Error(`failed to kill pod: ${errors.join('; ')}`);
  }

  /**
   * killContainer: preStop hook, then (a sidecar of a pod being killed) the
   * wait for its turn, then StopContainer with what is left of the grace
   * period. Told to `ordering` once the container exited.
   */
  async killContainer(
    pod: Pod,
    spec: Container | undefined,
    containerId: string,
    name: string,
    status: RuntimeContainerStatus | undefined,
    message: string,
    reason: 'liveness' | 'startup' | 'other',
    options: KillContainerOptions = {},
  ): Promise<void> {
    const { gracePeriodOverride, ordering } = options;
    const fieldPath = `spec.containers{${name}}`;
    let input: KillReasonInput = { pod, ...(spec ? { container: spec } : {}), reason, ...(gracePeriodOverride !== undefined ? { gracePeriodOverride } : {}) };
    this.deps.events.event(pod, 'Normal', 'Killing', message, fieldPath);
    const preStop = spec?.lifecycle?.preStop;
    const hookTimeout = preStopHookTimeoutSeconds(input);
    if (spec && preStop && status?.state === 'running' && hookTimeout > 0) {
      const started = this.deps.clock.now();
      const failure = await this.deps.hooks.run(pod, spec, containerId, preStop, [], hookTimeout);
      if (failure) {
        this.deps.logger.warn({ podUid: pod.metadata.uid, container: name, containerId, err: failure }, 'PreStop hook failed');
        // Not the hook's message: it may carry the hook's output, and events must not leak secrets (executePreStopHook).
        this.deps.events.event(pod, 'Warning', 'FailedPreStopHook', 'PreStopHook failed', fieldPath);
      }
      input = { ...input, preStopDurationSeconds: Math.floor((this.deps.clock.now() - started) / 1000) };
    }
    // A sidecar waits for the main containers and the sidecars declared after it, with what the hook left of its grace period.
    const left = remainingGracePeriodSeconds(input);
    if (ordering && left > 0) input = { ...input, waitedForTurnSeconds: await ordering.waitForTurn(name, left) };
    const grace = killContainerGracePeriod(input);
    try {
      this.deps.inspections?.mark(pod.metadata.uid);
      await this.deps.cri.runtime('StopContainer', { containerId, timeout: String(grace) });
    } catch (err) {
      // Refused by the shard's fence: every sidecar's StopContainer would be too; they stop waiting (ours, not upstream's).
      if (err instanceof NotLeaderError) ordering?.abort(err);
      // Any other failure leaves the container not done, as upstream: whoever waits on it waits out its grace period.
      if (!(err instanceof CriError && err.code === 'NotFound')) throw err;
    }
    ordering?.containerTerminated(name);
  }

  /** GetPodDNS, its warnings recorded as upstream's Configurer does (MissingClusterDNS on the node and the pod, DNSConfigForming on the pod). */
  private podDNS(pod: Pod): DNSConfig {
    const { config, events } = getPodDNS(pod, this.deps.node);
    for (const e of events) {
      if (e.on === 'node') this.deps.events.nodeEvent('Warning', e.reason, e.message);
      else this.deps.events.event(pod, 'Warning', e.reason, e.message);
      if (e.reason === 'DNSConfigForming') this.deps.logger.warn({ podUid: pod.metadata.uid, err: e.message }, 'DNS config limits exceeded');
    }
    return config;
  }

  /** createPodSandbox: config, log directory (made by the caller), the RuntimeClass's handler, RunPodSandbox, then its IPs. */
  private async createSandbox(pod: Pod, config: CriInput<PodSandboxConfig>): Promise<{ id: string; ips: string[] } | { error: SyncError }> {
    const uid = pod.metadata.uid ?? '';
    // Never a second sandbox: a ready one the cache does not show yet means the cache is behind.
    const existing = await this.deps.cri.runtime('ListPodSandbox', { filter: { labelSelector: { [KubeletLabels.podUid]: uid }, state: { state: 'SANDBOX_READY' } } });
    if (existing.items.length > 0) throw new Error(`a ready sandbox of pod ${uid} exists that the pod cache does not show yet; waiting for the next relist`);
    try {
      const runtimeHandler = this.runtimeClasses ? await this.runtimeClasses.lookupRuntimeHandler(pod.spec.runtimeClassName) : (pod.spec.runtimeClassName ?? '');
      this.deps.inspections?.mark(uid);
      const { podSandboxId } = await this.deps.cri.runtime('RunPodSandbox', { config, runtimeHandler });
      const st = await this.deps.cri.runtime('PodSandboxStatus', { podSandboxId });
      const ips = st.status?.network?.ip ? [st.status.network.ip, ...(st.status.network.additionalIps ?? []).map((i) => i.ip)] : [];
      return { id: podSandboxId, ips };
    } catch (err) {
      const message = `Failed to create pod sandbox: ${(err as Error).message}`;
      this.deps.events.event(pod, 'Warning', 'FailedCreatePodSandBox', message);
      return { error: { reason: 'FailedCreatePodSandBox', message } };
    }
  }

  /**
   * startContainer: back-off, image, create, start, postStart. Returns why it could not, if it could not.
   * `targetContainerName`: an ephemeral container's target, whose process namespace it joins (startSpec.getTargetID).
   */
  private async startContainer(
    pod: Pod,
    c: Container,
    type: ContainerType,
    status: RuntimePodStatus,
    sandboxId: string,
    sandboxConfig: CriInput<PodSandboxConfig>,
    podIPs: string[],
    targetContainerName?: string,
  ): Promise<SyncError | undefined> {
    const fieldPath = `spec.${FIELD_OF[type]}{${c.name}}`;
    const previous = findContainerStatus(status, c.name);
    const now = this.deps.clock.now();
    const key = this.deps.backOff.key(pod, c);
    if (previous && previous.state === 'exited') {
      const b = this.deps.backOff.inBackOff(key, previous.finishedAt, now);
      if (b.backingOff) {
        this.deps.events.event(pod, 'Warning', 'BackOff', `Back-off restarting failed container ${c.name} in pod ${pod.metadata.name ?? ''}_${pod.metadata.namespace ?? ''}(${pod.metadata.uid ?? ''})`, fieldPath);
        return { reason: 'CrashLoopBackOff', message: b.message ?? `back-off restarting failed container=${c.name}`, retryAfterMs: b.remainingMs };
      }
      this.deps.backOff.next(key, now);
    }

    const image = await this.deps.images.ensure(pod, c);
    if ('error' in image) return image.error;

    // Never a duplicate: a created or running container of this name the cache does not show yet means it is behind.
    const live = await this.deps.cri.runtime('ListContainers', { filter: { podSandboxId: sandboxId, labelSelector: { [KubeletLabels.podUid]: pod.metadata.uid ?? '', [KubeletLabels.containerName]: c.name } } });
    const known = new Set(status.containerStatuses.map((s) => s.id));
    if (live.containers.some((x) => (x.state === 'CONTAINER_RUNNING' || x.state === 'CONTAINER_CREATED') && !known.has(x.id))) {
      throw new Error(`container ${c.name} of pod ${pod.metadata.uid ?? ''} exists but the pod cache does not show it yet; waiting for the next relist`);
    }

    const restartCount = previous ? previous.restartCount + 1 : 0;
    // A failed step: a Failed event ("Error: " and the message), the failure counted under its reason, the reason and
    // the bare message (grpcstatus.FromError(err).Message(): a CRI error's description) in the status, as startContainer.
    const failed = (reason: 'CreateContainerConfigError' | 'CreateContainerError' | 'RunContainerError', err: unknown): SyncError => {
      const message = err instanceof CriError ? err.description : (err as Error).message;
      this.deps.events.event(pod, 'Warning', 'Failed', `Error: ${message}`, fieldPath);
      this.deps.metrics?.startedContainer(type, true, reason);
      return { reason, message };
    };
    let config: CriInput<ContainerConfig>;
    try {
      const target = targetContainerName ? findContainerStatus(status, targetContainerName) : undefined;
      if (targetContainerName && !target) throw new Error(`unable to find target container ${targetContainerName}`);
      const imageUser = await this.imageUser(image);
      verifyRunAsNonRoot(pod, c, imageUser);
      const files = await this.containerFiles(pod, c, podIPs);
      config = generateContainerConfig({ pod, container: c, restartCount, imageRef: image.ref, podIPs, hash: hashContainer(c), node: this.deps.node, envObjects: await this.envObjects(pod, c), imageUser, ...files });
      config = withNamespaceTarget(config, target?.id);
    } catch (err) {
      return failed('CreateContainerConfigError', err);
    }
    let containerId: string;
    this.deps.inspections?.mark(pod.metadata.uid);
    try {
      containerId = (await this.deps.cri.runtime('CreateContainer', { podSandboxId: sandboxId, config, sandboxConfig })).containerId;
    } catch (err) {
      return failed('CreateContainerError', err);
    }
    this.deps.events.event(pod, 'Normal', 'Created', `Created container ${c.name}`, fieldPath);
    try {
      await this.deps.cri.runtime('StartContainer', { containerId });
    } catch (err) {
      return failed('RunContainerError', err);
    }
    this.deps.events.event(pod, 'Normal', 'Started', `Started container ${c.name}`, fieldPath);
    this.deps.metrics?.startedContainer(type, false);
    await this.linkLegacyLog(pod, c.name, containerId, join(sandboxConfig.logDirectory ?? '', config.logPath ?? ''));

    const postStart = c.lifecycle?.postStart;
    if (postStart) {
      const failure = await this.deps.hooks.run(pod, c, containerId, postStart, podIPs, pod.spec.terminationGracePeriodSeconds ?? 30);
      if (failure) {
        this.deps.logger.warn({ podUid: pod.metadata.uid, container: c.name, containerId, err: failure }, 'Failed to execute PostStartHook');
        // The event says only that it failed (the hook's message may carry its output: no secrets in events);
        // the message goes to the container's status as the PostStartHookError message, as upstream's reasonCache does.
        this.deps.events.event(pod, 'Warning', 'FailedPostStartHook', 'PostStartHook failed', fieldPath);
        await this.killContainer(pod, c, containerId, c.name, undefined, 'FailedPostStartHook', 'other').catch((err: unknown) => {
          this.deps.logger.warn({ err: (err as Error).message }, 'failed to kill a container whose postStart hook failed');
        });
        return { reason: 'PostStartHookError', message: failure };
      }
    }
    return undefined;
  }

  /**
   * A container that was created but never started while another of its
   * name runs is a leftover of a worker that died mid-sync (its
   * CreateContainer landed after its successor's): it is removed, and the
   * sync goes on without it.
   */
  private async removeStrayContainers(status: RuntimePodStatus): Promise<RuntimePodStatus> {
    const runningNames = new Set(status.containerStatuses.filter((c) => c.state === 'running').map((c) => c.name));
    const strays = status.containerStatuses.filter((c) => c.state === 'created' && runningNames.has(c.name));
    if (strays.length === 0) return status;
    for (const c of strays) {
      this.deps.logger.warn({ uid: status.uid, container: c.name, id: c.id }, 'removing a container that was created but never started beside a running one');
      this.deps.inspections?.mark(status.uid);
      await this.deps.cri.runtime('RemoveContainer', { containerId: c.id }).catch((err: unknown) => this.deps.logger.warn({ id: c.id, err: (err as Error).message }, 'failed to remove a stray container'));
    }
    const gone = new Set(strays.map((c) => c.id));
    return { ...status, containerStatuses: status.containerStatuses.filter((c) => !gone.has(c.id)) };
  }

  /** The legacy log symlink for log shippers (startContainer); a failure is logged, as upstream's, and the container goes on. */
  private async linkLegacyLog(pod: Pod, name: string, containerId: string, logFile: string): Promise<void> {
    if (!this.deps.logLinks || logFile === '') return;
    const container = { id: containerId, name, podName: pod.metadata.name ?? '', podNamespace: pod.metadata.namespace ?? '' };
    await this.deps.logLinks.link(container, logFile).catch((err: unknown) => {
      this.deps.logger.warn({ podUid: pod.metadata.uid, container: name, containerId, containerLogPath: logFile, err: (err as Error).message }, 'Failed to create legacy symbolic link');
    });
  }

  /** purgeInitContainers: with a new sandbox, the init containers of the old one are removed. */
  private async purgeInitContainers(pod: Pod, status: RuntimePodStatus): Promise<void> {
    const names = new Set((pod.spec.initContainers ?? []).map((c) => c.name));
    for (const c of status.containerStatuses) {
      if (!names.has(c.name) || c.state === 'running') continue;
      this.deps.inspections?.mark(pod.metadata.uid);
      await this.deps.cri.runtime('RemoveContainer', { containerId: c.id }).catch((err: unknown) => this.deps.logger.warn({ id: c.id, err: (err as Error).message }, 'failed to remove an init container'));
    }
  }

  /** pruneInitContainersBeforeStart: of each init container, only the newest exited instance is kept. */
  private async pruneInitContainers(pod: Pod, status: RuntimePodStatus): Promise<void> {
    const names = new Set((pod.spec.initContainers ?? []).map((c) => c.name));
    const seen = new Set<string>();
    for (const c of status.containerStatuses) {
      if (!names.has(c.name) || c.state !== 'exited') continue;
      if (!seen.has(c.name)) {
        seen.add(c.name);
        continue;
      }
      this.deps.inspections?.mark(pod.metadata.uid);
      await this.deps.cri.runtime('RemoveContainer', { containerId: c.id }).catch((err: unknown) => this.deps.logger.warn({ id: c.id, err: (err as Error).message }, 'failed to prune an init container'));
    }
  }
}
