/** The pod worker's ports on KV, NATS, the CRI, HTTP and the file system. */
import { mkdir, rm } from 'node:fs/promises';
import { createConnection } from 'node:net';
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
import type { CriRuntime } from '@app/cri';
import { kvKey, readEntry, type KV, type NatsBus } from '@app/nats';
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

/** Lifecycle hooks: exec through the CRI (ExecSync), httpGet and tcpSocket from this process, sleep. */
export class CriHookRunner extends HookRunner {
  constructor(
    private readonly cri: CriRuntime,
    private readonly hostIP: string,
  ) {
    super();
  }
  async run(pod: Pod, c: Container, containerId: string, h: LifecycleHandler, podIPs: string[], timeoutSeconds: number): Promise<string | undefined> {
    try {
      if (h.exec?.command?.length) {
        const r = await this.cri.runtime('ExecSync', { containerId, cmd: h.exec.command, timeout: String(Math.max(1, timeoutSeconds)) });
        if (r.exitCode !== 0) return `command '${h.exec.command.join(' ')}' exited with ${r.exitCode}: ${Buffer.from(r.stderr || r.stdout, 'base64').toString().trim()}`;
        return undefined;
      }
      const host = h.httpGet?.host ?? h.tcpSocket?.host ?? (pod.spec.hostNetwork ? this.hostIP : (podIPs[0] ?? this.hostIP));
      if (h.httpGet) {
        const port = resolvePort(h.httpGet.port, c);
        const url = `${(h.httpGet.scheme ?? 'HTTP').toLowerCase()}://${host}:${port}${h.httpGet.path ?? '/'}`;
        const res = await fetch(url, { headers: Object.fromEntries((h.httpGet.httpHeaders ?? []).map((x) => [x.name, x.value])), signal: AbortSignal.timeout(Math.max(1, timeoutSeconds) * 1000) });
        await res.arrayBuffer();
        return res.status >= 200 && res.status < 400 ? undefined : `HTTP GET ${url} returned ${res.status}`;
      }
      if (h.tcpSocket) {
        const port = resolvePort(h.tcpSocket.port, c);
        await new Promise<void>((resolve, reject) => {
          const s = createConnection({ host, port, timeout: timeoutSeconds * 1000 }, () => {
            s.end();
            resolve();
          });
          s.on('error', reject);
          s.on('timeout', () => reject(new Error('timeout')));
        });
        return undefined;
      }
      if (h.sleep) {
        await new Promise((r) => setTimeout(r, Math.min(h.sleep?.seconds ?? 0, timeoutSeconds) * 1000));
        return undefined;
      }
      return 'the hook has no handler';
    } catch (err) {
      return (err as Error).message;
    }
  }
}

function resolvePort(port: number | string, c: Container): number {
  if (typeof port === 'number') return port;
  const named = c.ports?.find((p) => p.name === port)?.containerPort;
  if (named !== undefined) return named;
  const n = Number(port);
  if (Number.isInteger(n)) return n;
  throw new Error(`port "${port}" is not a port of container ${c.name}`);
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
