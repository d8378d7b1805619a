/**
 * A node agent under benchmark, seen only through its public contract: a
 * static manifest directory it watches, a read API answering `GET /pods`
 * with a v1 PodList, the CRI socket of the runtime it drives (for P6, which
 * asks the runtime itself), and the processes it is made of (for P3).
 */
import { readFileSync, readdirSync, rmdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { ContainerStatusRequest, type ContainerStatusResponse, ListContainersRequest, type ListContainersResponse, ListPodSandboxRequest, type ListPodSandboxResponse } from '@app/cri';
import { KubeletLabels } from '@app/kube';
import { GrpcRuntimeConnection } from '../../../apps/cri-gateway/src/adapters/grpc-runtime-connection.js';

/** What the read API says of one pod. */
export interface PodView {
  phase: string;
  ready: boolean;
  /** The containers' restartCount, summed. */
  restarts: number;
}

export interface AgentProcess {
  name: string;
  pid: number;
}

export interface Agent {
  /** `kubelet-split`, `kubelet`, ... */
  readonly name: string;
  /** One line: how it runs (mode, settings that matter to the figures). */
  readonly description: string;
  /** The static pod directory it watches. */
  readonly manifests: string;
  /** unix:// address of the CRI socket it drives. */
  readonly criEndpoint: string;
  /** How the agent's cold start is measured (P5), in words. */
  readonly readiness: string;
  /** The name a static pod from manifest `name` gets (`<name>-<node>`). */
  podName(name: string): string;
  /** Starts it; resolves once it is ready. Returns each process's cold start to ready, ms. */
  start(): Promise<Record<string, number>>;
  /** GET /pods of its read API, by pod name (namespace default). */
  pods(): Promise<Map<string, PodView>>;
  /** Its processes now (containerd and the containers excluded). */
  processes(): AgentProcess[];
  /** Whether restartEach can measure P5 again. */
  readonly restartable: boolean;
  /** Each process restarted once more on the idle agent: its cold start to ready, ms. */
  restartEach(): Promise<Record<string, number>>;
  /** Stops it and everything it started; the pods are gone before. */
  stop(): Promise<void>;
}

/** A v1 PodList (as either agent serves it) read into PodViews, by name, namespace default only. */
export function podViews(list: unknown): Map<string, PodView> {
  const out = new Map<string, PodView>();
  const items = (list as { items?: unknown[] } | null)?.items ?? [];
  for (const item of items) {
    const p = item as { metadata?: { name?: string; namespace?: string }; status?: { phase?: string; conditions?: { type?: string; status?: string }[]; containerStatuses?: { restartCount?: number }[] } };
    if (!p.metadata?.name || (p.metadata.namespace ?? 'default') !== 'default') continue;
    const ready = (p.status?.conditions ?? []).some((c) => c.type === 'Ready' && c.status === 'True');
    const restarts = (p.status?.containerStatuses ?? []).reduce((n, c) => n + (c.restartCount ?? 0), 0);
    out.set(p.metadata.name, { phase: p.status?.phase ?? '', ready, restarts });
  }
  return out;
}

/** A direct gRPC client of a CRI socket: the sandboxes' states by pod name. */
export class CriObserver {
  private readonly conn: GrpcRuntimeConnection;
  constructor(readonly endpoint: string) {
    this.conn = new GrpcRuntimeConnection(endpoint);
  }

  /** Pod name -> whether any of its sandboxes is SANDBOX_READY. */
  async sandboxReady(): Promise<Map<string, boolean>> {
    const res = (await this.conn.unary('runtime', 'ListPodSandbox', ListPodSandboxRequest.fromPartial({}), 30_000)) as ListPodSandboxResponse;
    const out = new Map<string, boolean>();
    for (const s of res.items) {
      const name = s.metadata?.name ?? '';
      out.set(name, (out.get(name) ?? false) || s.state === 'SANDBOX_READY');
    }
    return out;
  }

  /**
   * The host PID of a running container of the pod (its name in the runtime's labels), from the runtime's verbose
   * ContainerStatus: what a user's `kill` or the kernel's OOM killer would hit, behind the agent's back.
   */
  async runningContainerPid(podName: string): Promise<number> {
    const list = (await this.conn.unary('runtime', 'ListContainers', ListContainersRequest.fromPartial({ filter: { state: { state: 'CONTAINER_RUNNING' }, labelSelector: { [KubeletLabels.podName]: podName } } }), 30_000)) as ListContainersResponse;
    const id = list.containers[0]?.id;
    if (!id) throw new Error(`no running container of pod ${podName} in the runtime`);
    const status = (await this.conn.unary('runtime', 'ContainerStatus', ContainerStatusRequest.fromPartial({ containerId: id, verbose: true }), 30_000)) as ContainerStatusResponse;
    const pid = (JSON.parse(status.info['info'] ?? '{}') as { pid?: number }).pid;
    if (!pid) throw new Error(`the runtime's verbose status of container ${id} (pod ${podName}) has no pid`);
    return pid;
  }

  close(): void {
    this.conn.close();
  }
}

/** CPU time (user + system) of a process, in clock ticks; undefined once it is gone. */
export function cpuTicks(pid: number): number | undefined {
  try {
    const f = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]?.split(' ') ?? [];
    return Number(f[11]) + Number(f[12]);
  } catch {
    return undefined;
  }
}

