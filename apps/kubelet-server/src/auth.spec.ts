import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { FakeClock } from '@app/clock/testing';
import { KubeletAuthenticator, KubeletAuthorizer, nodeRequestAttributes, type AuthRequest } from './auth.js';
import { FakeAccessReviewer, FakeTokenReviewer } from './testing.js';

const NODE = 'node-a';
const alice = { name: 'alice', groups: ['dev', 'system:authenticated'] };

describe('nodeRequestAttributes (path -> verb, subresources)', () => {
  const cases = [
    { name: 'GET /pods: pods, then proxy', method: 'GET', path: '/pods', verb: 'get', subresources: ['pods', 'proxy'] },
    { name: 'GET /pods/: pods, then proxy', method: 'GET', path: '/pods/', verb: 'get', subresources: ['pods', 'proxy'] },
    { name: 'GET /healthz: healthz, then proxy', method: 'GET', path: '/healthz', verb: 'get', subresources: ['healthz', 'proxy'] },
    { name: 'GET /stats/summary: stats', method: 'GET', path: '/stats/summary', verb: 'get', subresources: ['stats'] },
    { name: 'GET /metrics/resource: metrics', method: 'GET', path: '/metrics/resource', verb: 'get', subresources: ['metrics'] },
    { name: 'GET /logs/: log', method: 'GET', path: '/logs/', verb: 'get', subresources: ['log'] },
    { name: 'POST /exec/...: proxy, create', method: 'POST', path: '/exec/ns/p/c', verb: 'create', subresources: ['proxy'] },
    { name: 'GET /exec/... (websocket): proxy, get', method: 'GET', path: '/exec/ns/p/c', verb: 'get', subresources: ['proxy'] },
    { name: 'POST /attach/...: proxy', method: 'POST', path: '/attach/ns/p/c', verb: 'create', subresources: ['proxy'] },
    { name: 'POST /portForward/...: proxy', method: 'POST', path: '/portForward/ns/p', verb: 'create', subresources: ['proxy'] },
    { name: 'GET /containerLogs/...: proxy (not log)', method: 'GET', path: '/containerLogs/ns/p/c', verb: 'get', subresources: ['proxy'] },
    { name: 'POST /run/...: proxy', method: 'POST', path: '/run/ns/p/c', verb: 'create', subresources: ['proxy'] },
    { name: '/podsx is not /pods', method: 'GET', path: '/podsx', verb: 'get', subresources: ['proxy'] },
    { name: 'PUT: update', method: 'PUT', path: '/x', verb: 'update', subresources: ['proxy'] },
    { name: 'PATCH: patch', method: 'PATCH', path: '/x', verb: 'patch', subresources: ['proxy'] },
    { name: 'DELETE: delete', method: 'DELETE', path: '/x', verb: 'delete', subresources: ['proxy'] },
  ];
  for (const tc of cases) {
    it(tc.name, () => {
      const attrs = nodeRequestAttributes(alice, tc.method, tc.path, NODE);
      assert.deepEqual(attrs.map((a) => a.subresource), tc.subresources);
      for (const a of attrs) assert.deepEqual([a.verb, a.resource, a.name, a.apiVersion, a.user.name], [tc.verb, 'nodes', NODE, 'v1', 'alice']);
    });
  }
});

