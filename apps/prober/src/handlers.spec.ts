import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { once } from 'node:events';
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import { createServer as createNetServer, type AddressInfo, type Socket } from 'node:net';
import * as grpc from '@grpc/grpc-js';
import { SystemClock } from '@app/clock';
import { FakeClock } from '@app/clock/testing';
import type { Container, Pod, Probe } from '@app/contracts';
import { FakeCri } from '@app/cri/testing';
import {
  ActionProbeHandler,
  ExecProbeHandler,
  FakeProbeHandler,
  GrpcProbeHandler,
  HttpGetProbeHandler,
  KUBE_PROBE_USER_AGENT,
  TcpSocketProbeHandler,
  canonicalHeaderName,
  expandCommandOnlyStatic,
  loadHealthService,
  type ProbeOutcome,
  type ProbeTarget,
} from './handlers.js';

const pod: Pod = { metadata: { name: 'web', namespace: 'default', uid: 'uid-1' }, spec: { containers: [] } };
const b64 = (s: string) => Buffer.from(s).toString('base64');

function target(o: { ports?: Container['ports']; env?: Container['env']; podIP?: string } = {}): ProbeTarget {
  return {
    pod,
    container: { name: 'app', ...(o.ports ? { ports: o.ports } : {}), ...(o.env ? { env: o.env } : {}) },
    containerId: 'abc',
    podIP: o.podIP ?? '127.0.0.1',
    hostIP: '192.168.1.2',
  };
}

function expectOutcome(got: ProbeOutcome, want: { result: ProbeOutcome['result']; output?: string | RegExp; warning?: boolean }): void {
  assert.equal(got.result, want.result, `result (output: ${got.output})`);
  if (typeof want.output === 'string') assert.equal(got.output, want.output);
  else if (want.output) assert.match(got.output, want.output);
  assert.equal(got.warning ?? false, want.warning ?? false, 'warning');
}

async function closedPort(): Promise<number> {
  const s = createNetServer();
  s.listen(0, '127.0.0.1');
  await once(s, 'listening');
  const port = (s.address() as AddressInfo).port;
  s.close();
  await once(s, 'close');
  return port;
}

// ---------------------------------------------------------------------------

describe('ExecProbeHandler (FakeCri)', () => {
  const cases: { name: string; setup: (cri: FakeCri) => void; command?: string[]; want: { result: ProbeOutcome['result']; output?: string | RegExp } }[] = [
    { name: 'exit 0 is a success with the output', setup: (cri) => cri.onRuntime('ExecSync', () => ({ stdout: b64('ok\n'), stderr: '', exitCode: 0 })), want: { result: 'Success', output: 'ok\n' } },
    {
      name: 'a non-zero exit is a failure with stdout then stderr',
      setup: (cri) => cri.onRuntime('ExecSync', () => ({ stdout: b64('out;'), stderr: b64('cat: /tmp/healthy: No such file'), exitCode: 1 })),
      want: { result: 'Failure', output: 'out;cat: /tmp/healthy: No such file' },
    },
    {
      name: 'the output is cut at 10 KiB',
      setup: (cri) => cri.onRuntime('ExecSync', () => ({ stdout: b64('x'.repeat(20_000)), stderr: '', exitCode: 0 })),
      want: { result: 'Success', output: 'x'.repeat(10 * 1024) },
    },
    { name: 'a timeout is a failure', command: ['sleep', '10'], setup: (cri) => cri.failNext('runtime', 'ExecSync', 'DeadlineExceeded'), want: { result: 'Failure', output: 'command "sleep 10" timed out' } },
    { name: 'the runtime unreachable is unknown', setup: (cri) => cri.failNext('runtime', 'ExecSync', 'Unavailable', 'no cri-gateway'), want: { result: 'Unknown', output: /no cri-gateway/ } },
    { name: 'no command is unknown', command: [], setup: () => undefined, want: { result: 'Unknown', output: /has no command/ } },
  ];
  for (const tc of cases) {
    it(tc.name, async () => {
      const cri = new FakeCri();
      tc.setup(cri);
      const got = await new ExecProbeHandler(cri).run({ exec: { command: tc.command ?? ['cat', '/tmp/healthy'] } }, target(), 1000);
      expectOutcome(got, tc.want);
    });
  }

  it('calls ExecSync on the bare container ID with the expanded command and the timeout in seconds', async () => {
    const cri = new FakeCri().onRuntime('ExecSync', () => ({ stdout: '', stderr: '', exitCode: 0 }));
    await new ExecProbeHandler(cri).run({ exec: { command: ['sh', '-c', 'test "$(GREETING)" = hi && echo $$(HOME)'] } }, target({ env: [{ name: 'GREETING', value: 'hi' }] }), 3000);
    assert.deepEqual(cri.callsOf('ExecSync'), [{ containerId: 'abc', cmd: ['sh', '-c', 'test "hi" = hi && echo $(HOME)'], timeout: '3' }]);
  });
});

