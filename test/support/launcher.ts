/**
 * The local launcher as a user runs it (`bash deploy/up.sh`), for the
 * launcher's end-to-end tests: a state directory of its own (containerd's
 * state and root, the NATS credentials and store: KS_RUNTIME_STATE and
 * KS_RUNTIME_ROOT), free ports, its output kept and parsed (the table of
 * who runs where), and a look through /proc for whatever of it still runs.
 * KS_SKIP_BUILD=1: the checkout is built already (the tests run from dist/).
 * Its pods' directories, logs and cgroups are its own too (POD_ROOT_DIR,
 * POD_LOGS_DIR, CGROUP_ROOT, which the launcher's services inherit): the
 * orphan cleanup of a stack on another containerd of this machine would
 * otherwise take this one's pod cgroups for orphans and kill their
 * processes, and this one's theirs (the bench and the conformance runner
 * have a CGROUP_ROOT of their own for the same reason).
 */
import { execFileSync, spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { appendFileSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import { createInterface } from 'node:readline';
import { REPO_ROOT, exited, portFree } from '../../deploy/local/stack.js';
import { removeCgroupTree } from '../bench/harness/agent.js';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Polls `probe` until it returns a value, or throws after `timeoutMs` naming `what`. */
export async function waitFor<T>(what: string, probe: () => Promise<T | undefined> | T | undefined, timeoutMs: number, everyMs = 250): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const got = await probe();
    if (got !== undefined) return got;
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await sleep(everyMs);
  }
}

/** Resolves once `child` has exited or `ms` have passed (the timer cleared either way: it would hold the test process). */
export async function exitedWithin(child: ChildProcess, ms: number): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined;
  const done = await Promise.race([exited(child).then(() => true), new Promise<boolean>((r) => (timer = setTimeout(() => r(false), ms)))]);
  clearTimeout(timer);
  return done;
}

/** Whether a process with this pid exists (a zombie counts as gone). */
export function alive(pid: number): boolean {
  try {
    return !/^\S+ \(.*\) Z/.test(readFileSync(`/proc/${pid}/stat`, 'utf8'));
  } catch {
    return false;
  }
}

/** A busybox pod on the host network (no CNI bridge needed), sleeping. */
export function sleeperManifest(name: string): string {
  return [
    'apiVersion: v1',
    'kind: Pod',
    'metadata:',
    `  name: ${name}`,
    'spec:',
    '  hostNetwork: true',
    '  terminationGracePeriodSeconds: 2',
    '  containers:',
    '    - name: sleeper',
    '      image: localhost/kubelet-split/busybox:1.35',
    '      command: ["sh", "-c", "sleep 3600"]',
    '',
  ].join('\n');
}

/** A row of the launcher's table: SERVICE INSTANCE PORT PID READY. */
export interface LaunchedProcess {
  service: string;
  pid: number;
}

/**
 * Ports for one launcher: 40 in a row for the services (--port-base) and NATS's right after them,
 * below the kernel's ephemeral range (32768-60999 here): a port in it can be taken between this
 * check and the service's listen by any outgoing connection (a service's own NATS connection,
 * for the whole run), and that service would never be ready.
 */
async function launcherPorts(): Promise<{ nats: number; base: number }> {
  for (let attempt = 0; attempt < 50; attempt++) {
    const base = 20_000 + Math.floor(Math.random() * 120) * 100;
    const free = await Promise.all(Array.from({ length: 41 }, (_, i) => portFree(base + i)));
    if (free.every(Boolean)) return { nats: base + 40, base };
  }
  throw new Error('no 41 free ports in a row below 32000 for --port-base and --nats-port');
}

export class UpRun {
  readonly lines: string[] = [];
  readonly node: string;
  readonly manifests: string;
  readonly state: string;
  readonly root: string;
  child?: ChildProcess;
  ports = { nats: 0, base: 0 };
  private readonly waiters: { re: RegExp; resolve: (m: RegExpMatchArray) => void }[] = [];

  /** A fresh directory for the run, with `pods` static pod manifests (sleeperManifest) in it. */
  constructor(
    readonly dir: string,
    pods: string[],
  ) {
    this.node = `up-e2e-${process.pid}`;
    this.manifests = join(dir, 'manifests');
    this.state = join(dir, 'state');
    this.root = join(dir, 'root');
    mkdirSync(this.manifests, { recursive: true });
    for (const p of pods) writeFileSync(join(this.manifests, `${p}.yaml`), sleeperManifest(p));
  }

  static create(pods: string[]): UpRun {
    return new UpRun(mkdtempSync('/tmp/ks-up-'), pods);
  }

