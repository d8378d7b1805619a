import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { OPEN_PATHS, httpAccess, isLoopbackHost } from './http-access.js';
import type { Endpoint } from './peer-uid.js';

/** The client's socket as the kernel's table would own it: `uid` for the client 127.0.0.1:40000 -> 127.0.0.1:10250. */
function peerTable(uid: number | undefined) {
  const asked: [Endpoint, Endpoint][] = [];
  const lookup = (client: Endpoint, server: Endpoint) => {
    asked.push([client, server]);
    return Promise.resolve(client.port === 40000 && server.port === 10250 ? uid : undefined);
  };
  return { asked, lookup };
}

/** Runs the middleware on one request: 'next' when it lets it through, else the status it answered (and its body). */
async function answer(host: string, token: string | undefined, path: string, opts: { authorization?: string; peerUid?: number; ownUid?: number } = {}) {
  let status: number | 'next' | undefined;
  let body = '';
  let resolve = () => {};
  const done = new Promise<void>((r) => (resolve = r));
  const res = {
    writeHead: (s: number) => void (status = s),
    end: (b: string) => {
      body = b;
      resolve();
    },
  } as unknown as ServerResponse;
  const socket = { remoteAddress: '127.0.0.1', remotePort: 40000, localAddress: '127.0.0.1', localPort: 10250 };
  const req = { url: path, headers: opts.authorization ? { authorization: opts.authorization } : {}, socket } as unknown as IncomingMessage;
  const peers = peerTable('peerUid' in opts ? opts.peerUid : 0);
  httpAccess(host, token, { peerUid: peers.lookup, ownUid: opts.ownUid ?? 0 }).middleware(req, res, () => {
    status = 'next';
    resolve();
  });
  await done;
  assert.ok(status !== undefined, 'the middleware neither answered nor called next');
  return { status, body, asked: peers.asked };
}

async function decide(host: string, token: string | undefined, path: string, authorization?: string): Promise<number | 'next'> {
  return (await answer(host, token, path, authorization ? { authorization } : {})).status;
}

describe('http access: pod data is not served off loopback without a token', () => {
  const cases: { name: string; host: string; token?: string; path: string; auth?: string; want: number | 'next' }[] = [
    { name: 'loopback, no token: /pods is served', host: '127.0.0.1', path: '/pods', want: 'next' },
    { name: 'loopback ::1, no token: /pods is served', host: '::1', path: '/pods', want: 'next' },
    { name: 'off loopback, no token: /pods is refused', host: '0.0.0.0', path: '/pods', want: 403 },
    { name: 'off loopback, no token: POST /mode is refused', host: '0.0.0.0', path: '/mode', want: 403 },
    { name: 'off loopback, no token: /pods/default/web with a query is refused', host: '::', path: '/pods/default/web?x=1', want: 403 },
    { name: 'off loopback, no token: /readyz is served', host: '0.0.0.0', path: '/readyz', want: 'next' },
    { name: 'off loopback, no token: /healthz is served', host: '0.0.0.0', path: '/healthz', want: 'next' },
    { name: 'off loopback, no token: /metrics is served', host: '0.0.0.0', path: '/metrics', want: 'next' },
    { name: 'off loopback, token: /pods without it is 401', host: '0.0.0.0', token: 's3cret', path: '/pods', want: 401 },
    { name: 'off loopback, token: /pods with a wrong one is 401', host: '0.0.0.0', token: 's3cret', path: '/pods', auth: 'Bearer nope', want: 401 },
    { name: 'off loopback, token: /pods with it is served', host: '0.0.0.0', token: 's3cret', path: '/pods', auth: 'Bearer s3cret', want: 'next' },
    { name: 'loopback, token: /pods without it is 401 (local users kept out too)', host: '127.0.0.1', token: 's3cret', path: '/pods', want: 401 },
    { name: 'loopback, token: /readyz stays open', host: '127.0.0.1', token: 's3cret', path: '/readyz', want: 'next' },
  ];
  for (const tc of cases) it(tc.name, async () => assert.equal(await decide(tc.host, tc.token, tc.path, tc.auth), tc.want));
});

describe('http access on loopback without a token: root and the service\'s own user only', () => {
  it('root (uid 0) is served /pods, and the lookup was asked about this very connection', async () => {
    const r = await answer('127.0.0.1', undefined, '/pods', { peerUid: 0 });
    assert.equal(r.status, 'next');
    assert.deepEqual(r.asked, [[{ address: '127.0.0.1', port: 40000 }, { address: '127.0.0.1', port: 10250 }]]);
  });
  it("the service's own non-root user is served", async () => {
    assert.equal((await answer('127.0.0.1', undefined, '/containerLogs/default/web/c', { peerUid: 1000, ownUid: 1000 })).status, 'next');
  });
  it('another local user gets 403 naming its uid, for pod data and for actions', async () => {
    for (const path of ['/pods', '/containerLogs/default/web/c', '/mode', '/stats/summary']) {
      const r = await answer('127.0.0.1', undefined, path, { peerUid: 65534 });
      assert.equal(r.status, 403, path);
      assert.match(r.body, /uid 65534/);
      assert.match(r.body, /HTTP_TOKEN_FILE/);
    }
  });
  it('a client that cannot be found in the socket table is refused (fail closed)', async () => {
    const r = await answer('::1', undefined, '/pods', { peerUid: undefined });
    assert.equal(r.status, 403);
    assert.match(r.body, /could not be found/);
  });
  it('another local user still reaches /healthz, /readyz and /metrics, without a lookup', async () => {
    for (const path of OPEN_PATHS) {
      const r = await answer('127.0.0.1', undefined, path, { peerUid: 65534 });
      assert.equal(r.status, 'next', path);
      assert.equal(r.asked.length, 0);
    }
  });
  it('a kept-alive connection is looked up once', async () => {
    const peers = peerTable(0);
    const access = httpAccess('127.0.0.1', undefined, { peerUid: peers.lookup, ownUid: 0 });
    const socket = { remoteAddress: '127.0.0.1', remotePort: 40000, localAddress: '127.0.0.1', localPort: 10250 };
    const res = { writeHead: () => assert.fail('refused'), end: () => undefined } as unknown as ServerResponse;
    for (let i = 0; i < 3; i++) {
      await new Promise<void>((resolve) => access.middleware({ url: '/pods', headers: {}, socket } as unknown as IncomingMessage, res, resolve));
    }
    assert.equal(peers.asked.length, 1);
  });
  it('with a token file, the token decides, not the uid', async () => {
    assert.equal((await answer('127.0.0.1', 's3cret', '/pods', { peerUid: 65534, authorization: 'Bearer s3cret' })).status, 'next');
    assert.equal((await answer('127.0.0.1', 's3cret', '/pods', { peerUid: 0 })).status, 401);
  });
});

describe('isLoopbackHost', () => {
  const cases: [string, boolean][] = [
    ['127.0.0.1', true],
    ['127.1.2.3', true],
    ['localhost', true],
    ['::1', true],
    ['[::1]', true],
    ['::ffff:127.0.0.1', true],
    ['0.0.0.0', false],
    ['::', false],
    ['10.0.0.5', false],
    ['node-1.example', false],
  ];
  for (const [host, want] of cases) it(host, () => assert.equal(isLoopbackHost(host), want));
});
