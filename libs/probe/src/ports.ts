/**
 * The actions' I/O, behind ports (STYLE.md 3): one HTTP request, one TCP
 * dial, one ExecSync. The logic around them (redirects, timeouts, output
 * limits, messages) is in http.ts, tcp.ts, exec.ts and lifecycle.ts and is
 * tested with the fakes of testing.ts; adapters.ts has the real ones.
 */

/** One GET, as the transport sends it: no redirect is followed here. */
export interface HttpRequest {
  url: URL;
  /** Canonical names; a repeated name is sent once per value. */
  headers: Record<string, string | string[]>;
  /** The request's host (the probe's Host header), when it is not the URL's. */
  host?: string;
}

/** The response's head; its body is read (at most `limit` bytes) or discarded. */
export interface HttpResponse {
  status: number;
  /** The Location header, if any. */
  location: string | undefined;
  /** Reads up to `limit` bytes of the body (a longer body is cut, not an error), then closes. */
  readBody(limit: number): Promise<string>;
  /** Closes the response without reading it. */
  discard(): void;
}

/** Go's transport error when a TLS handshake is answered in plain HTTP; the lifecycle runner retries over HTTP on it. */
export const HTTP_RESPONSE_TO_HTTPS_CLIENT = 'http: server gave HTTP response to HTTPS client';

/**
 * An HTTP(S) client that skips TLS verification, uses no proxy and no
 * keep-alive (the prober's transport). Rejects with the socket's error
 * (its `code`, e.g. ECONNREFUSED, is kept), or with an Error whose message
 * is HTTP_RESPONSE_TO_HTTPS_CLIENT when a TLS handshake is answered in
 * plain HTTP; honours `signal`.
 */
export abstract class HttpClient {
  abstract get(request: HttpRequest, signal: AbortSignal): Promise<HttpResponse>;
}

/** Opens a TCP connection and closes it at once. Rejects with the socket's error; honours `signal`. */
export abstract class TcpDialer {
  abstract dial(host: string, port: number, signal: AbortSignal): Promise<void>;
}

export interface ExecSyncResult {
  stdout: Buffer;
  stderr: Buffer;
  exitCode: number;
}

/**
 * The CRI's ExecSync (kubecontainer.CommandRunner). Rejects when the command
 * could not be run; a timeout rejects with a DeadlineExceeded CriError, a
 * `signal` that aborts with a Canceled one.
 */
export abstract class ContainerCommandRunner {
  abstract execSync(containerId: string, cmd: string[], timeoutSeconds: number, signal?: AbortSignal): Promise<ExecSyncResult>;
}
