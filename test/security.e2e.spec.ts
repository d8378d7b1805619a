/**
 * No way in for a local unprivileged user, and each service only where its
 * NATS user may go (issue 12; docs/adr/0012): on a real nats-server with the
 * generated users, and the real containerd behind cri-gateway.
 *  - a client without credentials (or with wrong ones) cannot connect;
 *  - a service's user cannot publish or subscribe outside its permissions,
 *    and the real server agrees with the table (permits) case by case;
 *  - a service started with a user that lacks what it needs exits 1 naming
 *    the user and the subject;
 *  - `nobody` cannot reach the CRI over HTTP (not on the TCP port, and the
 *    unix socket has the CRI socket's owner and mode), cannot read the NATS
 *    credentials, and cannot get pod specs off loopback without the token,
 *    nor on loopback at all (only root and the service's own user are
 *    served there: the client socket's owner is read from the kernel).
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { chmodSync, mkdtempSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { connect, errors, type NatsConnection } from '@nats-io/transport-node';
import { Subjects } from '@app/contracts';
import { DEFAULT_CRI_TIMEOUTS, NatsCriClient } from '@app/cri';
import { KubeletLabels } from '@app/kube';
import { inboxPrefix, permits, type NatsUser } from '@app/nats';
import { freePort, runServiceToExit, serviceEntry, startNats, startService, type NatsServer, type ServiceProcess } from '../deploy/local/stack.js';
import { failOnLeftovers } from './support/node-stack.js';
import { runtimeAddress } from './support/runtime.js';
import { unixFetch } from './support/unix-http.js';

const NODE = 'sec-e2e';
const UID = '5b7c1d2e-0000-4000-8000-00000000a11c';
const enc = new TextEncoder();

/** A privileged, host-network, host-PID sandbox: what an attacker would ask the runtime for. */
const PRIVILEGED_SANDBOX = {
  config: {
    metadata: { name: 'pwn', uid: UID, namespace: 'default', attempt: 0 },
    labels: { [KubeletLabels.node]: NODE },
    linux: { securityContext: { privileged: true, namespaceOptions: { network: 'NODE', pid: 'NODE', ipc: 'NODE' } } },
  },
};

/** Runs `node -e script` as `nobody`; its exit code and output. */
function asNobody(script: string): { code: number | null; out: string } {
  const r = spawnSync('runuser', ['-u', 'nobody', '--', process.execPath, '-e', script], { encoding: 'utf8', timeout: 20_000, cwd: '/' });
  return { code: r.status, out: `${r.stdout}${r.stderr}` };
}

/** Whether the server lets `user` do `op` on `subject`: a violation reported on its connection within a flush, or not. */
async function serverAllows(nats: NatsServer, user: NatsUser, op: 'publish' | 'subscribe', subject: string): Promise<boolean> {
  const nc = await connect({ servers: nats.url, ...nats.auth(user), inboxPrefix: inboxPrefix(user) });
  const refused: string[] = [];
  const watching = (async () => {
    for await (const s of nc.status()) if (s.type === 'error' && s.error instanceof errors.PermissionViolationError) refused.push(s.error.subject);
  })();
  try {
    if (op === 'publish') nc.publish(subject, enc.encode('{}'));
    else nc.subscribe(subject, { callback: () => undefined });
    await nc.flush(); // the -ERR comes before the PONG
    await new Promise((r) => setImmediate(r)); // and reaches the status stream on a later tick
    return !refused.includes(subject);
  } finally {
    await nc.close();
    await watching;
  }
}

