/**
 * The CRI over HTTP, on a unix socket with the CRI socket's owner, group and
 * mode: `POST /runtime/<Method>` and `POST /image/<Method>`, served by the
 * same CriGateway.call as NATS. Anyone who can call RunPodSandbox is root on
 * the node, so this door is no wider than the CRI socket itself: off unless
 * CRI_HTTP_SOCKET is set, and never on the TCP port (docs/adr/0012).
 *
 *   curl --unix-socket /run/kubelet-split/cri-http.sock -XPOST http://cri/runtime/Version -d '{}'
 */
import { chmodSync, chownSync, lstatSync, statSync, unlinkSync } from 'node:fs';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { CRI_TIMEOUT_HEADER, CriError, httpStatusOf, parseCriTimeout, type CriService } from '@app/cri';
import type { Logger } from '@app/observability';
import { readJsonBody, toErrorReply } from '@app/service';
import type { CriGateway } from '../gateway.js';

/** One HTTP call to the gateway: the route, the deadline header, the body; the reply or the error with its HTTP status. */
export async function serveCriHttp(gateway: CriGateway, req: IncomingMessage, res: ServerResponse): Promise<void> {
  const route = /^\/(runtime|image)\/([A-Za-z]+)$/.exec(new URL(req.url ?? '/', 'http://cri').pathname);
  const send = (status: number, body: unknown) => {
    res.writeHead(status, { 'content-type': 'application/json; charset=utf-8' });
    res.end(JSON.stringify(body));
  };
  if (!route || req.method !== 'POST') {
    send(404, { error: { code: 'NotFound', description: `no route ${req.method ?? ''} ${req.url ?? ''}: POST /runtime/<Method> or /image/<Method>` } });
    return;
  }
  const service = route[1] as CriService;
  const method = route[2] ?? '';
  try {
    const header = req.headers[CRI_TIMEOUT_HEADER.toLowerCase()];
    const timeout = parseCriTimeout(Array.isArray(header) ? header[0] : header);
    if (timeout.problem) throw new CriError('InvalidArgument', `${method}: ${timeout.problem}`);
    const body = await readJsonBody(req);
    send(200, await gateway.call(service, method, body, timeout.ms));
  } catch (err) {
    const reply = toErrorReply(err);
    send(err instanceof CriError ? httpStatusOf(err.code) : httpStatusOf(reply.error.code), reply);
  }
}

/** The unix socket server; its file is made as private as the CRI socket before anyone can connect. */
export class CriHttpSocket {
  private server: Server | undefined;

  constructor(
    private readonly gateway: CriGateway,
    /** Where to listen. */
    readonly path: string,
    /** The CRI socket whose owner, group and mode the HTTP socket takes. */
    private readonly criSocket: string,
    private readonly logger: Logger,
  ) {}

  async start(): Promise<void> {
    removeStaleSocket(this.path);
    const server = createServer((req, res) => void serveCriHttp(this.gateway, req, res));
    // The socket file is created by listen(); with this umask nobody but us can connect until it has the CRI socket's mode.
    const umask = process.umask(0o177);
    try {
      await new Promise<void>((resolve, reject) => {
        server.once('error', reject);
        server.listen(this.path, () => resolve());
      });
    } finally {
      process.umask(umask);
    }
    this.server = server;
    const like = this.likeCriSocket();
    this.logger.info({ socket: this.path, mode: like.mode.toString(8), uid: like.uid, gid: like.gid }, 'serving the CRI over HTTP on a unix socket');
  }

  async stop(): Promise<void> {
    const server = this.server;
    this.server = undefined;
    if (!server) return;
    await new Promise<void>((resolve) => server.close(() => resolve()));
    server.closeAllConnections();
    removeStaleSocket(this.path);
  }

  /** Gives the HTTP socket the CRI socket's owner, group and permission bits (0600 of ours when it cannot be read). */
  private likeCriSocket(): { mode: number; uid: number; gid: number } {
    const ours = { mode: 0o600, uid: process.getuid?.() ?? 0, gid: process.getgid?.() ?? 0 };
    try {
      const st = statSync(this.criSocket);
      const like = { mode: st.mode & 0o777, uid: st.uid, gid: st.gid };
      chownSync(this.path, like.uid, like.gid);
      chmodSync(this.path, like.mode);
      return like;
    } catch (err) {
      this.logger.warn({ err, criSocket: this.criSocket }, 'cannot give the CRI over HTTP the CRI socket\'s owner and mode: it gets mode 0600, ours');
      chmodSync(this.path, ours.mode);
      return ours;
    }
  }
}

function removeStaleSocket(path: string): void {
  try {
    if (lstatSync(path).isSocket()) unlinkSync(path);
  } catch {
    // absent
  }
}