/** The whole machine's CPU time since boot, in clock ticks: busy (everything but idle and iowait) and total. */
export function machineTicks(): { busy: number; total: number } {
  const f = (readFileSync('/proc/stat', 'utf8').split('\n')[0] ?? '').trim().split(/\s+/).slice(1).map(Number);
  const total = f.reduce((a, b) => a + b, 0);
  return { busy: total - (f[3] ?? 0) - (f[4] ?? 0), total };
}

/** Resident set of a process, bytes; undefined once it is gone. */
export function rssBytes(pid: number): number | undefined {
  try {
    const m = /^VmRSS:\s+(\d+) kB$/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return m ? Number(m[1]) * 1024 : undefined;
  } catch {
    return undefined;
  }
}

/**
 * Proportional set of a process, bytes: its private pages plus its share of the pages it shares with others
 * (the node binary's and the shared libraries' text, mapped by every Node process): summed over processes it
 * counts each page once, where RSS counts a shared page in every process; undefined once it is gone.
 */
export function pssBytes(pid: number): number | undefined {
  try {
    const m = /^Pss:\s+(\d+) kB$/m.exec(readFileSync(`/proc/${pid}/smaps_rollup`, 'utf8'));
    return m ? Number(m[1]) * 1024 : undefined;
  } catch {
    return undefined;
  }
}

/**
 * Removes a cgroup tree the stack under benchmark made below its own
 * CGROUP_ROOT, in every hierarchy (v1 controllers, or the v2 tree): the
 * deepest first (rmdir of an empty cgroup). What cannot go (a process still
 * inside) stays, and is returned.
 */
export function removeCgroupTree(root: string, mount = '/sys/fs/cgroup'): string[] {
  const left: string[] = [];
  const hierarchies = statSafe(join(mount, 'cgroup.controllers')) ? [mount] : readdirSync(mount).map((d) => join(mount, d)).filter((d) => statSafe(d)?.isDirectory());
  const remove = (dir: string) => {
    for (const e of readdirSync(dir, { withFileTypes: true })) if (e.isDirectory()) remove(join(dir, e.name));
    try {
      rmdirSync(dir);
    } catch {
      left.push(dir);
    }
  };
  for (const h of hierarchies) {
    const dir = join(h, root);
    if (statSafe(dir)?.isDirectory()) remove(dir);
  }
  return left;
}

function statSafe(p: string) {
  try {
    return statSync(p);
  } catch {
    return undefined;
  }
}
