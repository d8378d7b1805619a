/** The ports' real implementations: node:http(s), node:net and the CRI's ExecSync. */
import * as http from 'node:http';
import * as https from 'node:https';
import { isIP, connect as netConnect } from 'node:net';
import type { CriRuntime } from '@app/cri';
import { ContainerCommandRunner, HTTP_RESPONSE_TO_HTTPS_CLIENT, HttpClient, TcpDialer, type ExecSyncResult, type HttpRequest, type HttpResponse } from './ports.js';

/**
 * node:http(s) as the prober's transport: no keep-alive, no proxy, TLS not
 * verified, SNI from the URL's host (never from a Host header; none for an IP).
 */
export class NodeHttpClient extends HttpClient {
  get(request: HttpRequest, signal: AbortSignal): Promise<HttpResponse> {
    const { url } = request;
    return new Promise((resolve, reject) => {
      const secure = url.protocol === 'https:';
      const options: https.RequestOptions = {
        method: 'GET',
        headers: request.host !== undefined ? { ...request.headers, Host: request.host } : request.headers,
        signal,
        agent: false,
      };
      if (secure) {
        options.rejectUnauthorized = false;
        options.servername = isIP(url.hostname.replace(/^\[|\]$/g, '')) ? '' : url.hostname;
      }
      const req = (secure ? https : http).request(url, options, (res) =>
        resolve({
          status: res.statusCode ?? 0,
          location: res.headers.location,
          readBody: (limit) => readAtMost(res, limit, signal),
          discard: () => res.destroy(),
        }),
      );
      req.once('error', (err: NodeJS.ErrnoException) => reject(secure && isPlainHttpAnswer(err) ? Object.assign(new Error(HTTP_RESPONSE_TO_HTTPS_CLIENT), { code: err.code }) : err));
      req.end();
    });
  }
}

/** OpenSSL's word for a first record that is not TLS, as when an HTTP server answers the ClientHello. */
function isPlainHttpAnswer(err: NodeJS.ErrnoException): boolean {
  return err.code === 'EPROTO' && /wrong version number/i.test(err.message);
}

function readAtMost(res: http.IncomingMessage, limit: number, signal: AbortSignal): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    let done = false;
    const finish = (err?: Error) => {
      if (done) return;
      done = true;
      res.destroy();
      if (err) reject(err);
      else resolve(Buffer.concat(chunks).subarray(0, limit).toString('utf8'));
    };
    res.on('data', (chunk: Buffer) => {
      chunks.push(chunk);
      size += chunk.length;
      // Truncation is not an error: ReadAtMost's ErrLimitReached is logged and the body kept.
      if (size >= limit) finish();
    });
    res.once('end', () => finish());
    res.once('error', (err) => finish(err));
    res.once('close', () => finish(signal.aborted ? new Error('aborted') : undefined));
  });
}

/** node:net: connect, then close at once. */
export class NetTcpDialer extends TcpDialer {
  dial(host: string, port: number, signal: AbortSignal): Promise<void> {
    return new Promise((resolve, reject) => {
      const socket = netConnect({ host, port });
      const onAbort = () => {
        socket.destroy();
        reject(new Error('aborted'));
      };
      signal.addEventListener('abort', onAbort, { once: true });
      socket.once('connect', () => {
        signal.removeEventListener('abort', onAbort);
        socket.destroy();
        resolve();
      });
      socket.once('error', (err) => {
        signal.removeEventListener('abort', onAbort);
        socket.destroy();
        reject(err);
      });
    });
  }
}

/** ExecSync through the CRI; the timeout in whole seconds, as the CRI takes it. */
export class CriCommandRunner extends ContainerCommandRunner {
  constructor(private readonly cri: CriRuntime) {
    super();
  }
  async execSync(containerId: string, cmd: string[], timeoutSeconds: number, signal?: AbortSignal): Promise<ExecSyncResult> {
    const r = await this.cri.runtime('ExecSync', { containerId, cmd, timeout: String(timeoutSeconds) }, undefined, signal ? { signal } : undefined);
    return { stdout: Buffer.from(r.stdout || '', 'base64'), stderr: Buffer.from(r.stderr || '', 'base64'), exitCode: r.exitCode };
  }
}
