import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, request, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { FakeClock } from '@app/clock/testing';
import { silentLogger } from '@app/observability';
import { KubeletAuthenticator, KubeletAuthorizer } from './auth.js';
import { KubeletServer } from './kubelet-server.js';
import { FakeAccessReviewer, FakeContainerLogServer, FakeKubeletPods, FakeNodeStats, FakeStreamingRuntime, FakeTokenReviewer, FakeUpgradeProxy, runningPod } from './testing.js';

/** The server's routes over plain HTTP in-process (the TLS listener is the adapter's), with fakes behind. */
describe('KubeletServer', () => {
  const tokens = new FakeTokenReviewer();
  const sar = new FakeAccessReviewer();
  const pods = new FakeKubeletPods();
  const runtime = new FakeStreamingRuntime();
  const logs = new FakeContainerLogServer();
  const proxy = new FakeUpgradeProxy();
  let server: Server;
  let base: string;

  before(async () => {
    tokens.users.set('admin-token', { name: 'admin', groups: ['system:masters'] });
    tokens.users.set('viewer-token', { name: 'viewer', groups: [] });
    sar.allowed.add('viewer get pods');
    pods.pods.push(runningPod('default', 'web', 'uid-web', [{ name: 'c' }, { name: 't', tty: true }]));
    runtime.sandboxes.add('uid-web');
    runtime.runOutput = Buffer.from('hi\n');
    const clock = new FakeClock();
    const kubelet = new KubeletServer(
      {
        authenticator: new KubeletAuthenticator(tokens, clock, { anonymous: false, x509: false }),
        authorizer: new KubeletAuthorizer(sar, clock),
        pods,
        runtime,
        logs,
        stats: new FakeNodeStats(),
        proxy,
        logger: silentLogger(),
      },
      'node-a',
    );
    server = createServer((req, res) => void kubelet.handle(req, res));
    server.on('upgrade', (req, socket, head) => void kubelet.handleUpgrade(req, socket, head));
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });

  after(() => new Promise<void>((r) => server.close(() => r())));

  const get = async (path: string, token?: string, method = 'GET') => {
    const res = await fetch(base + path, { method, headers: token ? { authorization: `Bearer ${token}` } : {} });
    return { status: res.status, body: await res.text(), type: res.headers.get('content-type') };
  };

  /** An upgrade request as the apiserver sends one; resolves with the status line the client got. */
  const upgrade = (path: string, token: string | undefined, kind: 'SPDY/3.1' | 'websocket' = 'SPDY/3.1') =>
    new Promise<{ status: number; body: string }>((resolve, reject) => {
      const req = request(base + path, { method: kind === 'websocket' ? 'GET' : 'POST', headers: { connection: 'Upgrade', upgrade: kind, ...(token ? { authorization: `Bearer ${token}` } : {}) } });
      req.on('upgrade', (res, socket) => {
        socket.destroy();
        resolve({ status: res.statusCode ?? 0, body: '' });
      });
      req.on('response', (res) => {
        let body = '';
        res.setEncoding('utf8');
        res.on('data', (c: string) => (body += c));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
      });
      req.on('error', reject);
      req.end();
    });

  it('no credentials: 401 Unauthorized, on every path', async () => {
    for (const path of ['/pods', '/healthz', '/containerLogs/default/web/c']) assert.deepEqual([(await get(path)).status, (await get(path)).body], [401, 'Unauthorized']);
    assert.deepEqual(await upgrade('/exec/default/web/c?command=id&output=1', undefined), { status: 401, body: 'Unauthorized' });
    assert.equal(runtime.calls.length, 0);
  });

  it('a user allowed nodes/pods only: /pods 200, exec 403 with upstream\'s message', async () => {
    const r = await get('/pods', 'viewer-token');
    assert.equal(r.status, 200);
    assert.deepEqual((JSON.parse(r.body) as { items: { metadata: { name: string } }[] }).items.map((p) => p.metadata.name), ['web']);
    assert.deepEqual(await upgrade('/exec/default/web/c?command=id&output=1', 'viewer-token'), { status: 403, body: 'Forbidden (user=viewer, verb=create, resource=nodes, subresource(s)=[proxy])\n' });
    assert.equal(runtime.calls.length, 0);
  });

  it('GET /healthz: ok', async () => {
    assert.deepEqual(await get('/healthz', 'admin-token'), { status: 200, body: 'ok', type: 'text/plain; charset=utf-8' });
  });

  it('GET /containerLogs: the log server with the query', async () => {
    const r = await get('/containerLogs/default/web/c?tailLines=5&follow=true', 'admin-token');
    assert.deepEqual([r.status, r.body], [200, 'logs of c\n']);
    assert.deepEqual(logs.calls.at(-1), { target: { namespace: 'default', pod: 'web', container: 'c' }, query: { tailLines: '5', follow: 'true' } });
  });

  it('exec over SPDY: CRI Exec with the options and command, the client proxied to the URL it answered', async () => {
    runtime.calls.length = 0;
    const r = await upgrade('/exec/default/web/c?command=sh&command=-c&command=echo%20hi&input=1&output=1&error=1', 'admin-token');
    assert.equal(r.status, 101);
    assert.deepEqual(runtime.calls, [{ method: 'Exec', args: ['cid-c', ['sh', '-c', 'echo hi'], { stdin: true, stdout: true, stderr: true, tty: false }] }]);
    assert.equal(proxy.locations.at(-1)?.href, 'http://127.0.0.1:1/exec/token-cid-c');
  });

  it('exec with the pod\'s UID over a websocket (GET)', async () => {
    runtime.calls.length = 0;
    assert.equal((await upgrade('/exec/default/web/uid-web/c?command=id&output=1', 'admin-token', 'websocket')).status, 101);
    assert.equal(runtime.calls[0]?.method, 'Exec');
    assert.equal((await upgrade('/exec/default/web/other-uid/c?command=id&output=1', 'admin-token')).status, 404);
  });

  it('attach takes the container\'s own tty', async () => {
    runtime.calls.length = 0;
    assert.equal((await upgrade('/attach/default/web/t?input=1&output=1&error=1', 'admin-token')).status, 101);
    assert.deepEqual(runtime.calls, [{ method: 'Attach', args: ['cid-t', { stdin: true, stdout: true, stderr: true, tty: true }] }]);
  });

  it('an unknown pod or container: 404 saying which', async () => {
    runtime.calls.length = 0;
    assert.deepEqual(await upgrade('/exec/default/nope/c?command=id&output=1', 'admin-token'), { status: 404, body: 'pod does not exist' });
    assert.deepEqual(await upgrade('/exec/default/web/nope?command=id&output=1', 'admin-token'), { status: 404, body: 'container not found ("nope")' });
    assert.deepEqual(await upgrade('/portForward/default/nope', 'admin-token'), { status: 404, body: 'pod does not exist' });
    assert.equal(runtime.calls.length, 0);
  });

  it('exec without any stream, or without an upgrade: 400', async () => {
    assert.deepEqual(await upgrade('/exec/default/web/c?command=id', 'admin-token'), { status: 400, body: 'you must specify at least 1 of stdin, stdout, stderr' });
    assert.deepEqual([(await get('/exec/default/web/c?command=id&output=1', 'admin-token', 'POST')).status], [400]);
  });

  it('port-forward: the pod\'s UID to CRI PortForward; a websocket names its ports', async () => {
    runtime.calls.length = 0;
    assert.equal((await upgrade('/portForward/default/web', 'admin-token')).status, 101);
    assert.equal((await upgrade('/portForward/default/web?port=8080', 'admin-token', 'websocket')).status, 101);
    assert.deepEqual(runtime.calls, [
      { method: 'PortForward', args: ['uid-web', []] },
      { method: 'PortForward', args: ['uid-web', [8080]] },
    ]);
  });

  it('POST /run: ExecSync of cmd split on spaces, its output as the body', async () => {
    const r = await get('/run/default/web/c?cmd=echo%20hi', 'admin-token', 'POST');
    assert.deepEqual([r.status, r.body], [200, 'hi\n']);
    assert.deepEqual(runtime.calls.at(-1), { method: 'ExecSync', args: ['cid-c', ['echo', 'hi']] });
    assert.equal((await get('/run/default/web/c?cmd=id', 'admin-token', 'GET')).status, 405);
  });

  it('stats and resource metrics; an unknown path is 404', async () => {
    assert.equal((await get('/stats/summary', 'admin-token')).status, 200);
    assert.equal((await get('/metrics/resource', 'admin-token')).status, 200);
    const metrics = await get('/metrics', 'admin-token');
    assert.deepEqual([metrics.status, metrics.body.split('\n')[0]], [200, '# HELP kubelet_running_pods Number of pods that have a running pod sandbox']);
    assert.equal((await get('/metrics/cadvisor', 'admin-token')).status, 404);
    assert.equal((await get('/configz', 'admin-token')).status, 404);
  });
});
