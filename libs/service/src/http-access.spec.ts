import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { httpAccess, isLoopbackHost } from './http-access.js';

/** Runs the middleware on one request: 'next' when it lets it through, else the status it answered. */
function decide(host: string, token: string | undefined, path: string, authorization?: string): number | 'next' {
  let status: number | 'next' | undefined;
  const res = { writeHead: (s: number) => void (status = s), end: () => undefined } as unknown as ServerResponse;
  const req = { url: path, headers: authorization ? { authorization } : {} } as IncomingMessage;
  httpAccess(host, token).middleware(req, res, () => void (status = 'next'));
  assert.ok(status !== undefined, 'the middleware neither answered nor called next');
  return status;
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
  for (const tc of cases) it(tc.name, () => assert.equal(decide(tc.host, tc.token, tc.path, tc.auth), tc.want));
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
