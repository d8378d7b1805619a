/**
 * kubelet-split under benchmark: the whole stack as the tests start it
 * (test/support/node-stack.ts: a real nats-server, and either the
 * services as processes with two pod-worker replicas as the launcher runs
 * them by default, the status group's four (STATUS_GROUP) as modules of one
 * process, or in one-process mode every service as a module of one process,
 * TARGET=all, docs/adr/0016-one-process-mode.md) on
 * the project's containerd, with the services' own defaults, except what a
 * shared machine needs: its pod cgroups under a CGROUP_ROOT of its own
 * (the default `/` would have its housekeeping sweep the shared /kubepods
 * and remove other agents' pod cgroups), its pod and log directories in a
 * temporary directory, and image GC off (the images are shared).
 */
import { SERVICE_NAMES, STATUS_GROUP, type ServiceName } from '@app/service';
import { NodeStack } from '../../support/node-stack.js';
import { runtimeAddress } from '../../support/runtime.js';
import { podViews, removeCgroupTree, type Agent, type AgentProcess, type PodView } from './agent.js';

/** The order the stack starts in: the runtime's gateway first, the manifests' source last (`status-manager`: the status group). */
const START_ORDER: ServiceName[] = ['cri-gateway', 'pleg', 'sync-loop', 'status-manager', 'pod-worker', 'prober', 'config-source'];

/** The pod workers' shards. */
const SHARDS = 16;

/** The one process's name in P3 and P5. */
const ONE_PROCESS = 'kubelet (TARGET=all)';

export type KubeletSplitMode = 'split' | 'one-process';

export class KubeletSplitAgent implements Agent {
  readonly name: string;
  readonly restartable = true;
  readonly criEndpoint = `unix://${runtimeAddress()}`;
  readonly cgroupRoot: string;
  private readonly stack: NodeStack;

  private readonly podWorkers: number;

  constructor(
    readonly node: string,
    readonly mode: KubeletSplitMode = 'split',
    readonly maxPods = 110,
  ) {
    this.name = mode === 'split' ? 'kubelet-split' : 'kubelet-split one-process';
    this.podWorkers = mode === 'split' ? 2 : 1;
    this.cgroupRoot = `/${node}`;
    if (!SERVICE_NAMES.every((s) => START_ORDER.includes(s) || (STATUS_GROUP as readonly ServiceName[]).includes(s))) throw new Error('START_ORDER misses a service');
    const shared = { LOG_LEVEL: 'info', CGROUP_ROOT: this.cgroupRoot, POD_WORKER_SHARDS: String(SHARDS), SHARD_LEASE_DURATION: '15s', FILE_CHECK_FREQUENCY: '20s', NODE_MAX_PODS: String(maxPods) };
    const env: Partial<Record<ServiceName, Record<string, string>>> = {};
    for (const s of SERVICE_NAMES) env[s] = shared;
    // PLEG_MODE=evented npm run bench: the PLEG on the runtime's events (it falls back to the relist where the runtime has none).
    const plegMode = process.env['PLEG_MODE'];
    if (plegMode) env.pleg = { ...shared, PLEG_MODE: plegMode };
    this.stack = new NodeStack({ node, services: START_ORDER, env, target: mode === 'split' ? 'group' : 'all' });
  }

  get readiness(): string {
    return this.mode === 'split' ? 'spawn to /readyz 200, one service at a time, NATS up' : "the one process's spawn to every module's /readyz 200, NATS up";
  }

  get description(): string {
    const how = this.mode === 'split' ? `split mode: nats-server and ${SERVICE_NAMES.length} services in ${SERVICE_NAMES.length - STATUS_GROUP.length + 1} processes (the status group's ${STATUS_GROUP.length} in one, as the launcher runs them), ${this.podWorkers} pod-worker replicas (measured once they have balanced their ${SHARDS} shards)` : `one-process mode: nats-server and one process of ${SERVICE_NAMES.length} modules (TARGET=all)`;
    return `${how}, PLEG_MODE=${process.env['PLEG_MODE'] ?? 'evented (the default)'}, NODE_MAX_PODS=${this.maxPods}, ${process.env['KS_ENTRY'] === 'bundle' ? 'bundles (dist/bundle)' : 'tsc output with source maps'}, LOG_LEVEL=info, tracing on, pod cgroups on (CGROUPS_PER_QOS=true; the kubelet runs with cgroupsPerQOS false), CGROUP_ROOT=${this.cgroupRoot}, on ${this.criEndpoint.replace('unix://', '')}`;
  }

