/**
 * Publishing and requesting JSON with our headers. The adapter every service
 * uses to talk to the others; domain code depends on it through narrow ports.
 */
import type { NatsConnection } from '@nats-io/transport-node';
import { isRecord, parseJson, type ErrorReply } from '@app/contracts';
import { senderOf } from './connection.js';
import { Headers, messageHeaders, parseTraceparent, type MessageMeta } from '@app/tracing';
import { currentTrace, heardFrom, hopStart, msSince, recordHop } from '@app/tracing';
import { messageFacts } from '@app/tracing';
import type { MsgHdrs } from '@nats-io/transport-node';

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
    const headers = this.headers(meta);
    const { at } = hopStart();
    this.nc.publish(subject, encoder.encode(JSON.stringify(payload)), { headers });
    recordSent('publish', subject, headers, payload, meta, at, 0);
  }

  /** Sends a request and returns the decoded reply; an `{error}` reply is thrown as RemoteError. */
  async request<T = unknown>(subject: string, payload: unknown, opts: { timeoutMs: number; meta?: MessageMeta }): Promise<T> {
    const headers = this.headers(opts.meta);
    const { at, t0 } = hopStart();
    let error: string | undefined;
    try {
      const reply = await this.nc.request(subject, encoder.encode(JSON.stringify(payload)), { timeout: opts.timeoutMs, headers });
      heardFrom(reply.headers, subject);
      const body = parseJson(reply.data);
      if (isErrorReply(body)) {
        error = body.error.code;
        throw new RemoteError(body.error.code, body.error.description, subject);
      }
      return body as T;
    } catch (err) {
      error ??= (err as Error).message;
      throw err;
    } finally {
      recordSent('request', subject, headers, payload, opts.meta ?? {}, at, msSince(t0), error);
    }
  }

  /** Waits until the server has seen everything sent so far (e.g. subscriptions). */
  async flush(): Promise<void> {
    await this.nc.flush();
  }
}

/** The record of a message sent: its span (in `headers`) as a child of the current hop. */
function recordSent(kind: 'publish' | 'request', subject: string, headers: MsgHdrs, payload: unknown, meta: MessageMeta, at: number, durationMs: number, error?: string): void {
  const span = parseTraceparent(headers.get(Headers.traceparent));
  if (!span) return;
  const parent = meta.trace?.spanId ?? currentTrace()?.trace.spanId;
  const podUid = headers.get(Headers.podUid);
  recordHop({
    kind,
    traceId: span.traceId,
    spanId: span.spanId,
    ...(parent ? { parentSpanId: parent } : {}),
    ...(podUid ? { podUid } : {}),
    subject,
    at,
    durationMs,
    ...messageFacts(payload),
    ...(error ? { error } : {}),
  });
}
