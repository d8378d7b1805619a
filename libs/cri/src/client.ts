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
 *
 * A call whose gateway dies under it fails fast, as a gRPC call on a broken
 * connection does: the client asks for progress (CRI_PROGRESS_HEADER) and
 * gives the call up with Unavailable when neither the answer nor a sign of
 * progress came for CRI_PROGRESS_STALL_MS. Without it, a gateway SIGKILLed
 * mid-call left its callers waiting out the whole deadline (2 minutes for a
 * RunPodSandbox or a StopContainer), their pods' workers stuck meanwhile.
 *
 * Replies of all of one client's calls come to one subscription, made at
 * its first call (`<inbox>.*`, each call its own last token), as nats.js's
 * own request() does: a subscription per call cost a SUB and an UNSUB, the
 * UNSUB a socket write of its own on the caller's critical path, and
 * nats-server an update of its subject index each (see
 * docs/adr/0003-cri-gateway-hot-path.md).
 */
import type { Msg, NatsConnection, Subscription } from '@nats-io/transport-node';
import { Clock, SystemClock, untilAborted, type Timer } from '@app/clock';
import { Subjects, isRecord, parseJson } from '@app/contracts';
import { Headers, currentTrace, heardFrom, hopStart, messageHeaders, msSince, parseTraceparent, recordHop, type MessageMeta } from '@app/tracing';
import { newInbox, senderOf } from '@app/nats';
import { CriError, isCriErrorCode } from './errors.js';
import type { ImageMethod, ImageRequest, ImageResponse, RuntimeMethod, RuntimeRequest, RuntimeResponse } from './messages.js';
import {
  CRI_PROGRESS_HEADER,
  CRI_PROGRESS_INTERVAL_MS,
  CRI_PROGRESS_STALL_MS,
  CRI_TIMEOUT_HEADER,
  DEFAULT_CRI_TIMEOUTS,
  IMAGE_METHOD_INFO,
  RUNTIME_METHOD_INFO,
  deadlineMs,
  type CriTimeouts,
} from './methods.js';

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
  return signal ? untilAborted(p, signal, () => canceledCall(what)) : p;
}

const enc = new TextEncoder();
/** How much longer than the call's deadline the NATS request waits, so that the gateway's DeadlineExceeded reaches the caller. */
export const REPLY_MARGIN_MS = 2000;

export class NatsCriClient extends CriRuntime {
  /**
   * @param timeouts the deadlines of this caller's calls (the pod worker's
   *   come from its RUNTIME_REQUEST_TIMEOUT and IMAGE_PULL_TIMEOUT).
   * @param progress how often the gateway is asked for progress, and how
   *   long a silent call lasts before it is given up.
   */
  constructor(
    private readonly nc: Pick<NatsConnection, 'subscribe' | 'publish'>,
    private readonly node: string,
    private readonly service: string,
    private readonly timeouts: CriTimeouts = DEFAULT_CRI_TIMEOUTS,
    private readonly clock: Clock = new SystemClock(),
    private readonly progress: { intervalMs: number; stallMs: number } = { intervalMs: CRI_PROGRESS_INTERVAL_MS, stallMs: CRI_PROGRESS_STALL_MS },
  ) {
    super();
  }

  runtime<M extends RuntimeMethod>(method: M, request: RuntimeRequest<M>, meta?: MessageMeta, options?: CriCallOptions): Promise<RuntimeResponse<M>> {
    const deadline = deadlineMs(RUNTIME_METHOD_INFO[method], request, this.timeouts);
    return this.call(this.subject(this.runtimeSubjects, Subjects.criRuntime, method), request, deadline, meta, options?.signal) as Promise<RuntimeResponse<M>>;
  }

  image<M extends ImageMethod>(method: M, request: ImageRequest<M>, meta?: MessageMeta, options?: CriCallOptions): Promise<ImageResponse<M>> {
    const deadline = deadlineMs(IMAGE_METHOD_INFO[method], request, this.timeouts);
    return this.call(this.subject(this.imageSubjects, Subjects.criImage, method), request, deadline, meta, options?.signal) as Promise<ImageResponse<M>>;
  }

  /** The subject of each method, built once (the node's token is escaped on every build). */
  private readonly runtimeSubjects = new Map<string, string>();
  private readonly imageSubjects = new Map<string, string>();
  private subject(cache: Map<string, string>, family: { build(node: string, method: string): string }, method: string): string {
    let subject = cache.get(method);
    if (subject === undefined) cache.set(method, (subject = family.build(this.node, method)));
    return subject;
  }

  /** The calls waiting for a reply, by the last token of their reply subject. */
  private readonly waiting = new Map<string, (err: Error | null, msg: Msg) => void>();
  /** The one subscription all replies come to (`<inbox>.*`), from the first call on. */
  private replies: { sub: Subscription; prefix: string } | undefined;
  private nextToken = 0;

  /** How many calls are waiting for their answer. */
  get callsInFlight(): number {
    return this.waiting.size;
  }