describe('KubeletAuthenticator', () => {
  const setup = (opts: { anonymous?: boolean; x509?: boolean } = {}) => {
    const clock = new FakeClock();
    const tokens = new FakeTokenReviewer();
    tokens.users.set('good', { name: 'bob', uid: 'u1', groups: ['team'] });
    const authn = new KubeletAuthenticator(tokens, clock, { anonymous: opts.anonymous ?? false, x509: opts.x509 ?? true });
    return { clock, tokens, authn };
  };
  const bearer = (t: string): AuthRequest => ({ headers: { authorization: `Bearer ${t}` } });

  it('a client certificate that verifies: user CN, groups O, plus system:authenticated', async () => {
    const { authn } = setup();
    const r = await authn.authenticate({ headers: {}, certificate: { authorized: true, subject: { CN: 'kube-apiserver-kubelet-client', O: ['system:masters', 'ops'] } } });
    assert.deepEqual(r, { ok: true, user: { name: 'kube-apiserver-kubelet-client', groups: ['system:masters', 'ops', 'system:authenticated'] } });
  });

  it('a certificate that does not verify against the client CA is refused, and no token saves it from being an error', async () => {
    const { authn } = setup({ anonymous: true });
    const r = await authn.authenticate({ headers: {}, certificate: { authorized: false, subject: { CN: 'mallory', O: 'system:masters' } } });
    assert.equal(r.ok, false);
  });

  it('without a client CA a certificate is not looked at', async () => {
    const { authn } = setup({ x509: false });
    const r = await authn.authenticate({ headers: {}, certificate: { authorized: true, subject: { CN: 'x' } } });
    assert.deepEqual(r, { ok: false, reason: 'no credentials' });
  });

  it('a bearer token: the TokenReview\'s user, groups plus system:authenticated', async () => {
    const { authn } = setup();
    assert.deepEqual(await authn.authenticate(bearer('good')), { ok: true, user: { name: 'bob', uid: 'u1', groups: ['team', 'system:authenticated'] } });
  });

  it('a token the apiserver does not authenticate: 401, even with anonymous on', async () => {
    const { authn } = setup({ anonymous: true });
    const r = await authn.authenticate(bearer('bad'));
    assert.deepEqual(r, { ok: false, reason: 'invalid bearer token' });
  });

  it('the review is cached 2 minutes, authenticated or not; then asked again', async () => {
    const { authn, tokens, clock } = setup();
    await authn.authenticate(bearer('good'));
    await authn.authenticate(bearer('bad'));
    await clock.step(119_000);
    await authn.authenticate(bearer('good'));
    await authn.authenticate(bearer('bad'));
    assert.deepEqual(tokens.calls, ['good', 'bad']);
    await clock.step(2000);
    tokens.users.delete('good'); // revoked
    assert.equal((await authn.authenticate(bearer('good'))).ok, false);
    assert.deepEqual(tokens.calls, ['good', 'bad', 'good']);
  });

  it('a review that fails is not cached', async () => {
    const { authn, tokens } = setup();
    tokens.failing = new Error('apiserver down');
    assert.equal((await authn.authenticate(bearer('good'))).ok, false);
    tokens.failing = undefined;
    assert.equal((await authn.authenticate(bearer('good'))).ok, true);
    assert.equal(tokens.calls.length, 2);
  });

  it('no credentials: 401 with anonymous off (the default)', async () => {
    const { authn, tokens } = setup();
    assert.deepEqual(await authn.authenticate({ headers: {} }), { ok: false, reason: 'no credentials' });
    assert.deepEqual(tokens.calls, []);
  });

  it('no credentials with anonymous on: system:anonymous in system:unauthenticated', async () => {
    const { authn } = setup({ anonymous: true });
    assert.deepEqual(await authn.authenticate({ headers: {} }), { ok: true, user: { name: 'system:anonymous', groups: ['system:unauthenticated'] } });
  });

  it('the token of a websocket subprotocol base64url.bearer.authorization.k8s.io.<token>', async () => {
    const { authn } = setup();
    const proto = `v4.channel.k8s.io, base64url.bearer.authorization.k8s.io.${Buffer.from('good').toString('base64url')}`;
    assert.equal((await authn.authenticate({ headers: { 'sec-websocket-protocol': proto } })).ok, true);
  });

  it('without an apiserver a token cannot authenticate', async () => {
    const authn = new KubeletAuthenticator(null, new FakeClock(), { anonymous: false, x509: true });
    assert.equal((await authn.authenticate(bearer('good'))).ok, false);
  });
});

