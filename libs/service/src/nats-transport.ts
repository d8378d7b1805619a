/**
 * A Nest microservice transport on the service's own NATS connection.
 *
 * Nest's built-in NATS transport wraps every message in its own envelope
 * (`{pattern, data, id}`) and opens a second connection. Our subjects are a
 * public contract (a PLEG written in Go must be able to publish on
 * `kubelet.<node>.pleg.<uid>`), so this transport speaks plain JSON with our
 * headers, shares the one named connection, and fills `{node}` into the
 * decorator patterns at subscribe time. See docs/adr/0002-nats-transport.md.
 *
 * Requests get exactly one reply: the handler's value, or
 * `{error:{code, description}}`. Bad input never reaches a handler and never
 * stops the subscription.
 */
import { RpcException, Server, NatsContext, type CustomTransportStrategy, type MessageHandler } from '@nestjs/microservices';
import { lastValueFrom } from 'rxjs';
import type { Msg, NatsConnection, Subscription } from '@nats-io/transport-node';
import { MessageError, isRecord, parseJson, resolvePattern, type ErrorReply } from '@app/contracts';
import { continueTrace, readMeta, replyHeaders } from '@app/tracing';
import type { Logger } from '@app/observability';

const encoder = new TextEncoder();

export interface TransportOptions {
  connection: NatsConnection;
  node: string;
  service: string;
  logger: Logger;
  /** A queue group for request/reply subjects, so replicas share them. */
  queue?: string;
  /** This instance's connection name, in the Kubelet-Sender header of its replies. */
  sender?: string;
}

/** Throw this from a handler to reply with a specific error code. */
export function rpcError(code: string, description: string): RpcException {
  return new RpcException({ code, description });
}

/** Turns whatever a handler threw into our error reply. */
export function toErrorReply(err: unknown): ErrorReply {
  const inner = err instanceof RpcException ? err.getError() : err;
  if (isRecord(inner) && typeof inner['code'] === 'string' && typeof inner['description'] === 'string') {
    return { error: { code: inner['code'], description: inner['description'] } };
  }
  if (inner instanceof MessageError) return { error: { code: 'InvalidArgument', description: inner.message } };
  if (inner instanceof Error) return { error: { code: 'Internal', description: inner.message } };
  if (isRecord(inner) && typeof inner['message'] === 'string') return { error: { code: 'Internal', description: inner['message'] } };
  return { error: { code: 'Internal', description: String(inner) } };
}

/** A refusal by version (docs/adr/0034) names the sender and its contract version, so the log says who is out of step. */
function versionRefusal(err: unknown): MessageError | undefined {
  const inner = err instanceof RpcException ? err.getError() : err;
  return inner instanceof MessageError && inner.refusal !== undefined ? inner : undefined;
}

function versionFacts(err: unknown, msg: Msg): Record<string, unknown> {
  const refused = versionRefusal(err);
  if (!refused) return {};
  const meta = readMeta(msg.headers);
  return { refusal: refused.refusal, ...(meta.sender ? { peer: meta.sender } : {}), ...(meta.contract !== undefined ? { peerContractVersion: meta.contract } : {}) };
}

function failureMessage(err: unknown): string {
  switch (versionRefusal(err)?.refusal) {
    case 'unsupported-version':
      return 'refused a message of a type version this service does not read';
    case 'unknown-kind':
      return 'ignored a message of a kind this service does not know';
    default:
      return 'handler failed';
  }
}

export class KubeletNatsTransport extends Server implements CustomTransportStrategy {
  private readonly subscriptions: Subscription[] = [];
  private readonly bound: string[] = [];

  constructor(private readonly opts: TransportOptions) {
    super();
  }

  /** The concrete subjects this transport subscribed to. */
  get subjects(): readonly string[] {
    return this.bound;
  }

  listen(callback: (err?: unknown) => void): void {
    try {
      for (const [pattern, handler] of this.messageHandlers) {
        const subject = resolvePattern(pattern, this.opts.node, this.opts.service);
        const queue = handler.isEventHandler ? undefined : this.opts.queue;
        const sub = this.opts.connection.subscribe(subject, {
          ...(queue ? { queue } : {}),
          callback: (err, msg) => {
            if (err) {
              this.opts.logger.error({ err, subject }, 'subscription error');
              return;
            }
            void continueTrace(msg, () => this.dispatch(handler, msg), this.opts.logger);
          },
        });
        this.subscriptions.push(sub);
        this.bound.push(subject);
      }
      callback();
    } catch (err) {
      callback(err);
    }
  }

  /** Stops taking work: unsubscribes; the connection itself is drained by the service. */
  close(): void {
    for (const sub of this.subscriptions.splice(0)) sub.unsubscribe();
  }

  on(): never {
    throw new Error('KubeletNatsTransport does not emit events');
  }

  unwrap<T>(): T {
    return this.opts.connection as T;
  }

  private async dispatch(handler: MessageHandler, msg: Msg): Promise<void> {
    const ctx = new NatsContext([msg.subject, msg.headers]);
    let data: unknown;
    try {
      data = msg.data.length === 0 ? {} : parseJson(msg.data);
    } catch (err) {
      this.opts.logger.warn({ subject: msg.subject, err: (err as Error).message }, 'dropped a message that is not JSON');
      this.reply(msg, toErrorReply(err));
      return;
    }
    try {
      const result: unknown = await lastValueFrom(this.transformToObservable(await handler(data, ctx)), { defaultValue: undefined });
      if (!handler.isEventHandler) this.reply(msg, result ?? {});
    } catch (err) {
      const reply = toErrorReply(err);
      this.opts.logger.warn({ subject: msg.subject, code: reply.error.code, err: reply.error.description, ...versionFacts(err, msg) }, failureMessage(err));
      this.reply(msg, reply);
    }
  }

  private reply(msg: Msg, body: unknown): void {
    if (!msg.reply) return;
    try {
      msg.respond(encoder.encode(JSON.stringify(body)), { headers: replyHeaders({ service: this.opts.service, ...(this.opts.sender ? { sender: this.opts.sender } : {}) }) });
    } catch (err) {
      this.opts.logger.error({ err, subject: msg.subject }, 'could not send a reply');
    }
  }
}
