/**
 * The one connection to the kube-apiserver: the kubeconfig read with
 * @kubernetes/client-node (loaded only when a node joins a cluster, for it is
 * heavy), and plain JSON requests over node:https with the kubeconfig's TLS
 * and credentials. Objects go out and come back as the wire's JSON, which is
 * what @app/contracts' Kubernetes types describe (timestamps as strings);
 * client-node's generated models would turn them into Dates.
 *
 * Errors: a non-2xx answer is an ApiError with the HTTP code and the
 * apiserver's Status reason and message; a connection failure is an
 * ApiError with code 0. Callers retry; this class does not.
 */
import { request as httpRequest, type IncomingMessage } from 'node:http';
import { request as httpsRequest, type RequestOptions } from 'node:https';

/** What the apiserver said, or that it could not be reached (code 0). */
export class ApiError extends Error {
  constructor(
    readonly code: number,
    readonly reason: string,
    message: string,
  ) {
    super(message);
    this.name = 'ApiError';
  }
}

export const isNotFound = (err: unknown): boolean => err instanceof ApiError && err.code === 404;
export const isConflict = (err: unknown): boolean => err instanceof ApiError && err.code === 409;
export const isGone = (err: unknown): boolean => err instanceof ApiError && err.code === 410;
export const isAlreadyExists = (err: unknown): boolean => err instanceof ApiError && err.code === 409 && err.reason === 'AlreadyExists';

/** Content types of PATCH (apimachinery types.PatchType). */
export const PatchType = {
  json: 'application/json-patch+json',
  merge: 'application/merge-patch+json',
  strategicMerge: 'application/strategic-merge-patch+json',
} as const;
export type PatchType = (typeof PatchType)[keyof typeof PatchType];

export interface RequestInit {
  method?: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';
  query?: Record<string, string | number | boolean | undefined>;
  body?: unknown;
  /** The body's content type; JSON unless a patch says otherwise. */
  contentType?: string;
  timeoutMs?: number;
  signal?: AbortSignal;
}

/** One line of a watch stream (apimachinery watch.Event). */
export interface WatchEvent<T> {
  type: 'ADDED' | 'MODIFIED' | 'DELETED' | 'BOOKMARK' | 'ERROR';
  object: T;
}

const DEFAULT_TIMEOUT_MS = 30_000;

export class ApiServer {
  private constructor(
    /** The apiserver's URL, `https://host:port`. */
    readonly server: string,
    private readonly base: RequestOptions,
    /** The user agent sent with every request (`kubelet-split/<service>`). */
    readonly userAgent: string,
  ) {}

  /** Reads a kubeconfig file (its current context) with @kubernetes/client-node. */
  static async fromKubeconfig(path: string, userAgent: string): Promise<ApiServer> {
    const { KubeConfig } = await import('@kubernetes/client-node');
    const kc = new KubeConfig();
    try {
      kc.loadFromFile(path);
    } catch (err) {
      throw new Error(`KUBECONFIG ${path}: ${(err as Error).message}`);
    }
    const cluster = kc.getCurrentCluster();
    if (!cluster) throw new Error(`KUBECONFIG ${path}: no current cluster`);
    const opts: RequestOptions = {};
    await kc.applyToHTTPSOptions(opts);
    return new ApiServer(cluster.server.replace(/\/+$/, ''), opts, userAgent);
  }

  /** One request; resolves with the answer's JSON (undefined when empty). */
  async request<T>(path: string, init: RequestInit = {}): Promise<T> {
    const res = await this.open(path, init);
    const text = await readAll(res);
    const code = res.statusCode ?? 0;
    if (code < 200 || code > 299) throw apiError(code, text, `${init.method ?? 'GET'} ${path}`);
    return (text ? JSON.parse(text) : undefined) as T;
  }

  /**
   * A watch (`?watch=true`): calls `onEvent` for each event until the server
   * ends the stream, the signal aborts, or `onEvent` throws. Resolves when
   * the stream ends; rejects with an ApiError when the watch is refused.
   */
  async watch<T>(path: string, query: RequestInit['query'], onEvent: (e: WatchEvent<T>) => void, signal?: AbortSignal): Promise<void> {
    const res = await this.open(path, { query: { ...query, watch: true }, signal, timeoutMs: 0 });
    const code = res.statusCode ?? 0;
    if (code < 200 || code > 299) throw apiError(code, await readAll(res), `WATCH ${path}`);
    let buffered = '';
    res.setEncoding('utf8');
    await new Promise<void>((resolve, reject) => {
      const fail = (err: Error) => {
        res.destroy();
        reject(err);
      };
      res.on('data', (chunk: string) => {
        buffered += chunk;
        for (let nl = buffered.indexOf('\n'); nl >= 0; nl = buffered.indexOf('\n')) {
          const line = buffered.slice(0, nl).trim();
          buffered = buffered.slice(nl + 1);
          if (!line) continue;
          try {
            onEvent(JSON.parse(line) as WatchEvent<T>);
          } catch (err) {
            fail(err as Error);
            return;
          }
        }
      });
      res.on('end', () => resolve());
      res.on('error', (err) => (signal?.aborted ? resolve() : reject(new ApiError(0, 'ConnectionLost', `WATCH ${path}: ${err.message}`))));
      res.on('close', () => resolve());
    });
  }

  private open(path: string, init: RequestInit): Promise<IncomingMessage> {
    const url = new URL(this.server + path);
    for (const [k, v] of Object.entries(init.query ?? {})) if (v !== undefined) url.searchParams.set(k, String(v));
    const body = init.body === undefined ? undefined : Buffer.from(JSON.stringify(init.body));
    const headers: Record<string, string> = { ...(this.base.headers as Record<string, string> | undefined), accept: 'application/json', 'user-agent': this.userAgent };
    if (body) {
      headers['content-type'] = init.contentType ?? 'application/json';
      headers['content-length'] = String(body.length);
    }
    const timeout = init.timeoutMs ?? DEFAULT_TIMEOUT_MS;
    const send = url.protocol === 'http:' ? httpRequest : httpsRequest;
    return new Promise((resolve, reject) => {
      const req = send(url, { ...this.base, method: init.method ?? 'GET', headers, signal: init.signal, ...(timeout > 0 ? { timeout } : {}) }, resolve);
      req.on('timeout', () => req.destroy(new Error(`no answer within ${timeout} ms`)));
      req.on('error', (err) => reject(new ApiError(0, 'ConnectionFailed', `${init.method ?? 'GET'} ${path}: ${err.message}`)));
      req.end(body);
    });
  }
}

function readAll(res: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    let text = '';
    res.setEncoding('utf8');
    res.on('data', (c: string) => (text += c));
    res.on('end', () => resolve(text));
    res.on('error', reject);
  });
}

/** An error answer: the apiserver's metav1.Status when it sent one. */
function apiError(code: number, text: string, what: string): ApiError {
  try {
    const status = JSON.parse(text) as { reason?: string; message?: string };
    return new ApiError(code, status.reason ?? String(code), `${what}: ${status.message ?? text}`);
  } catch {
    return new ApiError(code, String(code), `${what}: HTTP ${code} ${text.slice(0, 200)}`);
  }
}
