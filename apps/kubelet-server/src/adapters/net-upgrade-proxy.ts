/**
 * proxyStream (pkg/kubelet/server/server.go) over k8s.io/apimachinery
 * pkg/util/proxy UpgradeAwareHandler.tryUpgrade, for the runtime's
 * streaming server (containerd's, plain HTTP on loopback by default):
 *
 *   the client's request line and headers, its path and query replaced by
 *   the location's, Host the location's, X-Forwarded-For appended, its
 *   credentials (Authorization) dropped; then the bytes the client sent
 *   after its headers
 *     -> the backend's answer head
 *        101 Switching Protocols: passed to the client, then both sockets
 *            piped both ways until either ends (SPDY/3.1 or websocket,
 *            whatever the two agreed: the Upgrade, Connection and
 *            Sec-WebSocket-* headers pass through untouched)
 *        anything else: passed to the client with its body, and both closed
 */
import { connect as netConnect, type Socket } from 'node:net';
import { connect as tlsConnect } from 'node:tls';
import type { IncomingMessage } from 'node:http';
import type { Duplex } from 'node:stream';
import { UpgradeProxy } from '../ports.js';

/** Headers not passed to the backend: its own Host, the client's credentials, the forwarding header rebuilt here. */
const DROPPED = new Set(['host', 'authorization', 'x-forwarded-for']);
/** The most an answer's head may take (Go's http.ReadResponse has no bound either, but a streaming server's is tiny). */
const MAX_HEAD_BYTES = 64 * 1024;

export class NetUpgradeProxy extends UpgradeProxy {
  constructor(private readonly dialTimeoutMs = 10_000) {
    super();
  }

  async proxy(req: IncomingMessage, client: Duplex, head: Buffer, location: URL): Promise<void> {
    const backend = await this.dial(location);
    client.on('error', () => backend.destroy());
    backend.on('error', () => client.destroy());
    backend.write(requestHead(req, location));
    if (head.length > 0) backend.write(head);
    const answer = await readHead(backend);
    if (!answer) {
      backend.destroy();
      writeError(client, 502, 'the streaming server closed the connection before answering');
      return;
    }
    client.write(answer.head);
    if (answer.status !== 101) {
      // Not upgraded: the answer's body (Content-Length of it, else until the backend closes), then both closed.
      let left = answer.contentLength ?? Number.POSITIVE_INFINITY;
      const take = (chunk: Buffer) => {
        const part = chunk.subarray(0, Math.min(chunk.length, left));
        left -= part.length;
        client.write(part);
        if (left <= 0) finish();
      };
      const finish = () => {
        backend.off('data', take);
        backend.destroy();
        client.end();
      };
      if (answer.rest.length > 0) take(answer.rest);
      if (left > 0) {
        backend.on('data', take);
        backend.once('end', finish);
      }
      return;
    }
    if (answer.rest.length > 0) client.write(answer.rest);
    await pipeBoth(client, backend);
  }

  private dial(location: URL): Promise<Socket> {
    const secure = location.protocol === 'https:';
    const port = Number(location.port || (secure ? 443 : 80));
    const host = location.hostname.replace(/^\[|\]$/g, '');
    return new Promise((resolve, reject) => {
      const socket = secure ? tlsConnect({ host, port, servername: host }) : netConnect({ host, port });
      const timer = setTimeout(() => socket.destroy(new Error(`dialing ${location.host}: no connection within ${this.dialTimeoutMs} ms`)), this.dialTimeoutMs);
      socket.once(secure ? 'secureConnect' : 'connect', () => {
        clearTimeout(timer);
        socket.setNoDelay(true);
        resolve(socket);
      });
      socket.once('error', (err: Error) => {
        clearTimeout(timer);
        reject(new Error(`dialing the streaming server ${location.host}: ${err.message}`));
      });
    });
  }
}

/** The request line and headers sent to the backend. */
export function requestHead(req: IncomingMessage, location: URL): string {
  const lines = [`${req.method ?? 'GET'} ${location.pathname}${location.search} HTTP/1.1`, `Host: ${location.host}`];
  for (let i = 0; i + 1 < req.rawHeaders.length; i += 2) {
    const name = req.rawHeaders[i] ?? '';
    if (DROPPED.has(name.toLowerCase())) continue;
    lines.push(`${name}: ${req.rawHeaders[i + 1] ?? ''}`);
  }
  const prior = req.headers['x-forwarded-for'];
  const from = req.socket.remoteAddress;
  const forwarded = [prior, from].filter((x): x is string => typeof x === 'string' && x !== '').join(', ');
  if (forwarded) lines.push(`X-Forwarded-For: ${forwarded}`);
  return `${lines.join('\r\n')}\r\n\r\n`;
}

/** Reads an HTTP answer's head off `socket`: its bytes, status, Content-Length and what came after it. */
function readHead(socket: Socket): Promise<{ head: Buffer; status: number; contentLength?: number; rest: Buffer } | undefined> {
  return new Promise((resolve) => {
    let buf = Buffer.alloc(0);
    const done = (v: Awaited<ReturnType<typeof readHead>>) => {
      socket.off('data', onData);
      socket.off('end', onEnd);
      socket.off('close', onEnd);
      socket.pause();
      resolve(v);
    };
    const onEnd = () => done(undefined);
    const onData = (chunk: Buffer) => {
      buf = Buffer.concat([buf, chunk]);
      const end = buf.indexOf('\r\n\r\n');
      if (end < 0) {
        if (buf.length > MAX_HEAD_BYTES) done(undefined);
        return;
      }
      const head = buf.subarray(0, end + 4);
      const text = head.toString('latin1');
      const status = Number(/^HTTP\/1\.[01] (\d{3})/.exec(text)?.[1] ?? 0);
      const cl = /\r\ncontent-length:\s*(\d+)/i.exec(text)?.[1];
      done({ head, status, ...(cl !== undefined ? { contentLength: Number(cl) } : {}), rest: buf.subarray(end + 4) });
    };
    socket.on('data', onData);
    socket.on('end', onEnd);
    socket.on('close', onEnd);
  });
}

/** Both ways until either side ends: the other is ended (its pending writes flushed), then both go. */
function pipeBoth(client: Duplex, backend: Socket): Promise<void> {
  return new Promise((resolve) => {
    let closed = 0;
    const onClose = () => {
      client.end();
      backend.end();
      // A peer that never finishes its side does not hold the other socket for ever.
      setTimeout(() => {
        client.destroy();
        backend.destroy();
      }, 5000).unref();
      if (++closed === 1) resolve();
    };
    client.once('close', onClose);
    backend.once('close', onClose);
    client.pipe(backend);
    backend.pipe(client);
    backend.resume();
  });
}

/** A plain HTTP error on a socket taken over for an upgrade. */
export function writeError(socket: Duplex, status: number, message: string, statusText = STATUS_TEXT[status] ?? 'Error'): void {
  const body = Buffer.from(message);
  socket.end(`HTTP/1.1 ${status} ${statusText}\r\nContent-Type: text/plain; charset=utf-8\r\nContent-Length: ${body.length}\r\nConnection: close\r\n\r\n${message}`);
}

const STATUS_TEXT: Record<number, string> = {
  400: 'Bad Request',
  401: 'Unauthorized',
  403: 'Forbidden',
  404: 'Not Found',
  500: 'Internal Server Error',
  502: 'Bad Gateway',
  503: 'Service Unavailable',
};
