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
import { REPO_ROOT, exited, startNats, stopProcess, type NatsServer, type ServiceProcess } from '../../deploy/local/stack.js';
import type { ChildProcess } from 'node:child_process';
import { deleteBridge, ensureBridge, lineSink, unmountUnder, startControllers, startSplitNode, waitNodeReady, type NodeNetwork } from '../support/cluster-node.js';
import { startControlPlane, type ControlPlane } from '../support/control-plane.js';
import { CLUSTER_NETWORK, HostNetState, KUBE_PROXY_USER, deployCoreDns, startKubeProxy } from '../support/cluster-addons.js';
import { startUpstreamNode } from '../support/upstream-kubelet.js';
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

/** A conformant fleet's control plane has a bridge of its own (no pods on it): the apiserver binds its IP, which pods reach. */
export const CONTROL_PLANE_NETWORK: NodeNetwork = { bridge: 'ks-fleet0', subnet: '10.88.100.0/24', ip: '10.88.100.1' };

/** What every kind of node of the fleet does for the fleet. */
export interface FleetMember {
  readonly name: string;
  readonly net: ReturnType<typeof fleetNodeNetwork>;
  /** Its containerd's socket, once started. */
  readonly runtimeSocket: string;
  start(): Promise<void>;
  stop(): Promise<void>;
}

/** What a node is given by the fleet. */
interface MemberContext {
  cp: ControlPlane;
  hub?: Hub;
  dir: string;
  logs: string;
  podWorkerReplicas: number;
  /** Its pods' routes through the bridge: the other nodes' subnets, and in a conformant fleet the Services' and the control plane's. */
  routes: readonly string[];
  /** The kubelet's clusterDNS and clusterDomain (a conformant fleet). */
  dns?: { ip: string; domain: string };
  /** Called with the node's containerd socket once it answers, before the node joins (the suite's images). */
  images?: (socket: string) => Promise<void>;
}

/** One node of the fleet: its runtime, its leaf nats-server and link, its services. */
export class FleetNode implements FleetMember {
  nats!: NatsServer;
  link!: LeafLink;
  services: ServiceProcess[] = [];
  runtimeSocket = '';
  private bridgeMade = false;
  private runtimeStarted = false;

  constructor(
    readonly index: number,
    readonly net: ReturnType<typeof fleetNodeNetwork>,
    private readonly fleet: MemberContext & { hub: Hub },
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
    return { KS_RUNTIME_STATE: this.net.state, KS_RUNTIME_ROOT: this.net.root, KS_CNI_BRIDGE: this.net.bridge, KS_CNI_SUBNET: this.net.subnet, KS_CNI_ROUTES: this.fleet.routes.join(',') };
  }