  get manifests(): string {
    return this.stack.manifests;
  }

  podName(name: string): string {
    return this.stack.podName(name);
  }

  async start(): Promise<Record<string, number>> {
    await this.stack.start();
    for (let r = 1; r < this.podWorkers; r++) await this.stack.startService('pod-worker', String(r));
    const ready = this.readyTimes();
    await this.shardsBalanced();
    return ready;
  }

  /**
   * Until the pod-worker replicas own every shard between them, each its fair share (a replica started after the
   * first takes its shards over in the next seconds, and a pod dispatched to a shard being handed over waits for the
   * new owner's reconciliation: the figures are of the stack at rest, not of its start).
   */
  private async shardsBalanced(timeoutMs = 60_000): Promise<void> {
    if (this.podWorkers < 2) return;
    const ports = [...this.stack.procs.entries()].filter(([k]) => k.startsWith('pod-worker#')).map(([, p]) => p.port);
    const deadline = performance.now() + timeoutMs;
    for (;;) {
      const owned = await Promise.all(
        ports.map(async (port) => {
          const res = await fetch(`http://127.0.0.1:${port}/workers`, { signal: AbortSignal.timeout(5000) }).catch(() => undefined);
          return res?.ok ? ((await res.json()) as { shards: number[] }).shards : [];
        }),
      );
      const all = owned.flat();
      const fair = Math.floor(SHARDS / ports.length);
      if (all.length === SHARDS && new Set(all).size === SHARDS && owned.every((o) => o.length >= fair)) return;
      if (performance.now() > deadline) throw new Error(`the ${ports.length} pod-worker replicas did not balance their ${SHARDS} shards within ${timeoutMs} ms: ${owned.map((o) => `[${o.join(',')}]`).join(' ')}`);
      await new Promise((r) => setTimeout(r, 250));
    }
  }

  private readyTimes(): Record<string, number> {
    if (this.mode === 'one-process') return { [ONE_PROCESS]: Math.max(...[...this.stack.procs.values()].map((p) => p.readyAfterMs ?? Number.NaN)) };
    return Object.fromEntries([...this.stack.procs.entries()].map(([k, p]) => [k.replace(/#0$/, ''), p.readyAfterMs ?? Number.NaN]));
  }

  /** Each process once, named by its services (the status group's modules share one). */
  private processEntries(): AgentProcess[] {
    const byPid = new Map<number, string[]>();
    for (const [k, p] of this.stack.procs) {
      const pid = p.process.pid ?? 0;
      byPid.set(pid, [...(byPid.get(pid) ?? []), k.replace(/#0$/, '')]);
    }
    return [...byPid].map(([pid, names]) => ({ name: names.join(','), pid }));
  }

  async pods(): Promise<Map<string, PodView>> {
    const res = await fetch(`${this.stack.api}/pods`, { signal: AbortSignal.timeout(10_000) });
    if (res.status !== 200) throw new Error(`GET /pods answered ${res.status}`);
    return podViews(await res.json());
  }

  processes(): AgentProcess[] {
    const nats = { name: 'nats-server', pid: this.stack.nats.process.pid ?? 0 };
    if (this.mode === 'one-process') return [nats, { name: ONE_PROCESS, pid: this.stack.procs.get(`${START_ORDER[0]}#0`)?.process.pid ?? 0 }];
    return [nats, ...this.processEntries()];
  }

  async restartEach(): Promise<Record<string, number>> {
    if (this.mode === 'one-process') {
      await this.stack.procs.get(`${START_ORDER[0]}#0`)?.stop(15_000);
      await this.stack.startModules();
      return this.readyTimes();
    }
    const out: Record<string, number> = {};
    for (const service of START_ORDER) {
      await this.stack.procs.get(`${service}#0`)?.stop(15_000);
      const sp = await this.stack.startService(service, '0');
      out[service] = sp.readyAfterMs ?? Number.NaN;
    }
    return out;
  }

  async stop(): Promise<void> {
    try {
      await this.stack.stop();
    } finally {
      const left = removeCgroupTree(this.cgroupRoot);
      if (left.length > 0) process.stderr.write(`bench: could not remove ${left.length} cgroup(s) of ${this.cgroupRoot}: ${left.slice(0, 3).join(', ')}\n`);
    }
  }
}
