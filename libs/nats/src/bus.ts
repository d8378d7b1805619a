/**
 * Publishing and requesting JSON with our headers. The adapter every service
 * uses to talk to the others; domain code depends on it through narrow ports.
 */
import type { NatsConnection } from '@nats-io/transport-node';
import { isRecord, parseJson, type ErrorReply } from '@app/contracts';
import { senderOf } from './connection.js';
import { messageHeaders, type MessageMeta } from './headers.js';

const encoder = new TextEncoder();

/** An error reply from a request/reply peer, with its code kept. */
export class RemoteError extends Error {
  constructor(
    readonly code: string,
    readonly description: string,
    readonly subject: string,
  ) {
    super(`${subject}: ${code}: ${description}`);
    this.name = 'RemoteError';
  }
}

export function isErrorReply(v: unknown): v is ErrorReply {
  return isRecord(v) && isRecord(v['error']) && typeof v['error']['code'] === 'string';
}

export class NatsBus {
  private readonly sender: string | undefined;

  constructor(
    private readonly nc: NatsConnection,
    private readonly service: string,
  ) {
    this.sender = senderOf(nc);
  }

  private headers(meta: MessageMeta | undefined) {
    return messageHeaders({ service: this.service, ...(this.sender ? { sender: this.sender } : {}), ...meta });
  }

  publish(subject: string, payload: unknown, meta: MessageMeta = {}): void {
    this.nc.publish(subject, encoder.encode(JSON.stringify(payload)), {
      headers: this.headers(meta),
    });
  }

  /** Sends a request and returns the decoded reply; an `{error}` reply is thrown as RemoteError. */
  async request<T = unknown>(subject: string, payload: unknown, opts: { timeoutMs: number; meta?: MessageMeta }): Promise<T> {
    const reply = await this.nc.request(subject, encoder.encode(JSON.stringify(payload)), {
      timeout: opts.timeoutMs,
      headers: this.headers(opts.meta),
    });
    const body = parseJson(reply.data);
    if (isErrorReply(body)) throw new RemoteError(body.error.code, body.error.description, subject);
    return body as T;
  }

  /** Waits until the server has seen everything sent so far (e.g. subscriptions). */
  async flush(): Promise<void> {
    await this.nc.flush();
  }
}