  /** The bridge, containerd with the images, the leaf nats-server and its link, the services. */
  async start(): Promise<void> {
    ensureBridge(this.net);
    this.bridgeMade = true;
    await runScript('deploy/runtime.sh', ['start'], this.runtimeEnv);
    this.runtimeStarted = true;
    this.runtimeSocket = await runScript('deploy/runtime.sh', ['address'], this.runtimeEnv);
    await this.fleet.images?.(this.runtimeSocket);
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
      ...(this.fleet.dns ? { clusterDns: { servers: [this.fleet.dns.ip], domain: this.fleet.dns.domain } } : {}),
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

/** An upstream kubelet v1.34.4 node of the fleet (the baseline): its private mount namespace, its own containerd on its bridge. */
export class UpstreamFleetNode implements FleetMember {
  runtimeSocket = '';
  private child?: ChildProcess;
  private bridgeMade = false;

  constructor(
    readonly net: ReturnType<typeof fleetNodeNetwork>,
    private readonly kubelet: string,
    private readonly fleet: MemberContext,
  ) {}

  get name(): string {
    return this.net.node;
  }

  get work(): string {
    return join(this.fleet.dir, this.name);
  }

  async start(): Promise<void> {
    ensureBridge(this.net);
    this.bridgeMade = true;
    mkdirSync(this.work, { recursive: true });
    const { child, socket } = await startUpstreamNode({
      kubelet: this.kubelet,
      node: this.name,
      dir: this.work,
      kubeconfig: this.fleet.cp.kubeconfig(this.name),
      clientCaFile: this.fleet.cp.caFile,
      ip: this.net.ip,
      bridge: this.net.bridge,
      subnet: this.net.subnet,
      routes: this.fleet.routes,
      ...(this.fleet.dns ? { clusterDns: [this.fleet.dns.ip], clusterDomain: this.fleet.dns.domain } : {}),
      log: join(this.fleet.logs, `${this.name}.kubelet.log`),
    });
    this.child = child;
    this.runtimeSocket = socket;
    await this.fleet.images?.(socket);
  }

  async stop(): Promise<void> {
    if (this.child) await stopProcess(this.child, 60_000).catch(() => undefined);
    if (this.bridgeMade) {
      try {
        deleteBridge(this.net);
      } catch {
        // already gone
      }
    }
  }
}

/** A cluster the whole conformance suite judges: the parts a conformant cluster has that a node does not bring. */
export interface ConformantCluster {
  /** Called with each node's containerd socket before the node joins: the suite's images, CoreDNS's. */
  images: (socket: string) => Promise<void>;
  /** The CoreDNS image (imported by `images`). */
  coreDnsImage: string;
  /** Where deploy/conformance/build.sh put kube-proxy. */
  kubeProxyBin: string;
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
  /** Which kubelet the nodes run: kubelet-split (default) or the upstream kubelet v1.34.4 (deploy/upstream-kubelet/build.sh's, the baseline). */
  kubelet?: { kind: 'split' } | { kind: 'upstream'; bin: string };
  /**
   * A conformant cluster (docs/adr/0039): the apiserver on a bridge of its own which pods reach through
   * the `kubernetes` Service, kube-proxy, CoreDNS as the cluster DNS every kubelet names, the images.
   */
  conformant?: ConformantCluster;
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
  /** kubelet-split's nodes (none when the fleet runs upstream kubelets). */
  readonly nodes: FleetNode[] = [];
  /** Every node, whichever kubelet it runs. */
  readonly members: FleetMember[] = [];
  readonly logs: string;
  /** What the run changed of the machine's iptables rules and sysctls and did not undo (a conformant fleet checks, at stop). */
  leftovers: string[] = [];
  private hostNet?: HostNetState;
  private controlBridge = false;
  private stopKubeProxy?: () => Promise<void>;
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
    const conformant = this.opts.conformant;
    if (conformant) {
      // Before anything of the run touches them: compared at stop.
      this.hostNet = HostNetState.read();
      ensureBridge(CONTROL_PLANE_NETWORK);
      this.controlBridge = true;
    }
    say(`starting the control plane (etcd, kube-apiserver${conformant ? ` on ${CONTROL_PLANE_NETWORK.ip}` : ''}, kube-controller-manager, kube-scheduler)`);
    this.cp = await startControlPlane({
      nodes: nets.map((n) => n.node),
      kubeletClient: true,
      readyTimeoutMs: 120_000,
      ...(conformant ? { address: CONTROL_PLANE_NETWORK.ip, users: [KUBE_PROXY_USER] } : {}),
    });
    this.stopControllers = await startControllers(this.cp, conformanceBin, this.logs, this.opts.controllerArgs);
    const kubelet = this.opts.kubelet ?? { kind: 'split' as const };
    if (kubelet.kind === 'split') {
      say('starting the NATS hub (three servers, JetStream domain hub)');
      this.hub = await startHub({ dir: join(this.opts.dir, 'hub'), nodes: nets.map((n) => n.node), sink: (server) => lineSink(this.logs, `${server}.log`) });
    }
    this.forwarding.open([...(conformant ? [CONTROL_PLANE_NETWORK.bridge] : []), ...nets.map((n) => n.bridge)]);
    for (const [i, net] of nets.entries()) {
      const others = nets.filter((n) => n !== net).map((n) => n.subnet);
      const context: MemberContext = {
        cp: this.cp,
        dir: this.opts.dir,
        logs: this.logs,
        podWorkerReplicas: this.opts.podWorkerReplicas ?? 1,
        routes: conformant ? [...others, CLUSTER_NETWORK.serviceCidr, CONTROL_PLANE_NETWORK.subnet] : others,
        ...(conformant ? { dns: { ip: CLUSTER_NETWORK.dnsIp, domain: CLUSTER_NETWORK.domain }, images: conformant.images } : {}),
      };
      if (kubelet.kind === 'split') {
        const node = new FleetNode(i + 1, net, { ...context, hub: this.hub });
        this.nodes.push(node);
        this.members.push(node);
        say(`starting ${net.node}: containerd on ${net.bridge} ${net.subnet}, its leaf nats-server (domain ${nodeDomain(net.node)}), its services`);
        await node.start();
      } else {
        const node = new UpstreamFleetNode(net, kubelet.bin, context);
        this.members.push(node);
        say(`starting ${net.node}: the upstream kubelet v1.34.4 with its own containerd on ${net.bridge} ${net.subnet}`);
        await node.start();
      }
    }
    for (const node of this.members) await waitNodeReady(this.cp, node.name, 180_000);
    writeFileSync(join(this.opts.dir, 'kubeconfig-admin.yaml'), readFileSync(this.cp.kubeconfig('admin')), { mode: 0o600 });
    if (conformant) {
      const first = nets[0];
      if (!first) throw new Error('a conformant fleet has at least one node');
      say(`starting kube-proxy (iptables mode) for ${nets.map((n) => n.node).join(', ')}: NodePorts on ${nets.map((n) => n.ip).join(', ')}`);
      const proxy = await startKubeProxy({ cp: this.cp, bin: conformant.kubeProxyBin, logs: this.logs, node: first.node, nodeIps: nets.map((n) => n.ip), clusterCidr: '10.88.0.0/16' });
      this.stopKubeProxy = proxy.stop;
      say(`deploying CoreDNS (${conformant.coreDnsImage}) as kube-dns ${CLUSTER_NETWORK.dnsIp}, domain ${CLUSTER_NETWORK.domain}`);
      const ready = await deployCoreDns(this.cp, conformant.coreDnsImage);
      say(`CoreDNS: ${ready} replicas ready`);
    }
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
    await this.stopKubeProxy?.().catch((err: unknown) => this.opts.say(`stopping kube-proxy: ${(err as Error).message}`));
    for (const node of [...this.members].reverse()) await node.stop();
    this.forwarding.undo();
    if (this.controlBridge) {
      try {
        deleteBridge(CONTROL_PLANE_NETWORK);
      } catch {
        // already gone
      }
    }
    await this.hub?.stop().catch(() => undefined);
    await this.stopControllers?.().catch(() => undefined);
    await this.cp?.stop().catch(() => undefined);
    for (const node of this.members) {
      const work = join(this.opts.dir, node.name);
      try {
        unmountUnder(work);
        // Pods' directories, the node's JetStream store and credentials: the logs stay.
        rmSync(work, { recursive: true, force: true });
      } catch (err) {
        this.opts.say(`cleaning ${work}: ${(err as Error).message}`);
      }
    }
    if (this.hostNet) {
      // The CNI portmap plugin's chains, made on the nodes' first hostPort pod and never removed by it.
      const undone = this.hostNet.undoAddedChains(/CNI-HOSTPORT-/);
      if (undone.length > 0) this.opts.say(`removed the CNI portmap chains the run made (${undone.length} lines)`);
      const restored = this.hostNet.restoreSysctls();
      if (restored.length > 0) this.opts.say(`sysctls written back: ${restored.join(', ')}`);
      this.leftovers = this.hostNet.differences();
      this.opts.say(this.leftovers.length === 0 ? "the machine's iptables rules and sysctls are as before the run" : `left changed on the machine: ${this.leftovers.join('; ')}`);
    }
    rmSync(join(this.opts.dir, 'hub'), { recursive: true, force: true });
    this.releaseLock?.();
  }

}