describe('expandCommandOnlyStatic', () => {
  const env = [{ name: 'A', value: 'x' }, { name: 'FROM_FIELD', valueFrom: { fieldRef: { fieldPath: 'metadata.name' } } }];
  const cases: { name: string; arg: string; want: string }[] = [
    { name: 'a known variable', arg: '$(A)/b', want: 'x/b' },
    { name: 'a variable from a source is empty (static values only)', arg: '[$(FROM_FIELD)]', want: '[]' },
    { name: 'an unknown variable stays', arg: '$(NOPE)', want: '$(NOPE)' },
    { name: '$$ escapes', arg: '$$(A) $$', want: '$(A) $' },
    { name: 'an unterminated reference stays', arg: 'a$(A', want: 'a$(A' },
    { name: 'a lone $ stays', arg: 'cost $5 $', want: 'cost $5 $' },
  ];
  for (const tc of cases) it(tc.name, () => assert.deepEqual(expandCommandOnlyStatic([tc.arg], env), [tc.want]));
});

// ---------------------------------------------------------------------------

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
    new HttpGetProbeHandler(new SystemClock()).run({ httpGet: { port, ...action } }, t, 5000);

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
    const pending = new HttpGetProbeHandler(clock).run({ httpGet: { port, path: '/hang' } }, target(), 1000);
    await hangingSeen;
    await clock.step(999);
    await clock.step(1);
    expectOutcome(await pending, { result: 'Failure', output: `Get "http://127.0.0.1:${port}/hang": context deadline exceeded (Client.Timeout exceeded while awaiting headers)` });
  });
});

describe('canonicalHeaderName', () => {
  const cases: [string, string][] = [
    ['x-custom-header', 'X-Custom-Header'],
    ['USER-AGENT', 'User-Agent'],
    ['host', 'Host'],
    ['bad header', 'bad header'],
  ];
  for (const [name, want] of cases) it(`${name} -> ${want}`, () => assert.equal(canonicalHeaderName(name), want));
});

// ---------------------------------------------------------------------------

describe('TcpSocketProbeHandler (loopback TCP server)', () => {
  let server: ReturnType<typeof createNetServer>;
  let port = 0;
  let accepted = 0;

  before(async () => {
    server = createNetServer((s) => {
      accepted++;
      s.destroy();
    });
    server.listen(0, '127.0.0.1');
    await once(server, 'listening');
    port = (server.address() as AddressInfo).port;
  });
  after(async () => {
    server.close();
    await once(server, 'close');
  });

  const handler = () => new TcpSocketProbeHandler(new SystemClock());

  it('a listening port is a success', async () => {
    const before = accepted;
    expectOutcome(await handler().run({ tcpSocket: { port } }, target(), 1000), { result: 'Success', output: '' });
    await new Promise((r) => setImmediate(r));
    assert.equal(accepted - before, 1, 'the server saw the connection');
  });

  it('the port by name', async () => {
    expectOutcome(await handler().run({ tcpSocket: { port: 'db' } }, target({ ports: [{ name: 'db', containerPort: port }] }), 1000), { result: 'Success' });
  });

  it('a closed port is a failure', async () => {
    const closed = await closedPort();
    expectOutcome(await handler().run({ tcpSocket: { port: closed } }, target(), 1000), { result: 'Failure', output: `dial tcp 127.0.0.1:${closed}: connect: connection refused` });
  });

  it('an invalid port is unknown', async () => {
    expectOutcome(await handler().run({ tcpSocket: { port: 70_000 } }, target(), 1000), { result: 'Unknown', output: 'invalid port number: 70000' });
  });
});

// ---------------------------------------------------------------------------

