/** The actions' test doubles, for unit tests only (the lib's testing door: `@app/probe/testing`). */
import { CriError, raceCancel } from '@app/cri';
import { ContainerCommandRunner, HttpClient, TcpDialer, type ExecSyncResult, type HttpRequest, type HttpResponse } from './ports.js';

/** A scripted answer of FakeHttpClient: a response, a socket error code (ECONNREFUSED, ...) with its message, or no answer until aborted. */
export type FakeHttpAnswer = { status: number; location?: string; body?: string } | { error: string; message?: string } | 'hang';

/**
 * An HttpClient that records every request and answers from a queue (then
 * from `otherwise`); `hang` never answers, so a timeout on the clock ends it.
 */
export class FakeHttpClient extends HttpClient {
  readonly requests: HttpRequest[] = [];
  readonly bodyLimits: number[] = [];
  private readonly queue: FakeHttpAnswer[] = [];

  constructor(public otherwise: FakeHttpAnswer = { status: 200, body: 'ok' }) {
    super();
  }

  answer(...answers: FakeHttpAnswer[]): this {
    this.queue.push(...answers);
    return this;
  }

  get(request: HttpRequest, signal: AbortSignal): Promise<HttpResponse> {
    this.requests.push(request);
    const a = this.queue.shift() ?? this.otherwise;
    if (a === 'hang') return untilAborted(signal);
    if ('error' in a) return Promise.reject(Object.assign(new Error(a.message ?? `fake ${a.error}`), { code: a.error }));
    const body = a.body ?? '';
    return Promise.resolve({
      status: a.status,
      location: a.location,
      readBody: (limit: number) => {
        this.bodyLimits.push(limit);
        return Promise.resolve(Buffer.from(body).subarray(0, limit).toString('utf8'));
      },
      discard: () => undefined,
    });
  }
}

/** A TcpDialer answering by `host:port`: connected (the default), a socket error code, or no answer until aborted. */
export class FakeTcpDialer extends TcpDialer {
  readonly dials: { host: string; port: number }[] = [];
  readonly answers = new Map<string, 'connect' | 'hang' | { error: string }>();

  dial(host: string, port: number, signal: AbortSignal): Promise<void> {
    this.dials.push({ host, port });
    const a = this.answers.get(`${host}:${port}`) ?? 'connect';
    if (a === 'connect') return Promise.resolve();
    if (a === 'hang') return untilAborted(signal);
    return Promise.reject(Object.assign(new Error(`fake ${a.error}`), { code: a.error }));
  }
}

/** A ContainerCommandRunner that records every ExecSync and answers from a queue (then exit 0, no output). */
export class FakeCommandRunner extends ContainerCommandRunner {
  readonly calls: { containerId: string; cmd: string[]; timeoutSeconds: number }[] = [];
  private readonly queue: ({ stdout?: string; stderr?: string; exitCode: number } | CriError)[] = [];

  /** The next ExecSyncs answer these: an exit with output, or a CriError (e.g. `new CriError('DeadlineExceeded', ...)`). */
  answer(...answers: ({ stdout?: string; stderr?: string; exitCode: number } | CriError)[]): this {
    this.queue.push(...answers);
    return this;
  }

  /** While set, every ExecSync waits for it (or for its caller's signal, then rejects with Canceled). */
  hold?: Promise<void>;

  async execSync(containerId: string, cmd: string[], timeoutSeconds: number, signal?: AbortSignal): Promise<ExecSyncResult> {
    this.calls.push({ containerId, cmd, timeoutSeconds });
    if (this.hold) await raceCancel(this.hold, signal, 'runtime.ExecSync');
    const a = this.queue.shift() ?? { exitCode: 0 };
    if (a instanceof CriError) return Promise.reject(a);
    return Promise.resolve({ stdout: Buffer.from(a.stdout ?? ''), stderr: Buffer.from(a.stderr ?? ''), exitCode: a.exitCode });
  }
}

function untilAborted<T>(signal: AbortSignal): Promise<T> {
  return new Promise<T>((_resolve, reject) => {
    if (signal.aborted) reject(new Error('aborted'));
    else signal.addEventListener('abort', () => reject(new Error('aborted')), { once: true });
  });
}

const _ports: [HttpClient, TcpDialer, ContainerCommandRunner] = [new FakeHttpClient(), new FakeTcpDialer(), new FakeCommandRunner()] satisfies [HttpClient, TcpDialer, ContainerCommandRunner];
void _ports;
