/**
 * The CRI as the other services see it: `CriRuntime` is the port (the
 * kubelet's internalapi.RuntimeService + ImageManagerService, one generic
 * call per service), `NatsCriClient` speaks NATS request/reply to the
 * cri-gateway. Errors arrive as CriError with the gRPC code kept.
 */
import type { NatsConnection } from '@nats-io/transport-node';
import { Subjects, isRecord, parseJson } from '@app/contracts';
import { messageHeaders, type MessageMeta } from '@app/nats';
import { CriError, isCriErrorCode } from './errors.js';
import { DEFAULT_CRI_TIMEOUTS, IMAGE_METHOD_INFO, RUNTIME_METHOD_INFO, deadlineMs, type CriTimeouts, type ImageMethod, type RuntimeMethod } from './methods.js';
import type { ImageServiceMethods, RuntimeServiceMethods } from './types.js';

export type RuntimeRequest<M extends RuntimeMethod> = RuntimeServiceMethods[M]['request'];
export type RuntimeResponse<M extends RuntimeMethod> = RuntimeServiceMethods[M]['response'];
export type ImageRequest<M extends ImageMethod> = ImageServiceMethods[M]['request'];
export type ImageResponse<M extends ImageMethod> = ImageServiceMethods[M]['response'];

/** The runtime and image services, as consumers depend on them. */
export abstract class CriRuntime {
  /** One RuntimeService call. */
  abstract runtime<M extends RuntimeMethod>(method: M, request: RuntimeRequest<M>, meta?: MessageMeta): Promise<RuntimeResponse<M>>;
  /** One ImageService call. */
  abstract image<M extends ImageMethod>(method: M, request: ImageRequest<M>, meta?: MessageMeta): Promise<ImageResponse<M>>;
}

const enc = new TextEncoder();
/** Extra time the NATS request waits beyond the gateway's own deadline, so the gateway's answer wins. */
const REPLY_MARGIN_MS = 5000;

export class NatsCriClient extends CriRuntime {
  constructor(
    private readonly nc: NatsConnection,
    private readonly node: string,
    private readonly service: string,
    private readonly timeouts: CriTimeouts = DEFAULT_CRI_TIMEOUTS,
  ) {
    super();
  }

  runtime<M extends RuntimeMethod>(method: M, request: RuntimeRequest<M>, meta?: MessageMeta): Promise<RuntimeResponse<M>> {
    const wait = deadlineMs(RUNTIME_METHOD_INFO[method], request, this.timeouts) + REPLY_MARGIN_MS;
    return this.call(Subjects.criRuntime.build(this.node, method), request, wait, meta) as Promise<RuntimeResponse<M>>;
  }

  image<M extends ImageMethod>(method: M, request: ImageRequest<M>, meta?: MessageMeta): Promise<ImageResponse<M>> {
    const wait = deadlineMs(IMAGE_METHOD_INFO[method], request, this.timeouts) + REPLY_MARGIN_MS;
    return this.call(Subjects.criImage.build(this.node, method), request, wait, meta) as Promise<ImageResponse<M>>;
  }

  private async call(subject: string, request: unknown, timeoutMs: number, meta?: MessageMeta): Promise<unknown> {
    let reply;
    try {
      reply = await this.nc.request(subject, enc.encode(JSON.stringify(request ?? {})), {
        timeout: timeoutMs,
        headers: messageHeaders({ service: this.service, ...meta }),
      });
    } catch (err) {
      throw natsFailure(err, subject, timeoutMs);
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
