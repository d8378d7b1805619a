/**
 * The fleet's hub (deploy/nats/fabric.ts): three nats-servers in one cluster
 * on loopback, each supervised here so that a test can SIGKILL one and start
 * it again; and a link between each node's leaf node and the hub that a test
 * can cut (a TCP relay per node and hub server: what a network partition does
 * to the leaf connection, while the node's own nats-server runs on).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdirSync } from 'node:fs';
import { createServer, connect as tcpConnect, type Server, type Socket } from 'node:net';
import { join } from 'node:path';
import { connect } from '@nats-io/transport-node';
import { FLEET_INBOX_PREFIX, FLEET_READER_USER } from '@app/nats';
import { exited, freePorts, natsServerBinary, pipeLines, stopProcess, type LineSink } from '../../deploy/local/stack.js';
import { writeHubCredentials, type HubCredentials, type HubServerAddress } from '../../deploy/nats/fabric.js';

export interface HubServer {
  address: HubServerAddress;
  readonly process: ChildProcess | undefined;
  /** SIGKILL, as a crash. */
  kill(): Promise<void>;
  /** Starts it again on the same config and store; resolves once it answers. */
  start(): Promise<void>;
}

export interface Hub {
  servers: HubServer[];
  credentials: HubCredentials;
  /** nats.js connect options of the fleet reader. */
  fleetAuth(): { user: string; pass: string; inboxPrefix: string };
  stop(): Promise<void>;
}

/** Waits until `url` answers the fleet reader. */
async function waitAnswers(url: string, auth: { user: string; pass: string }, alive: () => boolean, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  let last = '';
  while (Date.now() < deadline) {
    if (!alive()) throw new Error(`the hub server at ${url} exited before it was ready`);
    try {
      const nc = await connect({ servers: url, ...auth, reconnect: false, timeout: 1000 });
      await nc.close();
      return;
    } catch (err) {
      last = (err as Error).message;
    }
    await new Promise((r) => setTimeout(r, 200));
  }
  throw new Error(`the hub server at ${url} did not answer within ${timeoutMs / 1000} s: ${last}`);
}

export async function startHub(opts: { dir: string; nodes: readonly string[]; sink: (server: string) => LineSink }): Promise<Hub> {
  const ports = await freePorts(9);
  const addresses: HubServerAddress[] = [0, 1, 2].map((i) => ({
    name: `ks-hub-${i}`,
    client: `127.0.0.1:${ports[i * 3]}`,
    cluster: `127.0.0.1:${ports[i * 3 + 1]}`,
    leaf: `127.0.0.1:${ports[i * 3 + 2]}`,
    // The leaf nodes reach the hub through their LeafLink only: a hub server's own leaf address, which it tells the
    // leaf node it accepted, would let the leaf reconnect around a cut link. Port 1 refuses.
    leafAdvertise: '127.0.0.1:1',
  }));
  mkdirSync(join(opts.dir, 'store'), { recursive: true, mode: 0o700 });
  const credentials = writeHubCredentials(join(opts.dir, 'auth'), { servers: addresses, nodes: opts.nodes, storeRoot: join(opts.dir, 'store') });
  const fleetAuth = () => ({ user: FLEET_READER_USER, pass: credentials.password(FLEET_READER_USER), inboxPrefix: FLEET_INBOX_PREFIX });
  const servers: HubServer[] = addresses.map((address) => {
    let child: ChildProcess | undefined;
    const server: HubServer = {
      address,
      get process() {
        return child;
      },
      async kill() {
        if (!child || child.exitCode !== null) return;
        child.kill('SIGKILL');
        await exited(child);
      },
      async start() {
        const c = spawn(natsServerBinary(), ['-c', credentials.configFile(address.name)], { stdio: ['ignore', 'pipe', 'pipe'] });
        child = c;
        pipeLines(c, opts.sink(address.name));
        await waitAnswers(`nats://${address.client}`, fleetAuth(), () => c.exitCode === null, 30_000);
      },
    };
    return server;
  });
  // All three at once: each waits for its routes, and the JetStream meta group needs a quorum.
  await Promise.all(servers.map((s) => s.start()));
  return {
    servers,
    credentials,
    fleetAuth,
    async stop() {
      await Promise.all(servers.flatMap((s) => (s.process ? [stopProcess(s.process, 10_000)] : [])));
    },
  };
}

/**
 * A node's link to the hub: one relay per hub server's leaf listener, on a
 * port of its own. `cut()` closes every relayed connection and refuses new
 * ones (the leaf node sees its link drop, as in a partition); `restore()`
 * lets them through again.
 */
export class LeafLink {
  private readonly relays: Server[] = [];
  private readonly sockets = new Set<Socket>();
  private open = true;
  /** The leaf URLs the node's leaf node is given. */
  readonly urls: string[] = [];

  static async start(targets: readonly string[]): Promise<LeafLink> {
    const link = new LeafLink();
    const ports = await freePorts(targets.length);
    await Promise.all(targets.map((target, i) => link.relay(target, ports[i] ?? 0)));
    return link;
  }

  private relay(target: string, port: number): Promise<void> {
    const [host, targetPort] = target.replace(/^nats-leaf:\/\//, '').split(':');
    const server = createServer((inbound) => {
      if (!this.open) {
        inbound.destroy();
        return;
      }
      const outbound = tcpConnect(Number(targetPort), host ?? '127.0.0.1');
      for (const s of [inbound, outbound]) {
        this.sockets.add(s);
        s.on('close', () => this.sockets.delete(s));
        s.on('error', () => undefined);
      }
      inbound.pipe(outbound);
      outbound.pipe(inbound);
      inbound.on('close', () => outbound.destroy());
      outbound.on('close', () => inbound.destroy());
    });
    this.relays.push(server);
    this.urls.push(`nats-leaf://127.0.0.1:${port}`);
    return new Promise((resolve, reject) => {
      server.once('error', reject);
      server.listen(port, '127.0.0.1', () => resolve());
    });
  }

  get isOpen(): boolean {
    return this.open;
  }

  cut(): void {
    this.open = false;
    for (const s of this.sockets) s.destroy();
  }

  restore(): void {
    this.open = true;
  }

  async stop(): Promise<void> {
    this.cut();
    await Promise.all(this.relays.map((r) => new Promise<void>((res) => r.close(() => res()))));
  }
}
