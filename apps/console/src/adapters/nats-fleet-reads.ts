/**
 * FleetReads on the hub, as the fleet reader (libs/nats fleet.ts: user
 * `fleet`, its replies on FLEET_INBOX_PREFIX, read-only requests only). The
 * console's own node user never reads the fleet: this is a connection of its
 * own, to the hub, made in the background so that a hub that is down does
 * not hold the console's boot (the page says so until it is up).
 *
 * The nodes are found in the hub's leaf links: `$SYS.REQ.SERVER.PING.LEAFZ`
 * with `subscriptions`, each hub server answering for the leaf nodes linked
 * to it, each leaf's list holding the subjects the fabric lets cross
 * (leafPermissions: `kubelet.<node>.service.*` reads, `$JS.<node>.API.>`).
 * A request to `kubelet.*.service.*.info` would reach nobody: a subject
 * published with `*` in it is taken literally.
 */
import { errors, type Msg } from '@nats-io/transport-node';
import { Headers } from '@app/tracing';
import { MessageTypes, SERVICE_NAMES, Subjects, type NodeConditionsMessage, type PodList, type ServiceInfo } from '@app/contracts';
import { FLEET_INBOX_PREFIX, FLEET_READER_USER, HUB_LEAFZ_SUBJECT, connectNats, leafNodeOf, fleetReadSubject, isErrorReply, type NatsConnection } from '@app/nats';
import type { Logger } from '@app/observability';
import { FleetReads, type FleetAnswer } from '../ports.js';

/** The console's connection to the hub, made once and kept (nats.js reconnects by itself). */
export class HubConnection {
  private nc: NatsConnection | undefined;
  private failure: string | undefined;
  private closed = false;
  private readonly connecting: Promise<void>;

  constructor(opts: { servers: readonly string[]; password: string; name: string; logger: Logger }) {
    this.connecting = connectNats({ servers: opts.servers, name: opts.name, logger: opts.logger, credentials: { user: FLEET_READER_USER, password: opts.password }, inboxPrefix: FLEET_INBOX_PREFIX, connectTimeoutMs: 24 * 3600_000 })
      .then(async (nc) => {
        if (this.closed) await nc.close();
        else this.nc = nc;
      })
      .catch((err: unknown) => {
        this.failure = (err as Error).message;
        opts.logger.error({ err: this.failure }, 'the fleet page cannot connect to the hub');
      });
  }

  /** The connection, or why there is none. */
  get current(): NatsConnection {
    if (this.nc && !this.nc.isClosed()) return this.nc;
    throw new Error(this.failure ? `the hub refused the fleet reader: ${this.failure}` : 'not connected to the hub (yet)');
  }

  async close(): Promise<void> {
    this.closed = true;
    await this.connecting;
    await this.nc?.close().catch(() => undefined);
  }
}

/** One hub server's LEAFZ answer, the fields read. */
interface LeafzAnswer {
  data?: { leafs?: { name?: string; subscriptions_list?: string[] }[] };
}

/** The nodes of the leaf links in LEAFZ answers (@app/nats leafNodeOf). */
export function nodesOfLeafz(answers: readonly unknown[]): string[] {
  const nodes = new Set<string>();
  for (const a of answers as LeafzAnswer[]) {
    for (const leaf of a.data?.leafs ?? []) {
      const node = leafNodeOf(leaf.subscriptions_list);
      if (node !== undefined) nodes.add(node);
    }
  }
  return [...nodes].sort();
}

function noResponders(err: unknown): boolean {
  return err instanceof errors.NoRespondersError || (err instanceof errors.RequestError && err.isNoResponders());
}

export class NatsFleetReads extends FleetReads {
  constructor(
    private readonly hub: Pick<HubConnection, 'current'>,
    readonly boundMs = 2000,
  ) {
    super();
  }

  async linkedNodes(): Promise<string[]> {
    // The hub's own servers answer, near each other: a shorter wait than a node's.
    return nodesOfLeafz((await this.many(HUB_LEAFZ_SUBJECT, { subscriptions: true }, Math.min(this.boundMs, 1000))).map((a) => a.body));
  }

  async serviceInfos(node: string): Promise<ServiceInfo[]> {
    // Each service by name (the info subject names it); those with no instance on the node answer "no responders" at once.
    const each = await Promise.all(SERVICE_NAMES.map((service) => this.many<ServiceInfo>(Subjects.serviceInfo.build(node, service))));
    return each.flat().map((a) => a.body).filter((b) => b.type === 'kubelet.v1.service_info');
  }

  podLists(node: string): Promise<FleetAnswer<PodList>[]> {
    return this.many<PodList>(fleetReadSubject('pods', node));
  }

  async nodeConditions(node: string): Promise<NodeConditionsMessage[]> {
    return (await this.many<NodeConditionsMessage>(fleetReadSubject('nodeConditions', node))).map((a) => a.body).filter((b) => b.type === MessageTypes.nodeConditions);
  }

  /** A request-many: every answer within the bound (none: no responders, or none in time); error replies skipped. */
  private async many<T>(subject: string, body: unknown = {}, maxWait = this.boundMs): Promise<FleetAnswer<T>[]> {
    const out: FleetAnswer<T>[] = [];
    try {
      for await (const m of await this.hub.current.requestMany(subject, JSON.stringify(body), { maxWait })) {
        const answer = decode<T>(m);
        if (answer) out.push(answer);
      }
    } catch (err) {
      if (!noResponders(err)) throw err;
    }
    return out;
  }
}

function decode<T>(m: Msg): FleetAnswer<T> | undefined {
  if (m.data.length === 0) return undefined;
  let body: unknown;
  try {
    body = m.json();
  } catch {
    return undefined;
  }
  if (typeof body !== 'object' || body === null || isErrorReply(body)) return undefined;
  return { sender: m.headers?.get(Headers.sender) || undefined, body: body as T };
}
