import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { once } from 'node:events';
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { SystemClock } from '@app/clock';
import { FakeClock } from '@app/clock/testing';
import type { Probe } from '@app/contracts';
import { KUBE_PROBE_USER_AGENT, NodeHttpClient } from '@app/probe';
import { closedPort, expectOutcome, probeTarget as target, type ProbeOutcome, type ProbeTarget } from '../testing.js';
import { HttpGetProbeHandler } from './http-get.js';

describe('HttpGetProbeHandler (loopback HTTP server)', () => {
  let server: Server;
  let port = 0;
  const sockets = new Set<Socket>();
  const seen: { url: string; headers: IncomingHttpHeaders }[] = [];
  let hanging: (() => void) | undefined;
  const hangingSeen = new Promise<void>((resolve) => (hanging = resolve));

  before(async () => {
    server = createServer((req, res) => {
      seen.push({ url: req.url ?? '', headers: req.headers });
      const path = (req.url ?? '').split('?')[0];
      switch (path) {
        case '/ok':
          res.end('ok');
          return;
        case '/fail':
          res.statusCode = 500;
          res.end('secret stack trace');
          return;
        case '/same-host':
          res.writeHead(302, { Location: '/ok' }).end();
          return;
        case '/other-host':
          res.writeHead(302, { Location: `http://localhost:${port}/ok` }).end('moved');
          return;
        case '/loop':
          res.writeHead(302, { Location: '/loop' }).end();
          return;
        case '/big':
          res.end('y'.repeat(30_000));
          return;
        case '/hang':
          hanging?.();
          return; // never answers
        default:
          res.end(JSON.stringify(req.headers));
      }
    });
    server.on('connection', (s: Socket) => {
      sockets.add(s);
      s.on('close', () => sockets.delete(s));
    });
    server.listen(0, '127.0.0.1');
    await once(server, 'listening');
    port = (server.address() as AddressInfo).port;
  });

  after(async () => {
    for (const s of sockets) s.destroy();
    server.close();
    await once(server, 'close');
  });

  const run = (action: Partial<NonNullable<Probe['httpGet']>>, t: ProbeTarget = target({ ports: [{ name: 'http', containerPort: port }] })) =>
    new HttpGetProbeHandler(new NodeHttpClient(), new SystemClock()).run({ httpGet: { port, ...action } }, t, 5000);

  const cases: { name: string; action: () => Partial<NonNullable<Probe['httpGet']>>; want: { result: ProbeOutcome['result']; output?: string | RegExp; warning?: boolean } }[] = [
    { name: '200 is a success with the body', action: () => ({ path: '/ok' }), want: { result: 'Success', output: 'ok' } },
    { name: '500 is a failure without the body', action: () => ({ path: '/fail' }), want: { result: 'Failure', output: 'HTTP probe failed with statuscode: 500' } },
    { name: 'a redirect on the same host is followed', action: () => ({ path: '/same-host' }), want: { result: 'Success', output: 'ok' } },
    {
      name: 'a redirect to another host is not followed: a success with a warning',
      action: () => ({ path: '/other-host' }),
      want: { result: 'Success', output: 'Probe terminated redirects, Response body: moved', warning: true },
    },
    { name: 'a redirect loop stops after 10 requests', action: () => ({ path: '/loop' }), want: { result: 'Failure', output: /^Get "http:\/\/127\.0\.0\.1:\d+\/loop": stopped after 10 redirects$/ } },
    { name: 'the port by its container port name', action: () => ({ path: '/ok', port: 'http' }), want: { result: 'Success', output: 'ok' } },
    { name: 'the port as a number in a string', action: () => ({ path: '/ok', port: String(port) }), want: { result: 'Success', output: 'ok' } },
    { name: 'a port name the container does not have is unknown', action: () => ({ path: '/ok', port: 'metrics' }), want: { result: 'Unknown', output: /"metrics" is neither a port name/ } },
    { name: 'a path without a leading slash', action: () => ({ path: 'ok' }), want: { result: 'Success', output: 'ok' } },
    { name: 'the body is read up to 10 KiB', action: () => ({ path: '/big' }), want: { result: 'Success', output: 'y'.repeat(10 * 1024) } },
    { name: 'an explicit host', action: () => ({ path: '/ok', host: '127.0.0.1' }), want: { result: 'Success', output: 'ok' } },
  ];
  for (const tc of cases) it(tc.name, async () => expectOutcome(await run(tc.action()), tc.want));

  it('the redirect loop made exactly 10 requests', async () => {
    const before = seen.filter((s) => s.url === '/loop').length;
    await run({ path: '/loop' });
    assert.equal(seen.filter((s) => s.url === '/loop').length - before, 10);
  });

  it('sends kube-probe as User-Agent, Accept */*, the probe headers, and the Host header as the host', async () => {
    const got = await run({ path: '/echo?x=1', httpHeaders: [{ name: 'x-custom', value: 'a' }, { name: 'Host', value: 'example.test' }] });
    assert.equal(got.result, 'Success');
    const headers = JSON.parse(got.output) as Record<string, string>;
    assert.equal(headers['user-agent'], KUBE_PROBE_USER_AGENT);
    assert.match(KUBE_PROBE_USER_AGENT, /^kube-probe\/\d+\.\d+$/);
    assert.equal(headers['accept'], '*/*');
    assert.equal(headers['x-custom'], 'a');
    assert.equal(headers['host'], 'example.test');
    assert.equal(seen.at(-1)?.url, '/echo?x=1');
  });

  it('a User-Agent header of the probe wins, an empty Accept is left out', async () => {
    const got = await run({ path: '/echo', httpHeaders: [{ name: 'User-Agent', value: 'mine' }, { name: 'Accept', value: '' }] });
    const headers = JSON.parse(got.output) as Record<string, string>;
    assert.equal(headers['user-agent'], 'mine');
    assert.equal(headers['accept'], undefined);
  });

  it('no pod IP and no host: unknown', async () => {
    expectOutcome(await run({ path: '/ok' }, target({ podIP: '' })), { result: 'Unknown', output: /has no IP to probe yet/ });
  });

  it('a refused connection is a failure', async () => {
    const closed = await closedPort();
    expectOutcome(await run({ path: '/ok', port: closed }), { result: 'Failure', output: `Get "http://127.0.0.1:${closed}/ok": dial tcp 127.0.0.1:${closed}: connect: connection refused` });
  });

  it('no answer within the timeout is a failure (fake clock)', async () => {
    const clock = new FakeClock();
    const pending = new HttpGetProbeHandler(new NodeHttpClient(), clock).run({ httpGet: { port, path: '/hang' } }, target(), 1000);
    await hangingSeen;
    await clock.step(999);
    await clock.step(1);
    expectOutcome(await pending, { result: 'Failure', output: `Get "http://127.0.0.1:${port}/hang": context deadline exceeded (Client.Timeout exceeded while awaiting headers)` });
  });
});
