/**
 * A fleet on this machine, as kind makes a cluster of nodes on one host
 * (docs/adr/0038-fleet-nats-fabric.md): one control plane (etcd,
 * kube-apiserver, kube-scheduler, kube-controller-manager), the NATS hub
 * (three servers: hub.ts), and N kubelet-split nodes, each with its own
 * bridge and pod subnet, its own containerd on it, its own nats-server (a
 * leaf node of the hub with the node's own JetStream domain, through a link
 * a test can cut) and its own services. The nodes' bridges are on this
 * host, so the host routes between the pod subnets; the fleet turns on IPv4
 * forwarding and lets traffic pass between its bridges (FORWARD rules of its
 * own), and undoes both when it stops.
 *
 * Used by `npm run fleet` (fleet.ts), its tests and the fleet bench.
 */
import { execFile, execFileSync } from 'node:child_process';
import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { FLEET_READER_USER, nodeDomain } from '@app/nats';
import { REPO_ROOT, exited, startNats, type NatsServer, type ServiceProcess } from '../../deploy/local/stack.js';
import { deleteBridge, ensureBridge, lineSink, unmountUnder, startControllers, startSplitNode, waitNodeReady, type NodeNetwork } from '../support/cluster-node.js';
import { startControlPlane, type ControlPlane } from '../support/control-plane.js';
import { takeFleetLock } from './fleet-lock.js';
import { LeafLink, startHub, type Hub } from './hub.js';

/** Runs a script of the repository and returns its last line of output. */
export function runScript(path: string, scriptArgs: string[] = [], env: NodeJS.ProcessEnv = {}, ownSession = false): Promise<string> {
  return new Promise((res, rej) => {
    const argv = ['bash', join(REPO_ROOT, path), ...scriptArgs];
    execFile(ownSession ? 'setsid' : 'bash', ownSession ? ['-w', ...argv] : argv.slice(1), { encoding: 'utf8', maxBuffer: 16 << 20, env: { ...process.env, ...env } }, (err, stdout, stderr) =>
      err ? rej(new Error(`${path} ${scriptArgs.join(' ')} failed: ${err.message}\n${stderr.slice(-3000)}`)) : res(stdout.trim().split('\n').pop() ?? ''),
    );
  });
}

/** The i-th node's name and network (i from 1): `ks-fleet-<i>`, bridge `ks-fleet<i>`, 10.88.(100+i).0/24. */
export function fleetNodeNetwork(i: number): NodeNetwork & { node: string; state: string; root: string } {
  if (!Number.isInteger(i) || i < 1 || i > 100) throw new Error(`a fleet has nodes 1 to 100, not ${i}`);
  return {
    node: `ks-fleet-${i}`,
    bridge: `ks-fleet${i}`,
    subnet: `10.88.${100 + i}.0/24`,
    ip: `10.88.${100 + i}.1`,
    state: `/run/kubelet-split-fleet-${i}`,
    root: `/var/lib/kubelet-split-fleet-${i}`,
  };
}

/** One node of the fleet: its runtime, its leaf nats-server and link, its services. */
export class FleetNode {
  nats!: NatsServer;
  link!: LeafLink;
  services: ServiceProcess[] = [];
  runtimeSocket = '';
  private bridgeMade = false;
  private runtimeStarted = false;

  constructor(
    readonly index: number,
    readonly net: ReturnType<typeof fleetNodeNetwork>,
    private readonly fleet: { cp: ControlPlane; hub: Hub; dir: string; logs: string; podWorkerReplicas: number; subnets: readonly string[] },
  ) {}

  /** The node's web console (the status group's console module). */
  get consoleUrl(): string | undefined {
    const c = this.services.find((sp) => sp.service === 'console');
    return c ? `http://127.0.0.1:${c.port}/console` : undefined;
  }

  get name(): string {
    return this.net.node;
  }

  get work(): string {
    return join(this.fleet.dir, this.name);
  }

  private get runtimeEnv(): NodeJS.ProcessEnv {
    // Its pods' routes to the other nodes' pod subnets, through the bridge (the host forwards between them).
    const others = this.fleet.subnets.filter((s) => s !== this.net.subnet);
    return { KS_RUNTIME_STATE: this.net.state, KS_RUNTIME_ROOT: this.net.root, KS_CNI_BRIDGE: this.net.bridge, KS_CNI_SUBNET: this.net.subnet, KS_CNI_ROUTES: others.join(',') };
  }

