/**
 * kubelet-split deployed as a user deploys it with compose, for tests and the
 * conformance runner: an env file of its own (a project name, a node name,
 * every port, the manifest, log and pod directories, the cgroup root),
 * `bash deploy/compose/up.sh --env-file FILE` with the images already built
 * (deploy/compose/images.sh, as the compose lane does first), and
 * `docker-compose down -v` at the end. Joined to a cluster (`cluster`), the
 * node's kubeconfig and the kubelet server's client CA go in a directory of
 * their own (NODE_KUBE_DIR, mounted read-only), readable by root and the
 * group 65532 (config-source runs as that user) only.
 *
 *   const node = new ComposeNode({ project: 'ks-x', node: 'n1', imageTag: 'ks-compose-test', runtimeSocket, runtimeRoot, nodeIp: '127.0.0.2',
 *                                  cluster: { server: cp.url, caFile: cp.caFile, token: cp.token('n1'), clientCaFile: cp.caFile } });
 *   await node.start();   // every container healthy
 *   node.listeners();     // what its processes listen on
 *   await node.stop();    // down -v, the mounts below the directory and the directory removed
 */
import { execFile } from 'node:child_process';
import { chmodSync, chownSync, copyFileSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { stringify } from 'yaml';
import { REPO_ROOT, freePorts } from '../../deploy/local/stack.js';

/** The uid and gid the image runs config-source as (and nats, prober: the Dockerfile's USER). */
const IMAGE_USER = 65532;

export interface ComposeNodeOptions {
  /** COMPOSE_PROJECT_NAME: containers, volumes and labels are the project's. */
  project: string;
  node: string;
  /** KS_IMAGE_TAG: images built already (deploy/compose/images.sh TAG). */
  imageTag: string;
  /** The host containerd's socket (deploy/runtime.sh address) and root directory. */
  runtimeSocket: string;
  runtimeRoot: string;
  /** NODE_IP: the Node's InternalIP, where the kubelet server listens (default 127.0.0.1). */
  nodeIp?: string;
  /** Joins the cluster: the apiserver, its CA, the node's bearer token, the CA of the apiserver's client certificate to kubelets. */
  cluster?: { server: string; caFile: string; token: string; clientCaFile: string };
  /** CGROUP_ROOT (default /<node>). */
  cgroupRoot?: string;
  /** The parent of the node's directory (default /tmp). */
  parentDir?: string;
  /** More settings for the env file. */
  settings?: Record<string, string>;
  /** DOCKER_HOST (default: the environment's, else deploy/compose/dockerd.sh's). */
  dockerHost?: string;
}

export interface Listener {
  /** The compose service whose process listens. */
  service: string;
  address: string;
  port: number;
}

export class ComposeNode {
  /** The node's directory: compose.env, manifests/, logs/, containers/, pods/, kube/. */
  readonly dir: string;
  readonly envFile: string;
  /** The settings the env file holds. */
  readonly settings: Record<string, string> = {};
  private readonly dockerHost: string;

  constructor(private readonly opts: ComposeNodeOptions) {
    this.dir = mkdtempSync(join(opts.parentDir ?? '/tmp', `ks-compose-${opts.project}-`));
    this.envFile = join(this.dir, 'compose.env');
    this.dockerHost = opts.dockerHost ?? process.env['DOCKER_HOST'] ?? 'unix:///run/kubelet-split-docker/docker.sock';
  }

  /** The read port (kubelet-server's GET /pods) and the kubelet server's HTTPS port, once started. */
  get readPort(): number {
    return Number(this.settings['KS_PORT_KUBELET_SERVER']);
  }
  get kubeletPort(): number {
    return Number(this.settings['KUBELET_SERVER_PORT']);
  }

  /** Writes the env file, runs deploy/compose/up.sh with it, and waits until every container is healthy. */
  async start(timeoutMs = 240_000): Promise<void> {
    for (const d of ['manifests', 'logs', 'containers', 'pods', 'kube', 'var-log']) mkdirSync(join(this.dir, d), { recursive: true });
    const [nats, kubelet, configSource, syncLoop, pleg, prober, read, cri, status, nodeStatus, consolePort] = await freePorts(11);
    const range = await freeRange(2);
    Object.assign(this.settings, {
      COMPOSE_PROJECT_NAME: this.opts.project,
      COMPOSE_PROFILES: 'services',
      NODE_NAME: this.opts.node,
      LOG_LEVEL: 'info',
      KS_IMAGE_TAG: this.opts.imageTag,
      NATS_PORT: String(nats),
      KS_PORT_CONFIG_SOURCE: String(configSource),
      KS_PORT_SYNC_LOOP: String(syncLoop),
      KS_PORT_PLEG: String(pleg),
      KS_PORT_PROBER: String(prober),
      KS_PORT_KUBELET_SERVER: String(read),
      KS_PORT_CRI_GATEWAY: String(cri),
      KS_PORT_STATUS_MANAGER: String(status),
      KS_PORT_NODE_STATUS: String(nodeStatus),
      KS_PORT_CONSOLE: String(consolePort),
      CONTAINERD_SOCKET_DIR: join(this.opts.runtimeSocket, '..'),
      CONTAINERD_ROOT_DIR: this.opts.runtimeRoot,
      POD_MANIFEST_PATH: join(this.dir, 'manifests'),
      POD_LOGS_DIR: join(this.dir, 'logs'),
      LEGACY_CONTAINER_LOGS_DIR: join(this.dir, 'containers'),
      SYSTEM_LOG_DIR: join(this.dir, 'var-log'),
      POD_ROOT_DIR: join(this.dir, 'pods'),
      CGROUP_ROOT: this.opts.cgroupRoot ?? `/${this.opts.node}`,
      POD_WORKER_REPLICAS: '2',
      POD_WORKER_PORT_RANGE: `${range}-${range + 1}`,
      IMAGE_GC_HIGH_THRESHOLD_PERCENT: '100',
      NODE_IP: this.opts.nodeIp ?? '127.0.0.1',
      KUBELET_SERVER_PORT: String(kubelet),
      NODE_KUBE_DIR: join(this.dir, 'kube'),
      NODE_KUBECONFIG: '',
      KUBELET_CLIENT_CA_FILE: '',
      ...(this.opts.cluster ? this.writeKubeDir(this.opts.cluster) : {}),
      ...this.opts.settings,
    });
    writeFileSync(this.envFile, Object.entries(this.settings).map(([k, v]) => `${k}=${v}\n`).join(''));
    await this.run('bash', [join(REPO_ROOT, 'deploy', 'compose', 'up.sh'), '--env-file', this.envFile], { KS_COMPOSE_SKIP_BUILD: '1' });
    await this.waitHealthy(9, timeoutMs);
  }

  /** NODE_KUBE_DIR: the kubeconfig (the CA by absolute path, the node's token) and the CAs, root:65532 0640. */
  private writeKubeDir(cluster: NonNullable<ComposeNodeOptions['cluster']>): Record<string, string> {
    const kube = join(this.dir, 'kube');
    const ca = join(kube, 'apiserver-ca.crt');
    const clientCa = join(kube, 'kubelet-client-ca.crt');
    const kubeconfig = join(kube, 'kubeconfig');
    copyFileSync(cluster.caFile, ca);
    copyFileSync(cluster.clientCaFile, clientCa);
    const user = `system:node:${this.opts.node}`;
    writeFileSync(
      kubeconfig,
      stringify({
        apiVersion: 'v1',
        kind: 'Config',
        clusters: [{ name: 'cluster', cluster: { server: cluster.server, 'certificate-authority': ca } }],
        users: [{ name: user, user: { token: cluster.token } }],
        contexts: [{ name: 'node', context: { cluster: 'cluster', user } }],
        'current-context': 'node',
      }),
    );
    for (const f of [ca, clientCa, kubeconfig]) {
      chownSync(f, 0, IMAGE_USER);
      chmodSync(f, 0o640);
    }
    chownSync(kube, 0, IMAGE_USER);
    chmodSync(kube, 0o750);
    return { NODE_KUBECONFIG: kubeconfig, KUBELET_CLIENT_CA_FILE: clientCa };
  }

  /** docker-compose with the node's env file, its output. */
  compose(args: string[], timeoutMs = 120_000): Promise<string> {
    return this.run('docker-compose', ['--env-file', this.envFile, '--project-directory', REPO_ROOT, '-f', join(REPO_ROOT, 'docker-compose.yml'), ...args], {}, timeoutMs);
  }

  docker(args: string[]): Promise<string> {
    return this.run('docker', args);
  }

  /** The project's containers (nats-credentials, which has exited, left out): id, service, health or state, main pid. */
  async containers(): Promise<{ id: string; service: string; health: string; pid: number }[]> {
    const ids = (await this.docker(['ps', '-q', '--filter', `label=com.docker.compose.project=${this.opts.project}`])).split('\n').filter(Boolean);
    if (ids.length === 0) return [];
    const lines = (await this.docker(['inspect', '-f', '{{.Id}} {{index .Config.Labels "com.docker.compose.service"}} {{if .State.Health}}{{.State.Health.Status}}{{else}}{{.State.Status}}{{end}} {{.State.Pid}}', ...ids])).split('\n').filter(Boolean);
    return lines
      .map((l) => l.split(' '))
      .map(([id = '', service = '', health = '', pid = '0']) => ({ id, service, health, pid: Number(pid) }))
      .filter((c) => c.service !== 'nats-credentials');
  }

  /** Waits until `count` containers run and each is healthy; throws with the unhealthy ones' last log lines. */
  async waitHealthy(count: number, timeoutMs: number): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    let last: { service: string; health: string }[] = [];
    while (Date.now() < deadline) {
      last = await this.containers();
      if (last.length === count && last.every((c) => c.health === 'healthy')) return;
      await new Promise((r) => setTimeout(r, 1000));
    }
    const logs = await this.compose(['logs', '--no-color', '--tail', '15']).catch((e: unknown) => (e as Error).message);
    throw new Error(`the compose node ${this.opts.project} was not healthy within ${timeoutMs / 1000} s (want ${count} containers healthy: ${last.map((c) => `${c.service} ${c.health}`).join(', ')})\n${logs}`);
  }

  /** Every TCP socket the project's processes listen on (ss -tlnp, by the containers' main pids). */
  async listeners(): Promise<Listener[]> {
    const byPid = new Map((await this.containers()).map((c) => [c.pid, c.service]));
    const out = await this.run('ss', ['-Htlnp']);
    const found: Listener[] = [];
    for (const line of out.split('\n')) {
      const local = line.trim().split(/\s+/)[3] ?? '';
      const sep = local.lastIndexOf(':');
      for (const m of line.matchAll(/pid=(\d+)/g)) {
        const service = byPid.get(Number(m[1]));
        if (service) found.push({ service, address: local.slice(0, sep).replace(/^\[|\]$/g, ''), port: Number(local.slice(sep + 1)) });
      }
    }
    return found;
  }

  /** `docker-compose down -v`, the shared mount up.sh made of the pod directory, the node's directory. */
  async stop(): Promise<void> {
    try {
      await this.compose(['down', '-v', '--remove-orphans'], 180_000);
    } finally {
      // The shared mount up.sh made of the pod directory, and what pods left mounted in it (volumes of pods
      // that were still there), deepest first: rm would otherwise stop at a busy mountpoint.
      for (const m of mountsUnder(this.dir)) await this.run('umount', [m]).catch(() => this.run('umount', ['-l', m]).catch(() => undefined));
      rmSync(this.dir, { recursive: true, force: true });
    }
  }

  private run(cmd: string, args: string[], env: Record<string, string> = {}, timeoutMs = 600_000): Promise<string> {
    return new Promise((resolve, reject) => {
      execFile(cmd, args, { encoding: 'utf8', maxBuffer: 32 << 20, timeout: timeoutMs, cwd: REPO_ROOT, env: { ...process.env, DOCKER_HOST: this.dockerHost, ...env } }, (err, stdout, stderr) =>
        err ? reject(new Error(`${cmd} ${args.join(' ')} failed: ${err.message}\n${stderr.slice(-4000)}`)) : resolve(stdout),
      );
    });
  }
}

