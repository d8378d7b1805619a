/**
 * The upstream kubelet v1.34.4 under benchmark: built by
 * deploy/upstream-kubelet/build.sh (the control plane's tools module), run
 * standalone by deploy/upstream-kubelet/run.sh in a mount namespace of its own with
 * a containerd of its own (the same configuration and images as the
 * stack's), so it touches neither the stack's runtime nor the machine (see
 * run.sh for why each precaution is there). The settings the issue names:
 * staticPodPath, no apiserver, the cgroupfs driver, no QoS cgroups, no node
 * allocatable enforcement, swap and cgroup v1 tolerated, no iptables chains,
 * oomScoreAdj 0, every port on loopback. Its read API is the read-only
 * port's `GET /pods`.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { closeSync, existsSync, mkdirSync, mkdtempSync, openSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { REPO_ROOT, exited, freePort } from '../../../deploy/local/stack.js';
import { kubeletConfigYaml } from '../../support/upstream-kubelet.js';
import { podViews, type Agent, type AgentProcess, type PodView } from './agent.js';

const NODE = 'ks-bench-kubelet';

export class UpstreamKubeletAgent implements Agent {
  readonly name = 'kubelet';
  /** Its one cold start is the figure: a restart would be another namespace and containerd. */
  readonly restartable = false;
  readonly readiness = 'kubelet spawn to /healthz 200 (its containerd already up)';
  readonly manifests: string;
  readonly criEndpoint: string;
  private child?: ChildProcess;
  private readonly log: string;

  private constructor(
    private readonly binary: string,
    private readonly dir: string,
    private readonly ports: { server: number; readOnly: number; healthz: number },
    private readonly maxPods: number,
  ) {
    this.manifests = join(dir, 'manifests');
    this.criEndpoint = `unix://${join(dir, 'containerd-state', 'containerd', 'containerd.sock')}`;
    this.log = join(dir, 'kubelet.log');
  }

  /** Builds (or finds) the kubelet and prepares its directory; throws, saying why, when it cannot run here. */
  static async create(log: (line: string) => void, maxPods = 110): Promise<UpstreamKubeletAgent> {
    if (process.getuid?.() !== 0) throw new Error('the upstream kubelet needs root here (a mount namespace and a containerd of its own); the harness runs as another user');
    if (spawnSync('unshare', ['--version']).status !== 0) throw new Error('unshare (util-linux) is missing: the kubelet runs in a private mount namespace');
    log('kubelet: deploy/upstream-kubelet/build.sh (about 6 minutes of one core the first time)');
    const build = spawnSync('bash', [join(REPO_ROOT, 'deploy', 'upstream-kubelet', 'build.sh')], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
    const binary = build.stdout.trim().split('\n').pop() ?? '';
    if (build.status !== 0 || !existsSync(binary)) throw new Error(`the kubelet could not be built (deploy/upstream-kubelet/build.sh exit ${build.status}): ${build.stderr.trim().split('\n').slice(-5).join(' | ')}`);
    const dir = mkdtempSync(join(tmpdir(), 'ks-bench-kubelet-'));
    const agent = new UpstreamKubeletAgent(binary, dir, { server: await freePort(), readOnly: await freePort(), healthz: await freePort() }, maxPods);
    agent.writeConfig();
    return agent;
  }

  get description(): string {
    return `upstream kubelet v1.34.4 (${this.binary}), standalone, maxPods ${this.maxPods}, its own containerd (${this.criEndpoint.replace('unix://', '')}), cgroupfs, cgroupsPerQOS false, private mount namespace (deploy/upstream-kubelet/run.sh)`;
  }

  private writeConfig(): void {
    mkdirSync(this.manifests, { recursive: true });
    const config = {
      staticPodPath: this.manifests,
      fileCheckFrequency: '20s',
      address: '127.0.0.1',
      port: this.ports.server,
      readOnlyPort: this.ports.readOnly,
      healthzBindAddress: '127.0.0.1',
      healthzPort: this.ports.healthz,
      authentication: { anonymous: { enabled: true }, webhook: { enabled: false } },
      authorization: { mode: 'AlwaysAllow' },
      registerNode: false,
      podLogsDir: join(this.dir, 'pod-logs'),
      volumePluginDir: join(this.dir, 'volume-plugins'),
      containerRuntimeEndpoint: this.criEndpoint,
      maxPods: this.maxPods,
    };
    writeFileSync(join(this.dir, 'kubelet-config.yaml'), kubeletConfigYaml(config));
  }

  podName(name: string): string {
    return `${name}-${NODE}`;
  }

  /** The last lines the kubelet and run.sh wrote, for a failure's message. */
  private tail(n = 8): string {
    try {
      return readFileSync(this.log, 'utf8').trim().split('\n').slice(-n).join(' | ');
    } catch {
      return '';
    }
  }

  async start(): Promise<Record<string, number>> {
    const fd = openSync(this.log, 'a');
    try {
      this.child = spawn('bash', [join(REPO_ROOT, 'deploy', 'upstream-kubelet', 'run.sh'), this.dir, this.binary, NODE], { stdio: ['ignore', fd, fd] });
    } finally {
      closeSync(fd);
    }
    const child = this.child;
    const deadline = performance.now() + 180_000;
    const healthz = `http://127.0.0.1:${this.ports.healthz}/healthz`;
    for (;;) {
      if (child.exitCode !== null || child.signalCode !== null) throw new Error(`the kubelet exited before it was healthy (exit ${child.exitCode ?? child.signalCode}); ${this.log}: ${this.tail()}`);
      if (performance.now() > deadline) throw new Error(`the kubelet was not healthy within 180 s; ${this.log}: ${this.tail()}`);
      try {
        const res = await fetch(healthz, { signal: AbortSignal.timeout(1000) });
        if (res.status === 200) break;
      } catch {
        // not listening yet
      }
      await sleep(20);
    }
    const healthyAt = Date.now();
    const startedNs = Number(readFileSync(join(this.dir, 'kubelet.started'), 'utf8').trim());
    // /pods answers once the server runs; the pods then need the first relist.
    await this.pods();
    return { kubelet: healthyAt - startedNs / 1e6 };
  }

  async pods(): Promise<Map<string, PodView>> {
    const res = await fetch(`http://127.0.0.1:${this.ports.readOnly}/pods`, { signal: AbortSignal.timeout(10_000) });
    if (res.status !== 200) throw new Error(`the kubelet's GET /pods answered ${res.status}`);
    return podViews(await res.json());
  }

  processes(): AgentProcess[] {
    const pid = Number(readFileSync(join(this.dir, 'kubelet.pid'), 'utf8').trim());
    return [{ name: 'kubelet', pid }];
  }

  restartEach(): Promise<Record<string, number>> {
    return Promise.resolve({});
  }

  async stop(): Promise<void> {
    const child = this.child;
    if (child && child.exitCode === null && child.signalCode === null) {
      child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), 90_000);
      await exited(child);
      clearTimeout(timer);
    }
    // Its mounts lived in its own namespace: from here the directory holds plain files only.
    if (process.env['KS_BENCH_KEEP'] === undefined) rmSync(this.dir, { recursive: true, force: true });
  }
}
