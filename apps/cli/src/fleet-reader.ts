/**
 * The FleetReader over the hub (fleet-commands.ts): a connection to the hub
 * as the fleet reader (@app/nats FLEET_READER_USER, its replies on
 * FLEET_INBOX_PREFIX), request-many to the hub servers' LEAFZ and to each
 * node's services on its own subjects (a publish carries no wildcard: the
 * permission `kubelet.*.service.*.info` lets the reader ask any one node),
 * and a node's trace stream read in its JetStream domain.
 *
 * A request-many waits up to `firstMs` (--timeout, default 5 s) for the first
 * reply, then takes replies until `stallMs` (1 s) pass without one: a node's
 * answer crosses its leaf link in milliseconds, so a second of silence means
 * every node that can answer has. No answer at all (no responders) is an
 * empty list, for the command to say what that means.
 */
import { errors, type NatsConnection } from '@nats-io/transport-node';
import { nodeDomain } from '@app/nats';
import { readPodTrace, type TraceRecord } from '@app/tracing';
import { DomainUnreachableError, FleetReader } from './fleet-commands.js';
import { Subjects } from '@app/contracts';
import { FLEET_LEAFZ_SUBJECT, fleetPodsSubject } from './fleet.js';

export interface RequestManyTiming {
  /** How long to wait for the first reply. */
  firstMs: number;
  /** The silence after a reply that ends the collection. */
  stallMs: number;
}

export const DEFAULT_FLEET_TIMING: RequestManyTiming = { firstMs: 5000, stallMs: 1000 };

const enc = new TextEncoder();
const dec = new TextDecoder();

/** Sends `payload` on `subject` and collects the JSON replies (a reply that is not JSON is skipped) for the time `timing` allows. */
export async function requestMany(nc: NatsConnection, subject: string, payload: unknown, timing: RequestManyTiming): Promise<unknown[]> {
  const replies: unknown[] = [];
  try {
    const it = await nc.requestMany(subject, enc.encode(JSON.stringify(payload)), { strategy: 'stall', stall: timing.stallMs, maxWait: timing.firstMs });
    for await (const m of it) {
      try {
        replies.push(JSON.parse(dec.decode(m.data)));
      } catch {
        // Not JSON: no answer of the contract.
      }
    }
  } catch (err) {
    if (!(err instanceof errors.NoRespondersError)) throw err;
  }
  return replies;
}

export class NatsFleetReader extends FleetReader {
  constructor(
    private readonly nc: NatsConnection,
    readonly where: string,
    private readonly timing: RequestManyTiming = DEFAULT_FLEET_TIMING,
  ) {
    super();
  }

  podLists(node: string): Promise<unknown[]> {
    return requestMany(this.nc, fleetPodsSubject(node), {}, this.timing);
  }

  /** One request-many per service, all at once (a service not deployed there has no responders: none). */
  async serviceInfos(node: string, services: readonly string[]): Promise<unknown[]> {
    return (await Promise.all(services.map((s) => requestMany(this.nc, Subjects.serviceInfo.build(node, s), {}, this.timing)))).flat();
  }

  /** With their subscriptions: a leaf's `$JS.<domain>.API` interest tells its node. */
  leafLinks(): Promise<unknown[]> {
    return requestMany(this.nc, FLEET_LEAFZ_SUBJECT, { subscriptions: true }, this.timing);
  }

  async podTrace(uid: string, node: string): Promise<{ records: TraceRecord[]; rejected: number }> {
    const domain = nodeDomain(node);
    try {
      return await readPodTrace(this.nc, uid, node, domain);
    } catch (err) {
      const e = err as Error;
      if (e instanceof errors.NoRespondersError || e instanceof errors.TimeoutError || /no responders|timeout|jetstream is not enabled|not enabled/i.test(e.message)) {
        throw new DomainUnreachableError(node, domain, e.message);
      }
      throw err;
    }
  }
}