describe('GrpcProbeHandler (loopback grpc.health.v1 server)', () => {
  const health = loadHealthService();
  const statuses: Record<string, string> = { '': 'SERVING', down: 'NOT_SERVING', unknown: 'SERVICE_UNKNOWN' };
  const userAgents: string[] = [];
  let server: grpc.Server;
  let bare: grpc.Server;
  let port = 0;
  let barePort = 0;

  const bind = (s: grpc.Server) =>
    new Promise<number>((resolve, reject) => s.bindAsync('127.0.0.1:0', grpc.ServerCredentials.createInsecure(), (err, p) => (err ? reject(err) : resolve(p))));

  before(async () => {
    server = new grpc.Server();
    server.addService(health.service, {
      Check: (call: grpc.ServerUnaryCall<{ service: string }, { status: string }>, callback: grpc.sendUnaryData<{ status: string }>) => {
        userAgents.push(String(call.metadata.get('user-agent')[0] ?? ''));
        const status = statuses[call.request.service];
        if (status === undefined) callback({ code: grpc.status.NOT_FOUND, details: 'unknown service' });
        else callback(null, { status });
      },
    });
    port = await bind(server);
    bare = new grpc.Server(); // implements nothing: Unimplemented
    barePort = await bind(bare);
  });
  after(() => {
    server.forceShutdown();
    bare.forceShutdown();
  });

  const run = (grpcAction: NonNullable<Probe['grpc']>, clock = new SystemClock()) => new GrpcProbeHandler(clock).run({ grpc: grpcAction }, target(), 5000);

  const cases: { name: string; action: () => NonNullable<Probe['grpc']>; want: { result: ProbeOutcome['result']; output: string | RegExp } }[] = [
    { name: 'SERVING is a success', action: () => ({ port, service: '' }), want: { result: 'Success', output: 'service healthy' } },
    { name: 'no service means the server overall', action: () => ({ port }), want: { result: 'Success', output: 'service healthy' } },
    { name: 'NOT_SERVING is a failure', action: () => ({ port, service: 'down' }), want: { result: 'Failure', output: 'service unhealthy (responded with "NOT_SERVING")' } },
    { name: 'SERVICE_UNKNOWN is a failure', action: () => ({ port, service: 'unknown' }), want: { result: 'Failure', output: 'service unhealthy (responded with "SERVICE_UNKNOWN")' } },
    { name: 'an error from the server is a failure', action: () => ({ port, service: 'nope' }), want: { result: 'Failure', output: 'error: health rpc probe failed: rpc error: code = NotFound desc = unknown service' } },
    {
      name: 'a server without the health service is a failure',
      action: () => ({ port: barePort }),
      want: { result: 'Failure', output: /^error: this server does not implement the grpc health protocol \(grpc\.health\.v1\.Health\): / },
    },
  ];
  for (const tc of cases) it(tc.name, async () => expectOutcome(await run(tc.action()), tc.want));

  it('identifies itself as kube-probe', async () => {
    await run({ port });
    assert.match(userAgents.at(-1) ?? '', /^kube-probe\/\d+\.\d+ /);
  });

  it('nothing listening: a failure once the timeout passes (fake clock)', async () => {
    const clock = new FakeClock();
    const closed = await closedPort();
    const pending = new GrpcProbeHandler(clock).run({ grpc: { port: closed } }, target(), 1000);
    await clock.step(1000);
    expectOutcome(await pending, { result: 'Failure', output: `timeout: failed to connect service "127.0.0.1:${closed}" within 1s: context deadline exceeded` });
  });
});

// ---------------------------------------------------------------------------

describe('ActionProbeHandler', () => {
  const fakes = () => ({ exec: new FakeProbeHandler(), httpGet: new FakeProbeHandler(), tcpSocket: new FakeProbeHandler(), grpc: new FakeProbeHandler() });
  const cases: { name: string; probe: Probe; want: 'exec' | 'httpGet' | 'tcpSocket' | 'grpc' | undefined }[] = [
    { name: 'exec', probe: { exec: { command: ['true'] } }, want: 'exec' },
    { name: 'httpGet', probe: { httpGet: { port: 80 } }, want: 'httpGet' },
    { name: 'tcpSocket', probe: { tcpSocket: { port: 80 } }, want: 'tcpSocket' },
    { name: 'grpc', probe: { grpc: { port: 80 } }, want: 'grpc' },
    { name: 'no action: unknown', probe: { periodSeconds: 10 }, want: undefined },
  ];
  for (const tc of cases) {
    it(tc.name, async () => {
      const f = fakes();
      const got = await new ActionProbeHandler(f).run(tc.probe, target(), 1000);
      const ran = (Object.keys(f) as (keyof typeof f)[]).filter((k) => f[k].runs.length > 0);
      assert.deepEqual(ran, tc.want ? [tc.want] : []);
      if (!tc.want) expectOutcome(got, { result: 'Unknown', output: 'missing probe handler for web_default(uid-1):app' });
    });
  }
});
