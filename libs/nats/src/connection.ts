/**
 * The one NATS connection of a service. Its name is `<service>@<node>#<instance>`
 * so that the monitoring endpoint (/connz?subs=detail) shows who is who. It
 * reconnects forever: a restarted nats-server is an outage, not a crash.
 */
import { connect, type NatsConnection } from '@nats-io/transport-node';
import type { Logger } from '@app/observability';

export type { NatsConnection } from '@nats-io/transport-node';

export function connectionName(service: string, node: string, instance: string): string {
  return `${service}@${node}#${instance}`;
}

export interface ConnectOptions {
  servers: readonly string[];
  name: string;
  logger: Logger;
  /** How long to keep trying the first connection before giving up (ms). */
  connectTimeoutMs?: number;
}

export async function connectNats(opts: ConnectOptions): Promise<NatsConnection> {
  const nc = await connect({
    servers: [...opts.servers],
    name: opts.name,
    maxReconnectAttempts: -1,
    reconnectTimeWait: 500,
    waitOnFirstConnect: true,
    timeout: opts.connectTimeoutMs ?? 10_000,
    pingInterval: 10_000,
  });
  void watchStatus(nc, opts.logger);
  opts.logger.info({ server: nc.getServer(), connection: opts.name }, 'connected to NATS');
  return nc;
}

async function watchStatus(nc: NatsConnection, logger: Logger): Promise<void> {
  try {
    for await (const s of nc.status()) {
      switch (s.type) {
        case 'disconnect':
          logger.warn({ server: s.server }, 'NATS disconnected');
          break;
        case 'reconnect':
          logger.info({ server: s.server }, 'NATS reconnected');
          break;
        case 'error':
          logger.error({ err: s.error }, 'NATS error');
          break;
        default:
          logger.debug({ status: s.type }, 'NATS status');
      }
    }
  } catch (err) {
    logger.error({ err }, 'NATS status stream ended with an error');
  }
}

/**
 * Calls `fn` after every reconnection. Core NATS delivers at most once: what
 * was published while this connection (or its peers') was away is lost, so
 * a service that keeps state derived from messages resyncs from KV and its
 * peers here (the subscriptions themselves are restored by the client).
 * Returns a function that stops watching.
 */
export function onReconnect(nc: Pick<NatsConnection, 'status'>, fn: () => void): () => void {
  let stopped = false;
  void (async () => {
    for await (const s of nc.status()) {
      if (stopped) break;
      if (s.type === 'reconnect') fn();
    }
  })().catch(() => undefined);
  return () => void (stopped = true);
}

/** The calls waiting on each connection, failed together when it drops. */
const inFlight = new WeakMap<object, Set<() => void>>();

function waitersOf(nc: Pick<NatsConnection, 'status'>): Set<() => void> {
  let set = inFlight.get(nc);
  if (!set) {
    const waiters = new Set<() => void>();
    set = waiters;
    inFlight.set(nc, waiters);
    void (async () => {
      for await (const s of nc.status()) {
        if (s.type !== 'disconnect' && s.type !== 'reconnect') continue;
        for (const fail of [...waiters]) fail();
        waiters.clear();
      }
    })().catch(() => undefined);
  }
  return set;
}

/**
 * `request` as it is, except that it fails with `lost()` as soon as the
 * connection drops while it waits, or comes back after it was sent while
 * the connection was away. Such a request or its reply is often lost for
 * good after a nats-server restart (tried: a relist's ListPodSandbox sent
 * during the outage waited out its 32 s), so waiting out the whole deadline
 * (two minutes for a CRI call) only delays the caller's retry; the caller
 * retries as after any Unavailable. A connection without a status stream
 * (a test double) is waited on as it is.
 */
export function failOnDisconnect<T>(nc: Partial<Pick<NatsConnection, 'status'>>, request: Promise<T>, lost: () => Error): Promise<T> {
  if (typeof nc.status !== 'function') return request;
  const waiters = waitersOf(nc as Pick<NatsConnection, 'status'>);
  return new Promise<T>((resolve, reject) => {
    const fail = () => reject(lost());
    waiters.add(fail);
    request.then(
      (v) => {
        waiters.delete(fail);
        resolve(v);
      },
      (e: unknown) => {
        waiters.delete(fail);
        reject(e instanceof Error ? e : new Error(String(e)));
      },
    );
  });
}
