/**
 * The one NATS connection of a service. Its name is `<service>@<node>#<instance>`
 * so that the monitoring endpoint (/connz?subs=detail) shows who is who. It
 * reconnects forever: a restarted nats-server is an outage, not a crash.
 *
 * It authenticates as the service's user (permissions.ts) and reads replies
 * on that user's own inbox prefix. nats.js reports a permission violation
 * only asynchronously (a publish the server drops, a subscription it
 * closes); each one is logged with the user and the subject and handed to
 * `onPermissionViolation`, so that the service fails visibly instead of
 * waiting for a message that never comes.
 */
import { connect, createInbox, errors, type NatsConnection } from '@nats-io/transport-node';
import type { Logger } from '@app/observability';

export type { NatsConnection } from '@nats-io/transport-node';

export function connectionName(service: string, node: string, instance: string): string {
  return `${service}@${node}#${instance}`;
}

/** The connection's name (`<service>@<node>#<instance>`), sent as Kubelet-Sender; undefined for an unnamed one. */
export function senderOf(nc: object): string | undefined {
  return (nc as { options?: { name?: string } }).options?.name;
}

/**
 * A new inbox under the connection's own prefix (`inboxPrefix` at connect),
 * for a reply subject a caller subscribes to itself: its NATS user may
 * subscribe only there (permissions.ts), so nats.js's bare createInbox()
 * (`_INBOX.`) would be refused.
 */
export function newInbox(nc: object): string {
  return createInbox((nc as { options?: { inboxPrefix?: string } }).options?.inboxPrefix);
}

export interface NatsCredentials {
  user: string;
  password: string;
}

/** The server refused something this user tried: what, and where. */
export interface PermissionViolation {
  user: string;
  operation: 'publish' | 'subscribe';
  subject: string;
  /** The server's own words. */
  message: string;
}

export function describeViolation(v: PermissionViolation): string {
  return `NATS user "${v.user}" may not ${v.operation} to "${v.subject}" (grant it in libs/nats/src/permissions.ts NATS_ACCESS, or stop using it)`;
}

/** The server refused this connection's credentials. */
export class NatsAuthError extends Error {
  constructor(
    readonly user: string | undefined,
    cause: unknown,
  ) {
    super(
      user === undefined
        ? `NATS requires credentials and none were given (${(cause as Error).message}): set NATS_USER and NATS_PASSWORD_FILE`
        : `NATS refused the credentials of user "${user}" (${(cause as Error).message}): check NATS_USER and the password in NATS_PASSWORD_FILE`,
      { cause },
    );
    this.name = 'NatsAuthError';
  }
}

export interface ConnectOptions {
  servers: readonly string[];
  name: string;
  logger: Logger;
  /** How long to keep trying the first connection before giving up (ms). */
  connectTimeoutMs?: number;
  /** The user to authenticate as; without them the connection is anonymous. */
  credentials?: NatsCredentials;
  /** Where replies to this connection's requests come (its user may subscribe only there). */
  inboxPrefix?: string;
  /** Called on every permission violation the server reports, after it is logged. */
  onPermissionViolation?: (v: PermissionViolation) => void;
}

export async function connectNats(opts: ConnectOptions): Promise<NatsConnection> {
  let nc: NatsConnection;
  try {
    nc = await connect({
      servers: [...opts.servers],
      name: opts.name,
      maxReconnectAttempts: -1,
      reconnectTimeWait: 500,
      waitOnFirstConnect: true,
      timeout: opts.connectTimeoutMs ?? 10_000,
      pingInterval: 10_000,
      ...(opts.credentials ? { user: opts.credentials.user, pass: opts.credentials.password } : {}),
      ...(opts.inboxPrefix ? { inboxPrefix: opts.inboxPrefix } : {}),
    });
  } catch (err) {
    if (err instanceof errors.AuthorizationError) throw new NatsAuthError(opts.credentials?.user, err);
    throw err;
  }
  void watchStatus(nc, opts);
  opts.logger.info({ server: nc.getServer(), connection: opts.name, user: opts.credentials?.user ?? null }, 'connected to NATS');
  return nc;
}

async function watchStatus(nc: NatsConnection, opts: ConnectOptions): Promise<void> {
  const { logger } = opts;
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
          if (s.error instanceof errors.PermissionViolationError) {
            const v: PermissionViolation = {
              user: opts.credentials?.user ?? '(anonymous)',
              operation: s.error.operation === 'publish' ? 'publish' : 'subscribe',
              subject: s.error.subject,
              message: s.error.message,
            };
            logger.error({ natsUser: v.user, operation: v.operation, subject: v.subject }, `NATS permission violation: ${describeViolation(v)}`);
            opts.onPermissionViolation?.(v);
          } else {
            logger.error({ err: s.error }, 'NATS error');
          }
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

