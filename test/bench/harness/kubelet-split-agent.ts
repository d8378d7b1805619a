/**
 * kubelet-split under benchmark: the whole stack as the tests start it
 * (test/support/node-stack.ts: a real nats-server, and either the seven
 * services as processes with two pod-worker replicas as the launcher runs
 * by default, or in one-process mode the seven as modules of one process,
 * TARGET=all, docs/adr/0016-one-process-mode.md) on
 * the project's containerd, with the services' own defaults, except what a
 * shared machine needs: its pod cgroups under a CGROUP_ROOT of its own
 * (the default `/` would have its housekeeping sweep the shared /kubepods
 * and remove other agents' pod cgroups), its pod and log directories in a
 * temporary directory, and image GC off (the images are shared).
 */
import { SERVICE_NAMES, type ServiceName } from '@app/service';
import { NodeStack } from '../../support/node-stack.js';
import { runtimeAddress } from '../../support/runtime.js';
import { podViews, removeCgroupTree, type Agent, type AgentProcess, type PodView } from './agent.js';

/** The order the stack starts in: the runtime's gateway first, the manifests' source last. */
const START_ORDER: ServiceName[] = ['cri-gateway', 'pleg', 'sync-loop', 'status-manager', 'pod-worker', 'prober', 'config-source'];

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
  ) {
    this.name = mode === 'split' ? 'kubelet-split' : 'kubelet-split one-process';
    this.podWorkers = mode === 'split' ? 2 : 1;
    this.cgroupRoot = `/${node}`;
    if (!SERVICE_NAMES.every((s) => START_ORDER.includes(s))) throw new Error('START_ORDER misses a service');
    const shared = { LOG_LEVEL: 'info', CGROUP_ROOT: this.cgroupRoot, POD_WORKER_SHARDS: '16', SHARD_LEASE_DURATION: '15s', FILE_CHECK_FREQUENCY: '20s' };
    const env: Partial<Record<ServiceName, Record<string, string>>> = {};
    for (const s of SERVICE_NAMES) env[s] = shared;
    this.stack = new NodeStack({ node, services: START_ORDER, env, target: mode === 'split' ? 'split' : 'all' });
  }

  get readiness(): string {
    return this.mode === 'split' ? 'spawn to /readyz 200, one service at a time, NATS up' : "the one process's spawn to every module's /readyz 200, NATS up";
  }

  get description(): string {
    const how = this.mode === 'split' ? `split mode: nats-server and ${SERVICE_NAMES.length} services, ${this.podWorkers} pod-worker replicas` : `one-process mode: nats-server and one process of ${SERVICE_NAMES.length} modules (TARGET=all)`;
    return `${how}, LOG_LEVEL=info, tracing on, pod cgroups on (CGROUPS_PER_QOS=true; the kubelet runs with cgroupsPerQOS false), CGROUP_ROOT=${this.cgroupRoot}, on ${this.criEndpoint.replace('unix://', '')}`;
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
    return this.readyTimes();
  }

  private readyTimes(): Record<string, number> {
    if (this.mode === 'one-process') return { [ONE_PROCESS]: Math.max(...[...this.stack.procs.values()].map((p) => p.readyAfterMs ?? Number.NaN)) };
    return Object.fromEntries([...this.stack.procs.entries()].map(([k, p]) => [k.replace(/#0$/, ''), p.readyAfterMs ?? Number.NaN]));
  }

  async pods(): Promise<Map<string, PodView>> {
    const res = await fetch(`${this.stack.api}/pods`, { signal: AbortSignal.timeout(10_000) });
    if (res.status !== 200) throw new Error(`GET /pods answered ${res.status}`);
    return podViews(await res.json());
  }

  processes(): AgentProcess[] {
    const nats = { name: 'nats-server', pid: this.stack.nats.process.pid ?? 0 };
    if (this.mode === 'one-process') return [nats, { name: ONE_PROCESS, pid: this.stack.procs.get(`${START_ORDER[0]}#0`)?.process.pid ?? 0 }];
    return [nats, ...[...this.stack.procs.entries()].map(([k, p]) => ({ name: k.replace(/#0$/, ''), pid: p.process.pid ?? 0 }))];
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
