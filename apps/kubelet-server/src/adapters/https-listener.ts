/**
 * The kubelet API server's socket: HTTPS (TLS 1.2 or later) on the
 * configured address and port, asking for a client certificate when a
 * client CA is given (verified, not required: a request may carry a token
 * instead, auth.ts decides), with `reusePort` so that both status-manager
 * instances of a node listen on the same port and the kernel spreads the
 * connections between them (docs/adr/0022-kubelet-server-reuseport.md).
 */
import { createServer, type Server } from 'node:https';
import type { TLSSocket } from 'node:tls';
import type { Logger } from '@app/observability';
import type { ClientCertificate } from '../auth.js';
import type { KubeletServer } from '../kubelet-server.js';
import { writeError } from './net-upgrade-proxy.js';

export interface HttpsListenerOptions {
  address: string;
  port: number;
  cert: Buffer;
  key: Buffer;
  /** The client CA (PEM); undefined: no client certificates asked for. */
  clientCa?: Buffer;
}

export class HttpsListener {
  private server?: Server;

  constructor(
    private readonly kubelet: KubeletServer,
    private readonly options: HttpsListenerOptions,
    private readonly logger: Logger,
  ) {}

  /** The port it listens on (the configured one, or the one the kernel chose for 0 in tests). */
  get port(): number {
    const a = this.server?.address();
    return typeof a === 'object' && a ? a.port : 0;
  }

  async listen(): Promise<void> {
    const o = this.options;
    const server = createServer({
      cert: o.cert,
      key: o.key,
      minVersion: 'TLSv1.2',
      ...(o.clientCa ? { ca: o.clientCa, requestCert: true, rejectUnauthorized: false } : {}),
    });
    server.on('request', (req, res) => {
      this.kubelet.handle(req, res, certificateOf(req.socket as TLSSocket)).catch((err: unknown) => {
        this.logger.warn({ err: (err as Error).message }, 'kubelet API: a request failed');
        if (!res.headersSent) res.writeHead(500);
        res.end();
      });
    });
    server.on('upgrade', (req, socket, head) => {
      socket.on('error', () => socket.destroy());
      this.kubelet.handleUpgrade(req, socket, head, certificateOf(req.socket as TLSSocket)).catch((err: unknown) => {
        this.logger.warn({ err: (err as Error).message }, 'kubelet API: an upgrade request failed');
        writeError(socket, 500, (err as Error).message);
      });
    });
    server.on('tlsClientError', (err) => this.logger.debug({ err: err.message }, 'kubelet API: TLS handshake failed'));
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen({ host: o.address, port: o.port, reusePort: true }, () => {
        server.off('error', reject);
        resolve();
      });
    });
    this.server = server;
  }

  async close(): Promise<void> {
    const server = this.server;
    if (!server) return;
    this.server = undefined;
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  }
}

function certificateOf(socket: TLSSocket): ClientCertificate | undefined {
  const peer = socket.getPeerCertificate();
  if (!peer || Object.keys(peer).length === 0) return undefined;
  const subject = (peer.subject ?? {}) as { CN?: string | string[]; O?: string | string[] };
  return { authorized: socket.authorized, subject: { ...(subject.CN !== undefined ? { CN: subject.CN } : {}), ...(subject.O !== undefined ? { O: subject.O } : {}) } };
}