/** The mount points at or below `dir` (/proc/self/mountinfo's fifth field, octal escapes decoded), deepest first. */
function mountsUnder(dir: string): string[] {
  return readFileSync('/proc/self/mountinfo', 'utf8')
    .split('\n')
    .map((line) => (line.split(' ')[4] ?? '').replace(/\\(\d{3})/g, (_, o: string) => String.fromCharCode(parseInt(o, 8))))
    .filter((m) => m === dir || m.startsWith(`${dir}/`))
    .sort((a, b) => b.length - a.length);
}

/** The first of `n` consecutive free loopback ports (pod-worker's PORT_RANGE), from a random start in 20000-29999. */
async function freeRange(n: number): Promise<number> {
  for (let attempt = 0; attempt < 50; attempt++) {
    const base = 20_000 + Math.floor(Math.random() * 10_000);
    const ok = await Promise.all(Array.from({ length: n }, (_, i) => isFree(base + i)));
    if (ok.every(Boolean)) return base;
  }
  throw new Error(`no ${n} consecutive free ports found`);
}

function isFree(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const srv = createServer();
    srv.once('error', () => resolve(false));
    srv.listen(port, '0.0.0.0', () => srv.close(() => resolve(true)));
  });
}

/** A setting the compose lane gives its test files (deploy/compose/test.sh sets it), or an error naming it. */
export function laneEnv(name: string): string {
  const v = process.env[name];
  if (!v) throw new Error(`${name} is not set (deploy/compose/test.sh sets it)`);
  return v;
}

/** Polls `fn` every 0.5 s until it returns a value (its errors are retried, the last one named), or throws after `timeoutMs`. */
export async function waitFor<T>(what: string, fn: () => Promise<T | undefined>, timeoutMs: number): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let last: unknown;
  while (Date.now() < deadline) {
    try {
      const v = await fn();
      if (v !== undefined) return v;
    } catch (err) {
      last = err;
    }
    await new Promise((r) => setTimeout(r, 500));
  }
  throw new Error(`timed out after ${timeoutMs / 1000} s waiting for ${what}${last ? ` (last: ${(last as Error).message})` : ''}`);
}