  /** The reply subject of a new call; subscribes at the first. */
  private replySubject(): { prefix: string; token: string } {
    if (!this.replies) {
      const prefix = `${newInbox(this.nc)}.`; // under the connection's own inbox prefix, the only one its NATS user may hear
      const sub = this.nc.subscribe(`${prefix}*`, {
        callback: (err, msg) => {
          if (err) return this.failAll(sub, err);
          this.waiting.get(msg.subject.slice(prefix.length))?.(null, msg);
        },
      });
      this.replies = { sub, prefix };
    }
    return { prefix: this.replies.prefix, token: (this.nextToken++).toString(36) };
  }

  /** The reply subscription failed (the server closed it): every waiting call fails, the next one subscribes anew. */
  private failAll(sub: Subscription, err: Error): void {
    if (this.replies?.sub === sub) this.replies = undefined;
    for (const onReply of [...this.waiting.values()]) onReply(err, undefined as unknown as Msg);
  }

  /**
   * One request: the answer, or DeadlineExceeded after the deadline plus
   * the margin, or Unavailable when no gateway took it or the one that took
   * it went silent (no progress for `progress.stallMs`), or Canceled as soon
   * as `signal` aborts (a late answer is then dropped).
   */
  private call(subject: string, request: unknown, deadline: number, meta?: MessageMeta, signal?: AbortSignal): Promise<unknown> {
    if (signal?.aborted) return Promise.reject(canceledCall(subject));
    const sender = senderOf(this.nc);
    const headers = messageHeaders({ service: this.service, ...(sender ? { sender } : {}), ...meta });
    headers.set(CRI_TIMEOUT_HEADER, String(deadline));
    headers.set(CRI_PROGRESS_HEADER, String(this.progress.intervalMs));
    const wait = deadline + REPLY_MARGIN_MS;
    const stallMs = this.progress.stallMs;
    const record = criHopRecorder(subject, headers, meta);
    return new Promise((resolve, reject) => {
      let settled = false;
      let token: string | undefined;
      let stall: Timer | undefined;
      const finish = (err: CriError | undefined, body?: unknown) => {
        if (settled) return;
        settled = true;
        record(err);
        overall.cancel();
        stall?.cancel();
        if (token !== undefined) this.waiting.delete(token);
        signal?.removeEventListener('abort', onAbort);
        if (err) reject(err);
        else resolve(body);
      };
      // nats.js cannot withdraw a request: a cancelled call stops waiting, and a late reply is dropped.
      const onAbort = () => finish(canceledCall(subject));
      signal?.addEventListener('abort', onAbort, { once: true });
      const overall = this.clock.setTimer(wait, () => finish(new CriError('DeadlineExceeded', `no answer on ${subject} within ${wait}ms`)));
      const expectProgress = () => {
        stall?.cancel();
        stall = this.clock.setTimer(stallMs, () =>
          finish(new CriError('Unavailable', `the cri-gateway went silent on ${subject}: no answer and no progress for ${stallMs}ms (it stopped mid-call, or the request was lost; the call may or may not have taken effect)`)),
        );
      };
      const onReply = (err: Error | null, msg: Msg) => {
        if (err) return finish(natsFailure(err, subject, wait));
        if (msg.headers?.code === 503) return finish(new CriError('Unavailable', `no cri-gateway answers on ${subject}`));
        if (msg.headers?.get(CRI_PROGRESS_HEADER)) return expectProgress();
        heardFrom(msg.headers, subject);
        try {
          finish(undefined, decodeReply(msg.data));
        } catch (e) {
          finish(e instanceof CriError ? e : new CriError('Unknown', `${subject}: ${(e as Error).message}`));
        }
      };
      try {
        const reply = this.replySubject();
        token = reply.token;
        this.waiting.set(token, onReply);
        this.nc.publish(subject, enc.encode(JSON.stringify(request ?? {})), { reply: reply.prefix + token, headers });
        expectProgress();
      } catch (err) {
        finish(natsFailure(err, subject, wait));
      }
    });
  }
}

/** Records the call as a `cri` hop (its method and duration) when it settles. */
function criHopRecorder(subject: string, headers: ReturnType<typeof messageHeaders>, meta: MessageMeta | undefined): (err: CriError | undefined) => void {
  const { at, t0 } = hopStart();
  const span = parseTraceparent(headers.get(Headers.traceparent));
  const parent = meta?.trace?.spanId ?? currentTrace()?.trace.spanId;
  const podUid = headers.get(Headers.podUid);
  return (err) => {
    if (!span) return;
    recordHop({
      kind: 'cri',
      traceId: span.traceId,
      spanId: span.spanId,
      ...(parent ? { parentSpanId: parent } : {}),
      ...(podUid ? { podUid } : {}),
      subject,
      method: subject.slice(subject.lastIndexOf('.') + 1),
      at,
      durationMs: msSince(t0),
      ...(err ? { error: err.code } : {}),
    });
  };
}

/** The gateway's answer; an error reply as a CriError with its code. */
function decodeReply(data: Uint8Array): unknown {
  const body = parseJson(data);
  if (isRecord(body) && isRecord(body['error'])) {
    const code = String(body['error']['code']);
    throw new CriError(isCriErrorCode(code) ? code : 'Unknown', String(body['error']['description']));
  }
  return body;
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
