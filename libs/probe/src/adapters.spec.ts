import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { once } from 'node:events';
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { NodeHttpClient } from './adapters.js';
import { HTTP_RESPONSE_TO_HTTPS_CLIENT } from './ports.js';

describe('NodeHttpClient (loopback HTTP server)', () => {
  let server: Server;
  let port = 0;
  const seen: IncomingHttpHeaders[] = [];

  before(async () => {
    server = createServer((req, res) => {
      seen.push(req.headers);
      res.writeHead(302, { Location: '/elsewhere' }).end('moved');
    });
    server.listen(0, '127.0.0.1');
    await once(server, 'listening');
    port = (server.address() as AddressInfo).port;
  });
  after(async () => {
    server.closeAllConnections();
    server.close();
    await once(server, 'close');
  });

  it('one GET: the head (no redirect followed), the body read to the limit, the request host as Host', async () => {
    const res = await new NodeHttpClient().get({ url: new URL(`http://127.0.0.1:${port}/a`), headers: { 'User-Agent': 'kube-probe/1.34', 'X-A': ['1', '2'] }, host: 'svc.test' }, new AbortController().signal);
    assert.deepEqual([res.status, res.location, await res.readBody(3)], [302, '/elsewhere', 'mov']);
    assert.equal(seen.at(-1)?.host, 'svc.test');
    assert.equal(seen.at(-1)?.['user-agent'], 'kube-probe/1.34');
    assert.equal(seen.at(-1)?.['x-a'], '1, 2');
  });

  it('HTTPS answered in plain HTTP rejects with Go\'s "server gave HTTP response to HTTPS client"', async () => {
    await assert.rejects(new NodeHttpClient().get({ url: new URL(`https://127.0.0.1:${port}/a`), headers: {} }, new AbortController().signal), { message: HTTP_RESPONSE_TO_HTTPS_CLIENT });
  });
});
