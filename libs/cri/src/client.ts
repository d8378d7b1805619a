/**
 * The CRI as the other services see it: `CriRuntime` is the port (the
 * kubelet's internalapi.RuntimeService + ImageManagerService, one generic
 * call per service), `NatsCriClient` speaks NATS request/reply to the
 * cri-gateway. Errors arrive as CriError with the gRPC code kept.
 *
 * The caller owns each call's deadline, as the kubelet's remote runtime
 * client does with its context: the client sends it in CRI_TIMEOUT_HEADER,
 * the gateway makes it the gRPC deadline, and the client waits that long
 * plus REPLY_MARGIN_MS for the answer.
 */
import type { NatsConnection } from '@nats-io/transport-node';
import { Subjects, isRecord, parseJson } from '@app/contracts';
import { failOnDisconnect, messageHeaders, type MessageMeta } from '@app/nats';
import { CriError, isCriErrorCode } from './errors.js';
import type { ImageMethod, ImageRequest, ImageResponse, RuntimeMethod, RuntimeRequest, RuntimeResponse } from './messages.js';
import { CRI_TIMEOUT_HEADER, DEFAULT_CRI_TIMEOUTS, IMAGE_METHOD_INFO, RUNTIME_METHOD_INFO, deadlineMs, type CriTimeouts } from './methods.js';

/** The runtime and image services, as consumers depend on them. */
export abstract class CriRuntime {
  /** One RuntimeService call. */
  abstract runtime<M extends RuntimeMethod>(method: M, request: RuntimeRequest<M>, meta?: MessageMeta): Promise<RuntimeResponse<M>>;
  /** One ImageService call. */
  abstract image<M extends ImageMethod>(method: M, request: ImageRequest<M>, meta?: MessageMeta): Promise<ImageResponse<M>>;
}

const enc = new TextEncoder();
/** How much longer than the call's deadline the NATS request waits, so that the gateway's DeadlineExceeded reaches the caller. */
export const REPLY_MARGIN_MS = 2000;

export class NatsCriClient extends CriRuntime {
  /**
   * @param timeouts the deadlines of this caller's calls (the pod worker's
   *   come from its RUNTIME_REQUEST_TIMEOUT and IMAGE_PULL_TIMEOUT).
   */
  constructor(
    /** With `status` (a real connection), a call in flight when the connection drops fails at once, Unavailable, for the caller to retry. */
    private readonly nc: Pick<NatsConnection, 'request'> & Partial<Pick<NatsConnection, 'status'>>,
    private readonly node: string,
    private readonly service: string,
    private readonly timeouts: CriTimeouts = DEFAULT_CRI_TIMEOUTS,
  ) {
    super();
  }

  runtime<M extends RuntimeMethod>(method: M, request: RuntimeRequest<M>, meta?: MessageMeta): Promise<RuntimeResponse<M>> {
    const deadline = deadlineMs(RUNTIME_METHOD_INFO[method], request, this.timeouts);
    return this.call(Subjects.criRuntime.build(this.node, method), request, deadline, meta) as Promise<RuntimeResponse<M>>;
  }

  image<M extends ImageMethod>(method: M, request: ImageRequest<M>, meta?: MessageMeta): Promise<ImageResponse<M>> {
    const deadline = deadlineMs(IMAGE_METHOD_INFO[method], request, this.timeouts);
    return this.call(Subjects.criImage.build(this.node, method), request, deadline, meta) as Promise<ImageResponse<M>>;
  }

  private async call(subject: string, request: unknown, deadline: number, meta?: MessageMeta): Promise<unknown> {
    const headers = messageHeaders({ service: this.service, ...meta });
    headers.set(CRI_TIMEOUT_HEADER, String(deadline));
    const wait = deadline + REPLY_MARGIN_MS;
    let reply;
    try {
      const pending = this.nc.request(subject, enc.encode(JSON.stringify(request ?? {})), { timeout: wait, headers });
      reply = await failOnDisconnect(this.nc, pending, () => new CriError('Unavailable', `the NATS connection dropped while waiting for the answer on ${subject}; the call may or may not have been done`));
    } catch (err) {
      if (err instanceof CriError) throw err;
      throw natsFailure(err, subject, wait);
    }
    const body = parseJson(reply.data);
    if (isRecord(body) && isRecord(body['error'])) {
      const code = String(body['error']['code']);
      throw new CriError(isCriErrorCode(code) ? code : 'Unknown', String(body['error']['description']));
    }
    return body;
  }
}

function natsFailure(err: unknown, subject: string, timeoutMs: number): CriError {
  const name = (err as { name?: string } | null)?.name ?? '';
  const message = (err as Error | null)?.message ?? String(err);
  if (name === 'NoRespondersError' || /no responders/i.test(message)) {
    return new CriError('Unavailable', `no cri-gateway answers on ${subject}`);
  }
  if (name === 'TimeoutError' || /timeout/i.test(message)) {
    return new CriError('DeadlineExceeded', `no answer on ${subject} within ${timeoutMs}ms`);
  }
  return new CriError('Unavailable', `${subject}: ${message}`);
}