  /** Everything the launcher printed (kept after cleanUp: under KS_E2E_LOGS when set). */
  get logFile(): string {
    return join(process.env['KS_E2E_LOGS'] ?? tmpdir(), `${basename(this.dir)}.log`);
  }

  /** The environment deploy/runtime.sh and the launcher read for this run. */
  get runtimeEnv(): Record<string, string> {
    return { KS_RUNTIME_STATE: this.state, KS_RUNTIME_ROOT: this.root };
  }

  /** The pods' cgroups go under this (CGROUP_ROOT). */
  get cgroupRoot(): string {
    return `/${basename(this.dir)}`;
  }

  /** `bash deploy/up.sh` (or `wrap` around it, e.g. ['timeout', '-s', 'INT', '40']) with this run's directory and ports. */
  async start(wrap: string[] = []): Promise<ChildProcess> {
    this.ports = await launcherPorts();
    const argv = [...wrap, 'bash', join(REPO_ROOT, 'deploy', 'up.sh'), '--manifests', this.manifests, '--pod-workers', '1', '--nats-port', String(this.ports.nats), '--port-base', String(this.ports.base)];
    const [bin = 'bash', ...rest] = argv;
    const child = spawn(bin, rest, {
      env: {
        ...process.env,
        ...this.runtimeEnv,
        KS_SKIP_BUILD: '1',
        NODE_NAME: this.node,
        KS_RUNTIME_ADDRESS: undefined,
        CGROUP_ROOT: this.cgroupRoot,
        POD_ROOT_DIR: join(this.dir, 'pods'),
        POD_LOGS_DIR: join(this.dir, 'logs'),
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    this.child = child;
    for (const s of [child.stdout, child.stderr]) {
      if (!s) continue;
      createInterface({ input: s }).on('line', (line) => {
        this.lines.push(line);
        appendFileSync(this.logFile, `${line}\n`);
        for (const w of [...this.waiters]) {
          const m = w.re.exec(line);
          if (m) {
            this.waiters.splice(this.waiters.indexOf(w), 1);
            w.resolve(m);
          }
        }
      });
    }
    return child;
  }

  /** The first line of output matching `re` (earlier lines count), or throws after `timeoutMs`. */
  async line(re: RegExp, timeoutMs: number): Promise<RegExpMatchArray> {
    for (const l of this.lines) {
      const m = re.exec(l);
      if (m) return m;
    }
    return new Promise((resolve, reject) => {
      const w = { re, resolve: (m: RegExpMatchArray) => (clearTimeout(timer), resolve(m)) };
      const timer = setTimeout(() => {
        this.waiters.splice(this.waiters.indexOf(w), 1);
        reject(new Error(`no line matching ${re} within ${timeoutMs} ms; the launcher's own lines:\n${this.lines.filter((l) => /^launcher\s+\||exited \(code/.test(l)).slice(-20).join('\n')}\nthe last lines:\n${this.lines.slice(-30).join('\n')}`));
      }, timeoutMs);
      this.waiters.push(w);
    });
  }

  /** The processes of the launcher's table, once it is up (nats-server and every service process). */
  async table(timeoutMs: number): Promise<LaunchedProcess[]> {
    await this.line(/^kubelet-split is up on node/, timeoutMs);
    const start = this.lines.findIndex((l) => /^SERVICE\s+INSTANCE\s+PORT\s+PID/.test(l));
    const rows: LaunchedProcess[] = [];
    for (const l of this.lines.slice(start + 1)) {
      if (l.trim() === '') break;
      const m = /^(\S+)\s+\S+\s+(\d+)(?: \(monitor \d+\))?\s+(\d+)\s/.exec(l);
      if (m) rows.push({ service: m[1] ?? '', pid: Number(m[3]) });
    }
    return rows;
  }

  /** containerd's pid, as runtime.sh wrote it. */
  containerdPid(): number {
    return Number(readFileSync(join(this.state, 'containerd.pid'), 'utf8').trim());
  }

  get socket(): string {
    return join(this.state, 'containerd', 'containerd.sock');
  }

  /** The tasks (sandboxes and containers) containerd runs: id -> pid, RUNNING ones only. */
  tasks(): Map<string, number> {
    const out = execFileSync('ctr', ['--address', this.socket, '-n', 'k8s.io', 'tasks', 'ls'], { encoding: 'utf8', timeout: 10_000 });
    const tasks = new Map<string, number>();
    for (const l of out.split('\n').slice(1)) {
      const [id, pid, status] = l.trim().split(/\s+/);
      if (id && status === 'RUNNING') tasks.set(id, Number(pid));
    }
    return tasks;
  }

  /** Whether this run's containerd answers. */
  runtimeAnswers(): boolean {
    return spawnSync('ctr', ['--address', this.socket, 'version'], { timeout: 5000, stdio: 'ignore' }).status === 0;
  }

  /** The kubelet read port's GET /pods (kubelet-server: --port-base + 5), this node's pods. */
  async pods(): Promise<{ name: string; phase: string; ready: boolean; restarts: number; startedAt: string; terminated: number }[]> {
    const res = await fetch(`http://127.0.0.1:${this.ports.base + 5}/pods`, { signal: AbortSignal.timeout(5000) });
    if (res.status !== 200) throw new Error(`GET /pods answered ${res.status}`);
    const list = (await res.json()) as { items: { metadata?: { name?: string }; status?: { phase?: string; conditions?: { type: string; status: string }[]; containerStatuses?: { restartCount?: number; state?: { running?: { startedAt?: string } }; lastState?: { terminated?: unknown } }[] } }[] };
    return list.items.map((p) => ({
      name: p.metadata?.name ?? '',
      phase: p.status?.phase ?? '',
      ready: p.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True') ?? false,
      restarts: (p.status?.containerStatuses ?? []).reduce((n, c) => n + (c.restartCount ?? 0), 0),
      startedAt: p.status?.containerStatuses?.[0]?.state?.running?.startedAt ?? '',
      /** Containers that ran and ended (lastState.terminated): a container that was killed or restarted. */
      terminated: (p.status?.containerStatuses ?? []).filter((c) => c.lastState?.terminated !== undefined).length,
    }));
  }

  /**
   * Every process of this run still alive but the test's own: each has the run's directory in
   * its command line (containerd, its shims, nats-server's config) or its environment (the
   * launcher, the services: KS_RUNTIME_STATE, NATS_PASSWORD_FILE), plus `pids` (the containers').
   */
  remaining(pids: Iterable<number> = []): { pid: number; what: string }[] {
    const out = new Map<number, string>();
    for (const entry of readdirSync('/proc')) {
      const pid = Number(entry);
      if (!Number.isInteger(pid) || pid === process.pid || !alive(pid)) continue;
      try {
        const cmdline = readFileSync(`/proc/${pid}/cmdline`, 'utf8').replace(/\0/g, ' ').trim();
        const environ = readFileSync(`/proc/${pid}/environ`, 'utf8');
        if (cmdline.includes(this.dir) || environ.includes(this.dir)) out.set(pid, cmdline.slice(0, 160));
      } catch {
        // gone meanwhile
      }
    }
    for (const pid of pids) {
      if (!out.has(pid) && alive(pid)) {
        let cmdline = '';
        try {
          cmdline = readFileSync(`/proc/${pid}/cmdline`, 'utf8').replace(/\0/g, ' ').trim();
        } catch {
          // gone meanwhile
        }
        out.set(pid, cmdline.slice(0, 160));
      }
    }
    return [...out].map(([pid, what]) => ({ pid, what }));
  }

  /**
   * After the test, whatever it left: every remaining process of the run SIGKILLed by pid, the
   * run's containerd started again to stop its tasks (runtime.sh stop), the directory removed.
   */
  cleanUp(pids: Iterable<number> = []): void {
    const env = { ...process.env, ...this.runtimeEnv, KS_SKIP_IMAGES: '1' };
    for (const { pid, what } of this.remaining(pids)) {
      if (/containerd-shim/.test(what)) continue;
      try {
        process.kill(pid, 'SIGKILL');
      } catch {
        // gone meanwhile
      }
    }
    // A shim or a pod's container left: the run's containerd once more, to stop its tasks.
    if (this.remaining(pids).length > 0) {
      const script = join(REPO_ROOT, 'deploy', 'runtime.sh');
      spawnSync('bash', [script, 'start'], { env, stdio: 'ignore', timeout: 60_000 });
      spawnSync('bash', [script, 'stop'], { env, stdio: 'ignore', timeout: 60_000 });
    }
    for (const { pid } of this.remaining(pids)) {
      try {
        process.kill(pid, 'SIGKILL');
      } catch {
        // gone meanwhile
      }
    }
    const mounts = readFileSync('/proc/mounts', 'utf8').split('\n').map((l) => l.split(' ')[1] ?? '').filter((m) => m.startsWith(`${this.dir}/`));
    for (const m of mounts.reverse()) spawnSync('umount', ['-l', m], { stdio: 'ignore' });
    removeCgroupTree(this.cgroupRoot);
    rmSync(this.dir, { recursive: true, force: true });
  }
}