  /** The bridge, containerd with the images, the leaf nats-server and its link, the services. */
  async start(): Promise<void> {
    ensureBridge(this.net);
    this.bridgeMade = true;
    await runScript('deploy/runtime.sh', ['start'], this.runtimeEnv);
    this.runtimeStarted = true;
    this.runtimeSocket = await runScript('deploy/runtime.sh', ['address'], this.runtimeEnv);
    mkdirSync(this.work, { recursive: true });
    this.link = await LeafLink.start(this.fleet.hub.credentials.leafUrls);
    this.nats = await startNats({
      nodes: [this.name],
      serverName: `ks-leaf-${this.name}`,
      domain: nodeDomain(this.name),
      leaf: { urls: this.link.urls, ...this.fleet.hub.credentials.leaf(this.name) },
      storeDir: join(this.work, 'nats-store'),
      credentialsDir: join(this.work, 'nats-auth'),
      sink: lineSink(this.fleet.logs, `${this.name}.nats-server.log`),
    });
    await this.startServices();
  }

  async startServices(): Promise<void> {
    this.services = await startSplitNode({
      node: this.name,
      natsUrl: this.nats.url,
      kubeconfig: this.fleet.cp.kubeconfig(this.name),
      clientCaFile: this.fleet.cp.caFile,
      ip: this.net.ip,
      runtimeSocket: this.runtimeSocket,
      work: this.work,
      logs: this.fleet.logs,
      logPrefix: `${this.name}.`,
      cgroupRoot: `/kubelet-split-fleet-${this.index}`,
      podWorkerReplicas: this.fleet.podWorkerReplicas,
      // The first node's console has the fleet page, as the fleet reader (a connection of its own to the hub).
      ...(this.index === 1 ? { fleet: { urls: this.fleet.hub.credentials.clientUrls, passwordFile: this.fleet.hub.credentials.passwordFile(FLEET_READER_USER) } } : {}),
    });
  }

  /** The node's stack dies at once: every service and its nats-server SIGKILLed (containerd and the pods stay). */
  async kill(): Promise<void> {
    const all = [...this.services.map((sp) => sp.process), this.nats.process];
    for (const child of all) if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    await Promise.all(all.map(exited));
    this.services = [];
  }

  /** The stack back after kill(): its nats-server on the same store and users, then its services. */
  async revive(): Promise<void> {
    await this.nats.restart({ kill: true, downMs: 0 });
    await this.startServices();
  }

  async stop(): Promise<void> {
    for (const sp of [...this.services].reverse()) await sp.stop(15_000).catch(() => undefined);
    this.services = [];
    await this.nats?.stop().catch(() => undefined);
    await this.link?.stop();
    if (this.runtimeStarted) await runScript('deploy/runtime.sh', ['stop'], this.runtimeEnv, true).catch(() => undefined);
    if (this.bridgeMade) {
      try {
        deleteBridge(this.net);
      } catch {
        // already gone
      }
    }
  }
}

export interface FleetOptions {
  nodes: number;
  /** The run's directory: logs/, the control plane's kubeconfigs, each node's work directory. */
  dir: string;
  say: (line: string) => void;
  /** Pod workers per node (default 1). */
  podWorkerReplicas?: number;
  /** More kube-controller-manager flags (the node-monitor grace period in tests). */
  controllerArgs?: string[];
}

const IPTABLES_TAG = 'kubelet-split-fleet';

/** The host's forwarding between the fleet's bridges: ip_forward on, FORWARD accepted between them; undone by undo(). */
class HostForwarding {
  private ipForwardWas: string | undefined;
  private readonly rules: string[][] = [];

  open(bridges: readonly string[]): void {
    this.ipForwardWas = readFileSync('/proc/sys/net/ipv4/ip_forward', 'utf8').trim();
    if (this.ipForwardWas !== '1') writeFileSync('/proc/sys/net/ipv4/ip_forward', '1');
    for (const a of bridges) {
      for (const b of bridges) {
        const rule = ['FORWARD', '-i', a, '-o', b, '-m', 'comment', '--comment', IPTABLES_TAG, '-j', 'ACCEPT'];
        execFileSync('iptables', ['-w', '-I', ...rule], { stdio: 'ignore' });
        this.rules.push(rule);
      }
    }
  }

