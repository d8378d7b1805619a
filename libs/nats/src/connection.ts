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

