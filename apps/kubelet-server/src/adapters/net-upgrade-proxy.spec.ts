import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, type IncomingMessage, type Server } from 'node:http';
import { connect, type AddressInfo, type Socket } from 'node:net';
import { NetUpgradeProxy } from './net-upgrade-proxy.js';

/**
 * The proxy between a client and a fake streaming server, both in-process:
 * what the streaming server receives, and bytes both ways after the 101.
 */
describe('NetUpgradeProxy', () => {
  let backend: Server;
  let front: Server;
  let frontPort = 0;
  const seen: { method: string; url: string; headers: IncomingMessage['headers'] }[] = [];

  before(async () => {
    // The fake streaming server: upgrades /exec/<token> (echoing each chunk back upper-cased), refuses anything else with a 404.
    backend = createServer((req, res) => {
      seen.push({ method: req.method ?? '', url: req.url ?? '', headers: req.headers });
      res.writeHead(404, { 'content-type': 'text/plain' });
      res.end('token not found');
    });
    backend.on('upgrade', (req: IncomingMessage, socket: Socket, head: Buffer) => {
      seen.push({ method: req.method ?? '', url: req.url ?? '', headers: req.headers });
      if (!req.url?.startsWith('/exec/')) {
        socket.end('HTTP/1.1 404 Not Found\r\nContent-Length: 15\r\n\r\ntoken not found');
        return;
      }
      socket.write(`HTTP/1.1 101 Switching Protocols\r\nConnection: Upgrade\r\nUpgrade: ${req.headers.upgrade ?? ''}\r\nX-Stream-Protocol-Version: ${String(req.headers['x-stream-protocol-version'] ?? '')}\r\n\r\n`);
      if (head.length > 0) socket.write(head.toString().toUpperCase());
      socket.on('data', (d: Buffer) => (d.toString() === 'bye' ? socket.end() : socket.write(d.toString().toUpperCase())));
      socket.on('end', () => socket.end());
    });
    await new Promise<void>((r) => backend.listen(0, '127.0.0.1', r));
    const backendPort = (backend.address() as AddressInfo).port;
    const proxy = new NetUpgradeProxy();
    front = createServer((_req, res) => res.end());
    front.on('upgrade', (req: IncomingMessage, socket: Socket, head: Buffer) => {
      const token = req.url?.includes('unknown') ? '/portforward/gone' : '/exec/tok123';
      void proxy.proxy(req, socket, head, new URL(`http://127.0.0.1:${backendPort}${token}`));
    });
    await new Promise<void>((r) => front.listen(0, '127.0.0.1', r));
    frontPort = (front.address() as AddressInfo).port;
  });

  after(async () => {
    await new Promise<void>((r) => front.close(() => r()));
    await new Promise<void>((r) => backend.close(() => r()));
  });

  /** A raw client: sends `head` and returns the socket with everything it received so far. */
  const dial = (head: string) =>
    new Promise<{ socket: Socket; received: () => string; closed: Promise<void> }>((resolve) => {
      let got = '';
      const socket = connect(frontPort, '127.0.0.1', () => {
        socket.write(head);
        resolve({ socket, received: () => got, closed: new Promise((r) => socket.once('close', () => r())) });
      });
      socket.setEncoding('utf8');
      socket.on('data', (d: string) => (got += d));
    });
  const until = async (pred: () => boolean) => {
    for (let i = 0; i < 200 && !pred(); i++) await new Promise((r) => setTimeout(r, 10));
    assert.ok(pred());
  };

  it('SPDY: the path and query replaced by the URL\'s, the upgrade headers passed, the credentials not; bytes both ways until the backend ends', async () => {
    seen.length = 0;
    const c = await dial(
      'POST /exec/default/web/c?command=echo&output=1 HTTP/1.1\r\nHost: kubelet\r\nConnection: Upgrade\r\nUpgrade: SPDY/3.1\r\nX-Stream-Protocol-Version: v4.channel.k8s.io\r\nAuthorization: Bearer secret\r\n\r\nearly',
    );
    await until(() => c.received().includes('EARLY'));
    assert.match(c.received(), /^HTTP\/1\.1 101 Switching Protocols\r\n/);
    assert.match(c.received(), /X-Stream-Protocol-Version: v4\.channel\.k8s\.io/);
    c.socket.write('hello');
    await until(() => c.received().endsWith('HELLO'));
    const req = seen[0];
    assert.deepEqual([req?.method, req?.url], ['POST', '/exec/tok123']);
    assert.equal(req?.headers.upgrade, 'SPDY/3.1');
    assert.equal(req?.headers['x-stream-protocol-version'], 'v4.channel.k8s.io');
    assert.equal(req?.headers.authorization, undefined);
    assert.equal(req?.headers['x-forwarded-for'], '127.0.0.1');
    c.socket.write('bye');
    await c.closed; // the backend ended the stream: the client's socket closes too
  });

  it('websocket: the Sec-WebSocket-* headers pass through', async () => {
    seen.length = 0;
    const c = await dial(
      'GET /exec/default/web/c?command=ls&output=1 HTTP/1.1\r\nHost: kubelet\r\nConnection: Upgrade\r\nUpgrade: websocket\r\nSec-WebSocket-Version: 13\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Protocol: v4.channel.k8s.io\r\n\r\n',
    );
    await until(() => c.received().includes('\r\n\r\n'));
    assert.match(c.received(), /^HTTP\/1\.1 101 /);
    assert.deepEqual([seen[0]?.headers['sec-websocket-key'], seen[0]?.headers['sec-websocket-protocol'], seen[0]?.headers['sec-websocket-version']], ['dGhlIHNhbXBsZSBub25jZQ==', 'v4.channel.k8s.io', '13']);
    c.socket.destroy();
  });

  it('a refusal of the streaming server reaches the client as it is, and both close', async () => {
    const c = await dial('POST /unknown HTTP/1.1\r\nHost: kubelet\r\nConnection: Upgrade\r\nUpgrade: SPDY/3.1\r\n\r\n');
    await c.closed;
    assert.match(c.received(), /^HTTP\/1\.1 404 Not Found\r\n[\s\S]*\r\n\r\ntoken not found$/);
  });
});