describe('security: NATS users, the CRI over HTTP and pod specs', { timeout: 240_000 }, () => {
  let nats: NatsServer;
  let admin: NatsConnection;
  let gateway: ServiceProcess;
  const criDir = mkdtempSync(join(tmpdir(), 'ks-sec-'));
  const criSocket = join(criDir, 'cri-http.sock');

  before(async () => {
    nats = await startNats();
    admin = await connect({ servers: nats.url, name: 'security-test', ...nats.auth() });
    chmodSync(criDir, 0o755); // anyone may look for the socket: only its own mode keeps them out
    gateway = await startService(
      'cri-gateway',
      { NODE_NAME: NODE, NATS_URL: nats.url, LOG_LEVEL: 'warn', CONTAINER_RUNTIME_ENDPOINT: `unix://${runtimeAddress()}`, CRI_HTTP_SOCKET: criSocket },
      { port: await freePort(), instance: 'sec', timeoutMs: 60_000 },
    );
  });

  after(async () => {
    try {
      await failOnLeftovers(new NatsCriClient(admin, NODE, 'security-test'), NODE);
    } finally {
      await gateway?.stop(10_000);
      await admin?.close();
      // The violations this test provoked on purpose are the point of it, not a failure.
      nats?.violations.splice(0);
      await nats?.stop();
      rmSync(criDir, { recursive: true, force: true });
    }
  });

  it('a client without credentials, or with a wrong password, cannot connect', async () => {
    await assert.rejects(connect({ servers: nats.url, reconnect: false }), (err: unknown) => err instanceof errors.AuthorizationError);
    await assert.rejects(connect({ servers: nats.url, reconnect: false, user: 'prober', pass: 'guess' }), (err: unknown) => err instanceof errors.AuthorizationError);
    await assert.rejects(connect({ servers: nats.url, reconnect: false, user: 'admin', pass: nats.credentials.password('prober') }), (err: unknown) => err instanceof errors.AuthorizationError);
  });

  it("the prober's user can neither hear CRI calls nor dispatch work, and what it hears is refused with the subject named", async () => {
    const prober = await connect({ servers: nats.url, ...nats.auth('prober'), inboxPrefix: inboxPrefix('prober') });
    const refused: string[] = [];
    const watching = (async () => {
      for await (const s of prober.status()) if (s.type === 'error' && s.error instanceof errors.PermissionViolationError) refused.push(`${s.error.operation} ${s.error.subject}`);
    })();
    let heard = 0;
    prober.subscribe('cri.>', { callback: (err) => void (err ? undefined : heard++) });
    let dispatched = 0;
    admin.subscribe(`kubelet.${NODE}.work.>`, { callback: () => void dispatched++ });
    await admin.flush();
    prober.publish(Subjects.work.build(NODE, 1, UID), enc.encode('{"type":"kubelet.v1.update_pod_options"}'));
    await prober.flush();
    // A real CRI call goes by (answered by cri-gateway): the prober's subscription must not see it.
    const cri = new NatsCriClient(admin, NODE, 'security-test');
    assert.equal((await cri.runtime('Version', { version: 'v1' })).runtimeName, 'containerd');
    await prober.flush();
    await admin.flush();
    await new Promise((r) => setImmediate(r));
    assert.equal(heard, 0, 'the prober heard a CRI call');
    assert.equal(dispatched, 0, 'work published by the prober was delivered');
    assert.deepEqual(refused.sort(), ['publish kubelet.sec-e2e.work.1.5b7c1d2e-0000-4000-8000-00000000a11c', 'subscription cri.>']);
    await prober.close();
    await watching;
  });

  describe('the real server agrees with the permission table', () => {
    const cases: { user: NatsUser; op: 'publish' | 'subscribe'; subject: string }[] = [
      { user: 'prober', op: 'subscribe', subject: Subjects.criRuntime.wildcard(NODE) },
      { user: 'cri-gateway', op: 'subscribe', subject: Subjects.criRuntime.wildcard(NODE) },
      { user: 'pod-worker', op: 'publish', subject: Subjects.work.build(NODE, 2, UID) },
      { user: 'sync-loop', op: 'publish', subject: Subjects.work.build(NODE, 2, UID) },
      { user: 'sync-loop', op: 'publish', subject: Subjects.workDone.build(NODE, UID) },
      { user: 'pod-worker', op: 'subscribe', subject: Subjects.work.wildcard(NODE, 2) },
      { user: 'pleg', op: 'publish', subject: `$KV.pods.${NODE}.pod.${UID}` },
      { user: 'sync-loop', op: 'publish', subject: `$KV.pods.${NODE}.pod.${UID}` },
      { user: 'pod-worker', op: 'publish', subject: `$KV.leases.${NODE}.pod-worker-shard.1` },
      { user: 'pod-worker', op: 'publish', subject: `$KV.leases.${NODE}.leader.sync-loop` },
      { user: 'sync-loop', op: 'publish', subject: '$JS.API.STREAM.DELETE.KV_pods' },
      { user: 'status-manager', op: 'subscribe', subject: `${inboxPrefix('sync-loop')}.>` },
      { user: 'config-source', op: 'publish', subject: Subjects.criRuntime.build(NODE, 'RunPodSandbox') },
      { user: 'admin', op: 'subscribe', subject: 'cri.>' },
    ];
    for (const tc of cases) {
      const want = permits(tc.user, tc.op, tc.subject);
      it(`${tc.user} ${want ? 'may' : 'may not'} ${tc.op} ${tc.subject}`, async () => {
        assert.equal(await serverAllows(nats, tc.user, tc.op, tc.subject), want);
      });
    }
  });

  it('a service with a wrong password, or none, exits 1 saying which', async () => {
    const wrong = join(criDir, 'wrong.password');
    writeFileSync(wrong, 'not-it\n', { mode: 0o600 });
    const cases = [
      { name: 'wrong password', env: { NATS_USER: 'prober', NATS_PASSWORD_FILE: wrong }, want: /NATS refused the credentials of user "prober" \(Authorization Violation\)/ },
      { name: 'no password', env: { NATS_PASSWORD_FILE: '' }, want: /NATS requires credentials and none were given/ },
    ];
    for (const tc of cases) {
      const r = spawnSync(process.execPath, [serviceEntry('prober')], {
        env: { ...process.env, NODE_NAME: NODE, NATS_URL: nats.url, PORT: String(await freePort()), LOG_LEVEL: 'warn', ...tc.env },
        encoding: 'utf8',
        timeout: 30_000,
      });
      assert.equal(r.status, 1, `${tc.name}: ${r.stderr}`);
      assert.match(r.stderr, tc.want, tc.name);
    }
  });

  it('a service whose user lacks a permission exits 1 at start, naming the user and the subject', async () => {
    // The prober, started as config-source: config-source may neither use JetStream nor hear the probeManager's calls.
    const { code, stderr } = await runServiceToExit('prober', { NODE_NAME: NODE, NATS_URL: nats.url, ...nats.credentials.env('config-source'), PORT: String(await freePort()), INSTANCE_ID: 'lacks', LOG_LEVEL: 'warn' });
    assert.equal(code, 1, stderr);
    // The first refusal names it: the prober opens its KV buckets (config-source reads only the `pods` bucket,
    // never `probe-results`) before it subscribes to the probeManager's calls.
    assert.match(stderr, /NATS user "config-source" may not (publish to "\$JS\.API\.(INFO|STREAM\.INFO\.KV_probe-results)"|subscribe to "kubelet\.sec-e2e\.prober\.\*")/);
  });

  it('nobody cannot read the NATS credentials', () => {
    for (const file of [nats.credentials.passwordFile('admin'), nats.credentials.passwordFile('cri-gateway'), nats.credentials.configFile]) {
      assert.equal(statSync(file).mode & 0o077, 0, `${file} is readable by others`);
      const r = asNobody(`require('fs').readFileSync(${JSON.stringify(file)}, 'utf8'); console.log('read it')`);
      assert.notEqual(r.code, 0, `nobody read ${file}`);
      assert.match(r.out, /EACCES/);
    }
  });

  it('nobody cannot reach the CRI over HTTP: the TCP port refuses it, the unix socket has the CRI socket\'s mode', async () => {
    const tcp = asNobody(
      `fetch('http://127.0.0.1:${gateway.port}/runtime/RunPodSandbox', { method: 'POST', body: ${JSON.stringify(JSON.stringify(PRIVILEGED_SANDBOX))} })` +
        `.then(async (r) => { console.log(r.status, await r.text()); process.exit(r.ok ? 0 : 3); }, (e) => { console.log(e.message); process.exit(4); })`,
    );
    assert.equal(tcp.code, 3, tcp.out);
    assert.match(tcp.out, /^403 .*PermissionDenied/);
    // Even root, who may use the CRI socket, is sent there: the CRI is never on the TCP port.
    const asRoot = await fetch(`http://127.0.0.1:${gateway.port}/runtime/RunPodSandbox`, { method: 'POST', body: JSON.stringify(PRIVILEGED_SANDBOX) });
    assert.equal(asRoot.status, 403);
    assert.match(await asRoot.text(), /PermissionDenied.*CRI_HTTP_SOCKET/);

    const cri = statSync(runtimeAddress());
    const sock = statSync(criSocket);
    assert.ok(sock.isSocket());
    assert.deepEqual([sock.mode & 0o777, sock.uid, sock.gid], [cri.mode & 0o777, cri.uid, cri.gid], 'the HTTP socket has the CRI socket\'s mode and owner');
    const viaSocket = asNobody(
      `const req = require('http').request({ socketPath: ${JSON.stringify(criSocket)}, path: '/runtime/RunPodSandbox', method: 'POST' }, (r) => { console.log(r.statusCode); process.exit(0); });` +
        `req.on('error', (e) => { console.log(e.code); process.exit(4); }); req.end(${JSON.stringify(JSON.stringify(PRIVILEGED_SANDBOX))});`,
    );
    assert.equal(viaSocket.code, 4, viaSocket.out);
    assert.match(viaSocket.out, /EACCES/);

    // Nothing was created; root, who may use the CRI socket, may use this one too.
    const sandboxes = await new NatsCriClient(admin, NODE, 'security-test').runtime('ListPodSandbox', { filter: { labelSelector: { [KubeletLabels.node]: NODE } } });
    assert.deepEqual(sandboxes.items, []);
    const root = await unixFetch(criSocket)('/runtime/Version', { method: 'POST', body: '{}' });
    assert.equal(root.status, 200);
  });

  it('after a nats-server restart the services are back with their own users', async () => {
    const t0 = Date.now();
    await nats.restart({ downMs: 500 });
    // A short deadline per attempt: a request sent while this client itself is still reconnecting is lost (at most once).
    const cri = new NatsCriClient(admin, NODE, 'security-test', { ...DEFAULT_CRI_TIMEOUTS, listMs: 1000 });
    let last: unknown;
    for (;;) {
      try {
        assert.equal((await cri.runtime('Version', { version: 'v1' })).runtimeName, 'containerd');
        break;
      } catch (err) {
        last = err;
        if (Date.now() - t0 > 20_000) throw new Error(`cri-gateway did not answer within 20s of the restart: ${(last as Error).message}`);
        await new Promise((r) => setTimeout(r, 200));
      }
    }
    process.stdout.write(`# cri-gateway answered again ${Date.now() - t0}ms after the nats-server restart began\n`);
    assert.equal((await fetch(`http://127.0.0.1:${gateway.port}/readyz`)).status, 200);
  });

  it('pod specs are not served off loopback without the token', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'ks-sec-token-'));
    const tokenFile = join(dir, 'token');
    writeFileSync(tokenFile, 'sekrit-token\n', { mode: 0o600 });
    const env = { NODE_NAME: NODE, NATS_URL: nats.url, LOG_LEVEL: 'warn', HOST: '0.0.0.0' };
    const open = await startService('status-manager', env, { port: await freePort(), instance: 'open', timeoutMs: 60_000 });
    const closed = await startService('status-manager', { ...env, HTTP_TOKEN_FILE: tokenFile }, { port: await freePort(), instance: 'token', timeoutMs: 60_000 });
    try {
      const get = (sp: ServiceProcess, path: string, token?: string) =>
        fetch(`http://127.0.0.1:${sp.port}${path}`, token ? { headers: { authorization: `Bearer ${token}` } } : {}).then((r) => r.status);
      assert.equal(await get(open, '/pods'), 403, 'HOST=0.0.0.0 without a token file serves /pods');
      assert.equal(await get(open, '/readyz'), 200);
      assert.equal(await get(closed, '/pods'), 401);
      assert.equal(await get(closed, '/pods', 'wrong'), 401);
      assert.equal(await get(closed, '/pods', 'sekrit-token'), 200);
      assert.equal(await get(closed, '/metrics'), 200);
    } finally {
      await open.stop(10_000);
      await closed.stop(10_000);
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('on loopback, nobody gets neither pod specs nor container logs; root gets them', async () => {
    const sm = await startService('status-manager', { NODE_NAME: NODE, NATS_URL: nats.url, LOG_LEVEL: 'warn' }, { port: await freePort(), instance: 'loopback', timeoutMs: 60_000 });
    try {
      for (const path of ['/pods', '/containerLogs/default/web/c', '/stats/summary', '/console', '/console/events']) {
        const r = asNobody(
          `fetch('http://127.0.0.1:${sm.port}${path}').then(async (r) => { console.log(r.status, await r.text()); process.exit(0); }, (e) => { console.log(e.message); process.exit(4); })`,
        );
        assert.equal(r.code, 0, r.out);
        assert.match(r.out, /^403 .*PermissionDenied.*uid 65534/, `${path} as nobody: ${r.out}`);
      }
      const health = asNobody(`fetch('http://127.0.0.1:${sm.port}/readyz').then((r) => { console.log(r.status); process.exit(0); }, () => process.exit(4))`);
      assert.match(health.out, /^200/, 'health checks stay open to everyone');
      assert.equal((await fetch(`http://127.0.0.1:${sm.port}/pods`)).status, 200, 'root is served /pods on loopback');
    } finally {
      await sm.stop(10_000);
    }
  });
});
