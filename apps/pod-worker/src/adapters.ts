/** The pod worker's ports on KV, NATS, the CRI, HTTP and the file system. */
import { mkdir, rm } from 'node:fs/promises';
import { join } from 'node:path';
import {
  MessageTypes,
  Subjects,
  podEvent,
  type Container,
  type LifecycleHandler,
  type Pod,
  type PodSyncStatusRecord,
  type ProbeResultMessage,
  type ProberCommandMessage,
  type ProberVerb,
  type StatusCommandMessage,
  type StatusVerb,
  type WorkDoneMessage,
} from '@app/contracts';
import type { Clock } from '@app/clock';
import type { CriRuntime } from '@app/cri';
import { KubeletLabels } from '@app/kube';
import { kvKey, readEntry, type KV, type NatsBus } from '@app/nats';
import { CriCommandRunner, HttpClient, LifecycleHandlerRunner, NodeHttpClient } from '@app/probe';
import { PodWorkerOutbox, ProbeResultsView } from './kubelet-sync.js';
import { WorkQueue, WorkerStore } from './pod-workers.js';
import { emptyDirPath, podLogDirectory, type NodeFacts } from './runtime-config.js';
import { EventRecorder, HookRunner, PodDirectories } from './runtime-ports.js';

export class KvWorkerStore extends WorkerStore {
  constructor(
    private readonly kv: KV,
    private readonly node: string,
  ) {
    super();
  }
  async load(uid: string): Promise<PodSyncStatusRecord | undefined> {
    return readEntry<PodSyncStatusRecord>(this.kv, kvKey(this.node, uid));
  }
  async save(uid: string, record: PodSyncStatusRecord): Promise<void> {
    await this.kv.put(kvKey(this.node, uid), JSON.stringify(record));
  }
  async delete(uid: string): Promise<void> {
    await this.kv.delete(kvKey(this.node, uid));
  }
}

export class NatsWorkQueue extends WorkQueue {
  constructor(
    private readonly bus: NatsBus,
    private readonly node: string,
  ) {
    super();
  }
  enqueue(uid: string, afterMs: number, error?: string): void {
    const msg: WorkDoneMessage = { type: MessageTypes.workDone, podUid: uid, requeueAfterMs: afterMs, ...(error ? { error } : {}) };
    this.bus.publish(Subjects.workDone.build(this.node, uid), msg, { podUid: uid });
  }
}

export class NatsPodWorkerOutbox extends PodWorkerOutbox {
  constructor(
    private readonly bus: NatsBus,
    private readonly node: string,
  ) {
    super();
  }
  status(verb: StatusVerb, pod: Pod, args: Record<string, unknown>): void {
    const uid = pod.metadata.uid ?? '';
    const msg: StatusCommandMessage = { type: MessageTypes.statusCommand, podUid: uid, args: { ...args, podName: pod.metadata.name, podNamespace: pod.metadata.namespace } };
    this.bus.publish(Subjects.status.build(this.node, verb, uid), msg, { podUid: uid });
  }
  prober(verb: ProberVerb, pod: Pod): void {
    const msg: ProberCommandMessage = { type: MessageTypes.proberCommand, pods: [pod] };
    this.bus.publish(Subjects.prober.build(this.node, verb), msg, { podUid: pod.metadata.uid ?? '' });
  }
}

export class NatsEventRecorder extends EventRecorder {
  constructor(
    private readonly bus: NatsBus,
    private readonly node: string,
  ) {
    super();
  }
  event(pod: Pod, type: 'Normal' | 'Warning', reason: string, message: string, fieldPath?: string): void {
    const uid = pod.metadata.uid ?? '';
    this.bus.publish(Subjects.events.build(this.node, uid), podEvent(pod, type, reason, message, this.node, fieldPath ? { fieldPath } : {}), { podUid: uid });
  }
}

/** The results managers' latest values, from `kubelet.<node>.probe.<type>.<uid>`. */
export class ProbeResultsCache extends ProbeResultsView {
  private readonly results = { liveness: new Map<string, 'Success' | 'Failure'>(), readiness: new Map<string, 'Success' | 'Failure'>(), startup: new Map<string, 'Success' | 'Failure'>() };
  observe(m: ProbeResultMessage): void {
    if (m.result === 'Unknown') this.results[m.probeType].delete(m.containerId);
    else this.results[m.probeType].set(m.containerId, m.result);
  }
  liveness(id: string) {
    return this.results.liveness.get(id);
  }
  readiness(id: string) {
    return this.results.readiness.get(id);
  }
  startup(id: string) {
    return this.results.startup.get(id);
  }
}

/**
 * Lifecycle hooks through @app/probe's LifecycleHandlerRunner (upstream
 * handlerRunner): exec through the CRI's ExecSync, httpGet from this
 * process. An httpGet hook without a host goes to the pod IP (the node IP
 * for a hostNetwork pod); a preStop hook is not handed the IPs, so they are
 * read from the pod's ready sandbox, as upstream asks the runtime's pod status.
 * An HTTPS hook that succeeded over HTTP is a LifecycleHTTPFallback warning.
 */
export class CriHookRunner extends HookRunner {
  private readonly runner: LifecycleHandlerRunner;

  constructor(
    private readonly cri: CriRuntime,
    private readonly hostIP: string,
    clock: Clock,
    options: { events?: EventRecorder; http?: HttpClient } = {},
  ) {
    super();
    const { events } = options;
    this.runner = new LifecycleHandlerRunner({
      commands: new CriCommandRunner(cri),
      http: options.http ?? new NodeHttpClient(),
      clock,
      ...(events ? { onHttpFallback: (pod: Pod, message: string) => events.event(pod, 'Warning', 'LifecycleHTTPFallback', message) } : {}),
    });
  }

  run(pod: Pod, container: Container, containerId: string, handler: LifecycleHandler, podIPs: string[], timeoutSeconds: number): Promise<string | undefined> {
    return this.runner.run({ pod, container, containerId, timeoutSeconds, podIP: () => this.podIP(pod, podIPs) }, handler);
  }

  private async podIP(pod: Pod, podIPs: string[]): Promise<string | undefined> {
    if (pod.spec.hostNetwork) return this.hostIP;
    if (podIPs[0]) return podIPs[0];
    const sandboxes = await this.cri.runtime('ListPodSandbox', { filter: { labelSelector: { [KubeletLabels.podUid]: pod.metadata.uid ?? '' }, state: { state: 'SANDBOX_READY' } } });
    for (const sb of sandboxes.items ?? []) {
      const ip = (await this.cri.runtime('PodSandboxStatus', { podSandboxId: sb.id })).status?.network?.ip;
      if (ip) return ip;
    }
    return undefined;
  }
}

export class FsPodDirectories extends PodDirectories {
  constructor(private readonly node: NodeFacts) {
    super();
  }
  async ensure(pod: Pod): Promise<void> {
    await mkdir(podLogDirectory(pod, this.node.logRoot), { recursive: true });
    for (const v of pod.spec.volumes ?? []) {
      if (v.emptyDir || (!v.hostPath && !v.emptyDir)) await mkdir(emptyDirPath(pod, v.name, this.node.podRoot), { recursive: true, mode: 0o777 });
    }
  }
  async remove(pod: Pod): Promise<void> {
    await rm(join(this.node.podRoot, pod.metadata.uid ?? ''), { recursive: true, force: true });
  }
}