  undo(): void {
    for (const rule of this.rules.splice(0)) {
      try {
        execFileSync('iptables', ['-w', '-D', ...rule], { stdio: 'ignore' });
      } catch {
        // already gone
      }
    }
    if (this.ipForwardWas !== undefined && this.ipForwardWas !== '1') writeFileSync('/proc/sys/net/ipv4/ip_forward', this.ipForwardWas);
    this.ipForwardWas = undefined;
  }
}

export class Fleet {
  cp!: ControlPlane;
  hub!: Hub;
  readonly nodes: FleetNode[] = [];
  readonly logs: string;
  private stopControllers?: () => Promise<void>;
  private readonly forwarding = new HostForwarding();
  private stopped = false;
  private releaseLock?: () => void;

  private constructor(private readonly opts: FleetOptions) {
    this.logs = join(opts.dir, 'logs');
  }

  /** Everything up, each node Ready; on a failure, what was started is stopped and the error thrown. */
  static async start(opts: FleetOptions): Promise<Fleet> {
    const fleet = new Fleet(opts);
    try {
      await fleet.up();
    } catch (err) {
      await fleet.stop();
      throw err;
    }
    return fleet;
  }

  private async up(): Promise<void> {
    const { say } = this.opts;
    this.releaseLock = takeFleetLock();
    mkdirSync(this.logs, { recursive: true });
    // The control plane copies its logs there when it stops (a test run's own directory when it has one).
    process.env['KS_E2E_LOGS'] ??= this.logs;
    const nets = Array.from({ length: this.opts.nodes }, (_, i) => fleetNodeNetwork(i + 1));
    say('building what is missing (deploy/conformance/build.sh: kube-scheduler, kube-controller-manager; deploy/control-plane/build.sh: etcd, kube-apiserver)');
    const conformanceBin = await runScript('deploy/conformance/build.sh');
    process.env['KS_CONTROL_PLANE_BIN'] = await runScript('deploy/control-plane/build.sh', ['kubectl']);
    say('starting the control plane (etcd, kube-apiserver, kube-controller-manager, kube-scheduler)');
    this.cp = await startControlPlane({ nodes: nets.map((n) => n.node), kubeletClient: true, readyTimeoutMs: 120_000 });
    this.stopControllers = await startControllers(this.cp, conformanceBin, this.logs, this.opts.controllerArgs);
    say('starting the NATS hub (three servers, JetStream domain hub)');
    this.hub = await startHub({ dir: join(this.opts.dir, 'hub'), nodes: nets.map((n) => n.node), sink: (server) => lineSink(this.logs, `${server}.log`) });
    this.forwarding.open(nets.map((n) => n.bridge));
    for (const [i, net] of nets.entries()) {
      const node = new FleetNode(i + 1, net, { cp: this.cp, hub: this.hub, dir: this.opts.dir, logs: this.logs, podWorkerReplicas: this.opts.podWorkerReplicas ?? 1, subnets: nets.map((n) => n.subnet) });
      this.nodes.push(node);
      say(`starting ${net.node}: containerd on ${net.bridge} ${net.subnet}, its leaf nats-server (domain ${nodeDomain(net.node)}), its services`);
      await node.start();
    }
    for (const node of this.nodes) await waitNodeReady(this.cp, node.name, 180_000);
    writeFileSync(join(this.opts.dir, 'kubeconfig-admin.yaml'), readFileSync(this.cp.kubeconfig('admin')), { mode: 0o600 });
  }

  node(name: string): FleetNode {
    const n = this.nodes.find((x) => x.name === name);
    if (!n) throw new Error(`no node ${name} in the fleet (${this.nodes.map((x) => x.name).join(', ')})`);
    return n;
  }

  /** Every node (services, nats, containerd, bridge), the hub, the controllers, the control plane; once. What stays in the run's directory is logs/. */
  async stop(): Promise<void> {
    if (this.stopped) return;
    this.stopped = true;
    for (const node of [...this.nodes].reverse()) await node.stop();
    this.forwarding.undo();
    await this.hub?.stop().catch(() => undefined);
    await this.stopControllers?.().catch(() => undefined);
    await this.cp?.stop().catch(() => undefined);
    for (const node of this.nodes) {
      try {
        unmountUnder(node.work);
        // Pods' directories, the node's JetStream store and credentials: the logs stay.
        rmSync(node.work, { recursive: true, force: true });
      } catch (err) {
        this.opts.say(`cleaning ${node.work}: ${(err as Error).message}`);
      }
    }
    rmSync(join(this.opts.dir, 'hub'), { recursive: true, force: true });
    this.releaseLock?.();
  }

}
