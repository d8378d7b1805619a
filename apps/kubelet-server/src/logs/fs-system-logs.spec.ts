import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { FakeClock } from '@app/clock/testing';
import { silentLogger } from '@app/observability';
import { KubeletAuthenticator, KubeletAuthorizer } from '../auth.js';
import { KubeletServer } from '../kubelet-server.js';
import { FakeAccessReviewer, FakeContainerLogServer, FakeKubeletPods, FakeNodeStats, FakeStreamingRuntime, FakeTokenReviewer, FakeUpgradeProxy } from '../testing.js';
import { contentTypeOf, directoryListing, FsSystemLogServer } from './fs-system-logs.js';

describe('directoryListing (http.FileServer dirList)', () => {
  it('lists entries by name, directories with a trailing /, names escaped', () => {
    assert.equal(
      directoryListing([
        { name: 'syslog', directory: false },
        { name: 'pods', directory: true },
        { name: 'a<b>.log', directory: false },
      ]),
      '<!doctype html>\n<meta name="viewport" content="width=device-width">\n<pre>\n<a href="a%3Cb%3E.log">a&lt;b&gt;.log</a>\n<a href="pods/">pods/</a>\n<a href="syslog">syslog</a>\n</pre>\n',
    );
  });
  it('sniffs text and binary as serveContent would for log files', () => {
    assert.equal(contentTypeOf(Buffer.from('hello\n')), 'text/plain; charset=utf-8');
    assert.equal(contentTypeOf(Buffer.from([0x1f, 0x8b, 0x00, 0x01])), 'application/octet-stream');
  });
});

/** `/logs/` through the server's auth, on a directory of the test's own. */
describe('GET /logs/ on the kubelet API server', () => {
  const root = mkdtempSync(join(tmpdir(), 'ks-syslogs-'));
  const tokens = new FakeTokenReviewer();
  const sar = new FakeAccessReviewer();
  let server: Server;
  let base: string;

  before(async () => {
    mkdirSync(join(root, 'pods', 'default_web_uid', 'c'), { recursive: true });
    writeFileSync(join(root, 'pods', 'default_web_uid', 'c', '0.log'), '2026-12-02T00:00:00Z stdout F hello\n');
    mkdirSync(join(root, 'containers'));
    symlinkSync(join(root, 'pods', 'default_web_uid', 'c', '0.log'), join(root, 'containers', 'web_default_c-abcdef.log'));
    writeFileSync(join(root, 'syslog'), 'boot\n');
    tokens.users.set('admin-token', { name: 'admin', groups: ['system:masters'] });
    tokens.users.set('viewer-token', { name: 'viewer', groups: [] });
    tokens.users.set('logger-token', { name: 'logger', groups: [] });
    sar.allowed.add('viewer get proxy');
    sar.allowed.add('logger get log');
    const clock = new FakeClock();
    const kubelet = new KubeletServer(
      {
        authenticator: new KubeletAuthenticator(tokens, clock, { anonymous: false, x509: false }),
        authorizer: new KubeletAuthorizer(sar, clock),
        pods: new FakeKubeletPods(),
        runtime: new FakeStreamingRuntime(),
        logs: new FakeContainerLogServer(),
        stats: new FakeNodeStats(),
        proxy: new FakeUpgradeProxy(),
        logger: silentLogger(),
        systemLogs: new FsSystemLogServer(root),
      },
      'node-a',
    );
    server = createServer((req, res) => void kubelet.handle(req, res));
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  after(async () => {
    await new Promise<void>((r) => server.close(() => r()));
    rmSync(root, { recursive: true, force: true });
  });

  const get = async (path: string, token = 'logger-token') => {
    const res = await fetch(base + path, { headers: { authorization: `Bearer ${token}` }, redirect: 'manual' });
    return { status: res.status, body: await res.text(), type: res.headers.get('content-type'), location: res.headers.get('location') };
  };

  it('needs nodes/log: a user allowed only nodes/proxy is refused, naming the subresource', async () => {
    const r = await get('/logs/', 'viewer-token');
    assert.equal(r.status, 403);
    assert.match(r.body, /subresource\(s\)=\[log\]/);
  });

  it('lists the log directory, and a file\'s content through a symlink as /var/log/containers\' are', async () => {
    const list = await get('/logs/');
    assert.equal(list.status, 200);
    assert.equal(list.type, 'text/html; charset=utf-8');
    assert.match(list.body, /<a href="containers\/">containers\/<\/a>\n<a href="pods\/">pods\/<\/a>\n<a href="syslog">syslog<\/a>\n/);
    const linked = await get('/logs/containers/web_default_c-abcdef.log');
    assert.deepEqual([linked.status, linked.body, linked.type], [200, '2026-12-02T00:00:00Z stdout F hello\n', 'text/plain; charset=utf-8']);
    assert.equal((await get('/logs/syslog', 'admin-token')).body, 'boot\n');
  });

  it('a directory without its / is redirected to it; a file with one back to the file', async () => {
    assert.deepEqual(((r) => [r.status, r.location])(await get('/logs/containers')), [301, 'containers/']);
    assert.deepEqual(((r) => [r.status, r.location])(await get('/logs/syslog/')), [301, '../syslog']);
  });

  it('nothing outside the directory, and /logs without its / is not found, as upstream\'s StripPrefix', async () => {
    // A `..` the URL parser resolves leaves /logs/ (another path, another subresource); an encoded one is refused.
    assert.equal((await get('/logs/%2e%2e/%2e%2e/etc/passwd')).status, 403);
    assert.equal((await get('/logs/..%2f..%2fetc%2fpasswd')).status, 400);
    assert.equal((await get('/logs/pods/..%2f..%2fsyslog')).status, 400);
    assert.equal((await get('/logs/nope.log')).status, 404);
    assert.equal((await get('/logs')).status, 404);
  });
});
