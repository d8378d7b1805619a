/**
 * The CRI's test doubles, behind the lib's testing door (`@app/cri/testing`,
 * which lint lets only tests open). FakeCri is a CriRuntime for unit tests:
 * records every call, answers from handlers the test sets (or an empty
 * response), and can be told to fail.
 */
import type { MessageMeta } from '@app/tracing';
import { CriRuntime, raceCancel, type CriCallOptions } from './client.js';
import { CriError, type CriErrorCode } from './errors.js';
import type { CriService, ImageMethod, ImageRequest, ImageResponse, RuntimeMethod, RuntimeRequest, RuntimeResponse } from './messages.js';

export interface RecordedCall {
  service: CriService;
  method: string;
  request: unknown;
}

type Handler = (request: unknown) => unknown;

export class FakeCri extends CriRuntime {
  readonly calls: RecordedCall[] = [];
  private readonly handlers = new Map<string, Handler>();
  private readonly failures = new Map<string, CriError[]>();

  /** Answers `method` with `fn(request)` from now on. */
  onRuntime<M extends RuntimeMethod>(method: M, fn: (request: RuntimeRequest<M>) => RuntimeResponse<M>): this {
    this.handlers.set(`runtime/${method}`, fn as Handler);
    return this;
  }

  onImage<M extends ImageMethod>(method: M, fn: (request: ImageRequest<M>) => ImageResponse<M>): this {
    this.handlers.set(`image/${method}`, fn as Handler);
    return this;
  }

  /** The next call of `method` fails with `code` (queue several to fail several times). */
  failNext(service: CriService, method: string, code: CriErrorCode, description = `${method} failed`): this {
    const key = `${service}/${method}`;
    this.failures.set(key, [...(this.failures.get(key) ?? []), new CriError(code, description)]);
    return this;
  }

  callsOf(method: string): unknown[] {
    return this.calls.filter((c) => c.method === method).map((c) => c.request);
  }

  runtime<M extends RuntimeMethod>(method: M, request: RuntimeRequest<M>, _meta?: MessageMeta, options?: CriCallOptions): Promise<RuntimeResponse<M>> {
    return this.cancellable('runtime', method, this.answer('runtime', method, request), options) as Promise<RuntimeResponse<M>>;
  }

  image<M extends ImageMethod>(method: M, request: ImageRequest<M>, _meta?: MessageMeta, options?: CriCallOptions): Promise<ImageResponse<M>> {
    return this.cancellable('image', method, this.answer('image', method, request), options) as Promise<ImageResponse<M>>;
  }

  /** The calls their caller cancelled while they were in flight, as `<service>/<Method>`. */
  readonly cancelled: string[] = [];

  /** As NatsCriClient: a call whose signal aborts rejects at once with a Canceled CriError. */
  private cancellable(service: CriService, method: string, answer: Promise<unknown>, options?: CriCallOptions): Promise<unknown> {
    return raceCancel(answer, options?.signal, `${service}.${method}`).catch((err: unknown) => {
      if (err instanceof CriError && err.code === 'Canceled') this.cancelled.push(`${service}/${method}`);
      throw err;
    });
  }

  private answer(service: CriService, method: string, request: unknown): Promise<unknown> {
    this.calls.push({ service, method, request });
    const key = `${service}/${method}`;
    const failure = this.failures.get(key)?.shift();
    if (failure) return Promise.reject(failure);
    const handler = this.handlers.get(key);
    try {
      return Promise.resolve(handler ? handler(request) : {});
    } catch (err) {
      return Promise.reject(err instanceof Error ? err : new Error(String(err)));
    }
  }
}

// The fake is a CriRuntime: checked by the compiler, as the kubelet's `var _ Runtime = &FakeRuntime{}`.
const _isPort: CriRuntime = new FakeCri();
void _isPort;