describe('KubeletAuthorizer', () => {
  const setup = () => {
    const clock = new FakeClock();
    const sar = new FakeAccessReviewer();
    return { clock, sar, authz: new KubeletAuthorizer(sar, clock) };
  };
  const attrs = (method: string, path: string, user = alice) => nodeRequestAttributes(user, method, path, NODE);

  it('GET /pods with nodes/pods: allowed on the first review', async () => {
    const { sar, authz } = setup();
    sar.allowed.add('alice get pods');
    assert.deepEqual(await authz.authorize(attrs('GET', '/pods')), { allowed: true });
    assert.deepEqual(sar.calls, ['alice get pods']);
  });

  it('GET /pods with only nodes/proxy: allowed by the fallback', async () => {
    const { sar, authz } = setup();
    sar.allowed.add('alice get proxy');
    assert.deepEqual(await authz.authorize(attrs('GET', '/pods')), { allowed: true });
    assert.deepEqual(sar.calls, ['alice get pods', 'alice get proxy']);
  });

  it('GET /healthz falls back to nodes/proxy too', async () => {
    const { sar, authz } = setup();
    sar.allowed.add('alice get proxy');
    assert.deepEqual(await authz.authorize(attrs('GET', '/healthz')), { allowed: true });
  });

  it('POST /exec without nodes/proxy create: 403 with upstream\'s message', async () => {
    const { sar, authz } = setup();
    sar.allowed.add('alice get proxy');
    assert.deepEqual(await authz.authorize(attrs('POST', '/exec/ns/p/c')), { allowed: false, status: 403, message: 'Forbidden (user=alice, verb=create, resource=nodes, subresource(s)=[proxy])\n' });
  });

  it('GET /pods denied both ways: the message lists both subresources', async () => {
    const { authz } = setup();
    const r = await authz.authorize(attrs('GET', '/pods'));
    assert.deepEqual(r, { allowed: false, status: 403, message: 'Forbidden (user=alice, verb=get, resource=nodes, subresource(s)=[pods proxy])\n' });
  });

  it('allowed is cached 5 minutes, denied 30 seconds', async () => {
    const { sar, authz, clock } = setup();
    sar.allowed.add('alice get stats');
    await authz.authorize(attrs('GET', '/stats/summary'));
    await authz.authorize(attrs('POST', '/run/ns/p/c'));
    await clock.step(29_000);
    await authz.authorize(attrs('GET', '/stats/summary'));
    await authz.authorize(attrs('POST', '/run/ns/p/c'));
    assert.deepEqual(sar.calls, ['alice get stats', 'alice create proxy']);
    await clock.step(2000); // 31 s: the denial expired, the allowance not
    await authz.authorize(attrs('GET', '/stats/summary'));
    await authz.authorize(attrs('POST', '/run/ns/p/c'));
    assert.deepEqual(sar.calls, ['alice get stats', 'alice create proxy', 'alice create proxy']);
    await clock.step(270_000); // 5 min 1 s
    sar.allowed.delete('alice get stats');
    assert.equal((await authz.authorize(attrs('GET', '/stats/summary'))).allowed, false);
  });

  it('a review that fails: 500 Authorization error, not cached', async () => {
    const { sar, authz } = setup();
    sar.failing = new Error('down');
    assert.deepEqual(await authz.authorize(attrs('GET', '/stats/summary')), { allowed: false, status: 500, message: 'Authorization error (user=alice, verb=get, resource=nodes, subresource=stats)' });
    sar.failing = undefined;
    sar.allowed.add('alice get stats');
    assert.deepEqual(await authz.authorize(attrs('GET', '/stats/summary')), { allowed: true });
  });

  it('AlwaysAllow (no reviewer): any authenticated user', async () => {
    const authz = new KubeletAuthorizer(null, new FakeClock());
    assert.deepEqual(await authz.authorize(attrs('POST', '/exec/ns/p/c')), { allowed: true });
  });
});
