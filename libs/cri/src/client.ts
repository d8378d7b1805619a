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
import { messageHeaders, type MessageMeta } from '@app/nats';
import { CriError, isCriErrorCode } from './errors.js';
import type { ImageMethod, ImageRequest, ImageResponse, RuntimeMethod, RuntimeRequest, RuntimeResponse } from './messages.js';
import { CRI_TIMEOUT_HEADER, DEFAULT_CRI_TIMEOUTS, IMAGE_METHOD_INFO, RUNTIME_METHOD_INFO, deadlineMs, type CriTimeouts } from './methods.js';

/** How one call is made, beyond its request. */
export interface CriCallOptions {
  /**
   * The caller's cancellation, as the kubelet's context: once it aborts, the
   * call rejects at once with a `Canceled` CriError and its answer, if one
   * still comes, is dropped. The runtime may still carry the call out (the
   * kubelet's cancelled gRPC call may too), so callers cancel only calls they
   * can afford to lose track of: waits (PullImage, ExecSync, StopContainer),
   * not CreateContainer or RunPodSandbox.
   */
  signal?: AbortSignal;
}

/** The runtime and image services, as consumers depend on them. */
export abstract class CriRuntime {
  /** One RuntimeService call. */
  abstract runtime<M extends RuntimeMethod>(method: M, request: RuntimeRequest<M>, meta?: MessageMeta, options?: CriCallOptions): Promise<RuntimeResponse<M>>;
  /** One ImageService call. */
  abstract image<M extends ImageMethod>(method: M, request: ImageRequest<M>, meta?: MessageMeta, options?: CriCallOptions): Promise<ImageResponse<M>>;
}

/** The CriError a call cancelled by its caller rejects with (gRPC's `Canceled`, as a cancelled context gives). */
export function canceledCall(what: string): CriError {
  return new CriError('Canceled', `${what}: context canceled`);
}

/** Settles as `p` does, or rejects with canceledCall(what) as soon as `signal` aborts. */
export function raceCancel<T>(p: Promise<T>, signal: AbortSignal | undefined, what: string): Promise<T> {
  if (!signal) return p;
  if (signal.aborted) {
    p.catch(() => undefined);
    return Promise.reject(canceledCall(what));
  }
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => reject(canceledCall(what));
    signal.addEventListener('abort', onAbort, { once: true });
    p.then(
      (v) => {
        signal.removeEventListener('abort', onAbort);
        resolve(v);
      },
      (err: unknown) => {
        signal.removeEventListener('abort', onAbort);
        reject(err instanceof Error ? err : new Error(String(err)));
      },
    );
  });
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
    private readonly nc: Pick<NatsConnection, 'request'>,
    private readonly node: string,
    private readonly service: string,
    private readonly timeouts: CriTimeouts = DEFAULT_CRI_TIMEOUTS,
  ) {
    super();
  }

  runtime<M extends RuntimeMethod>(method: M, request: RuntimeRequest<M>, meta?: MessageMeta, options?: CriCallOptions): Promise<RuntimeResponse<M>> {
    const deadline = deadlineMs(RUNTIME_METHOD_INFO[method], request, this.timeouts);
    return this.call(Subjects.criRuntime.build(this.node, method), request, deadline, meta, options?.signal) as Promise<RuntimeResponse<M>>;
  }

  image<M extends ImageMethod>(method: M, request: ImageRequest<M>, meta?: MessageMeta, options?: CriCallOptions): Promise<ImageResponse<M>> {
    const deadline = deadlineMs(IMAGE_METHOD_INFO[method], request, this.timeouts);
    return this.call(Subjects.criImage.build(this.node, method), request, deadline, meta, options?.signal) as Promise<ImageResponse<M>>;
  }

  private async call(subject: string, request: unknown, deadline: number, meta?: MessageMeta, signal?: AbortSignal): Promise<unknown> {
    if (signal?.aborted) throw canceledCall(subject);
    const headers = messageHeaders({ service: this.service, ...meta });
    headers.set(CRI_TIMEOUT_HEADER, String(deadline));
    const wait = deadline + REPLY_MARGIN_MS;
    let reply;
    try {
      // nats.js cannot withdraw a request: a cancelled call stops waiting, and a late reply is dropped.
      reply = await raceCancel(this.nc.request(subject, enc.encode(JSON.stringify(request ?? {})), { timeout: wait, headers }), signal, subject);
    } catch (err) {
      if (err instanceof CriError && err.code === 'Canceled') throw err;
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
