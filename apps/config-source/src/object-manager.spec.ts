import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { FakeClock } from '@app/clock/testing';
import { MessageTypes, type ApiObjectReplyMessage } from '@app/contracts';
import { createLogger, silentLogger } from '@app/observability';
import { ApiObjectError, WatchBasedObjectManager } from './object-manager.js';
import { TokenRequester, type IssuedToken } from './ports.js';
import { FakeObjectWatch } from './testing.js';
import { ServiceAccountTokenManager } from './token-manager.js';

const CM = { kind: 'ConfigMap' as const, namespace: 'ns', name: 'cfg' };
const CM_KEY = 'ConfigMap/ns/cfg';
const OPTIONS = { syncTimeoutMs: 5000, idleMs: 300_000 };

function setup() {
  const clock = new FakeClock(1_000_000);
  const watch = new FakeObjectWatch();
  const manager = new WatchBasedObjectManager(watch, clock, silentLogger(), OPTIONS);
  return { clock, watch, manager };
}

/** Lets a request reach its wait for the watch. */
const settle = () => new Promise((r) => setImmediate(r));

describe('WatchBasedObjectManager (watch_based_manager.go)', () => {
  it('a first request starts one watch of the object and answers from its first list', async () => {
    const { watch, manager } = setup();
    const reply = manager.get(CM);
    await settle();
    assert.deepEqual(watch.started, [CM_KEY]);
    watch.list(CM_KEY, [{ metadata: { name: 'cfg', namespace: 'ns' }, data: { a: '1' }, binaryData: { b: 'AAE=' } }]);
    assert.deepEqual(await reply, { type: MessageTypes.apiObject, kind: 'ConfigMap', namespace: 'ns', name: 'cfg', found: true, data: { a: '1' }, binaryData: { b: 'AAE=' } } satisfies ApiObjectReplyMessage);
  });

  it('a change reaches the next request from the same watch', async () => {
    const { watch, manager } = setup();
    const first = manager.get(CM);
    await settle();
    watch.list(CM_KEY, [{ metadata: { name: 'cfg' }, data: { a: '1' } }]);
    await first;
    watch.list(CM_KEY, [{ metadata: { name: 'cfg' }, data: { a: '2' } }]);
    assert.deepEqual((await manager.get(CM)).data, { a: '2' });
    assert.deepEqual(watch.started, [CM_KEY], 'one watch for both requests');
  });

  it('an object the list does not hold is not found (not an error)', async () => {
    const { watch, manager } = setup();
    const reply = manager.get({ kind: 'Secret', namespace: 'ns', name: 'gone' });
    await settle();
    watch.list('Secret/ns/gone', []);
    assert.deepEqual(await reply, { type: MessageTypes.apiObject, kind: 'Secret', namespace: 'ns', name: 'gone', found: false });
  });

  it('a secret carries its type and base64 data; a RuntimeClass its handler, without a namespace', async () => {
    const { watch, manager } = setup();
    const secret = manager.get({ kind: 'Secret', namespace: 'ns', name: 'pull' });
    const rc = manager.get({ kind: 'RuntimeClass', namespace: '', name: 'gvisor' });
    await settle();
    watch.list('Secret/ns/pull', [{ metadata: { name: 'pull' }, type: 'kubernetes.io/dockerconfigjson', data: { '.dockerconfigjson': 'e30=' } }]);
    watch.list('RuntimeClass//gvisor', [{ metadata: { name: 'gvisor' }, handler: 'runsc' }]);
    assert.deepEqual(await secret, { type: MessageTypes.apiObject, kind: 'Secret', namespace: 'ns', name: 'pull', found: true, data: { '.dockerconfigjson': 'e30=' }, secretType: 'kubernetes.io/dockerconfigjson' });
    assert.deepEqual(await rc, { type: MessageTypes.apiObject, kind: 'RuntimeClass', name: 'gvisor', found: true, handler: 'runsc' });
  });

  it('a watch that fails before its first list is an Unavailable error saying what failed, and the next request starts it afresh', async () => {
    const { watch, manager } = setup();
    const reply = manager.get(CM);
    await settle();
    watch.fail(CM_KEY, 'LIST /api/v1/namespaces/ns/configmaps: configmaps "cfg" is forbidden: no relationship found between node \'n\' and this object');
    await assert.rejects(reply, (err: unknown) => err instanceof ApiObjectError && err.code === 'Unavailable' && /^failed to sync configmap cache: .*forbidden/.test(err.message));
    const again = manager.get(CM);
    await settle();
    assert.deepEqual(watch.started, [CM_KEY, CM_KEY]);
    assert.equal(watch.running(CM_KEY), 1, 'the failed watch was stopped');
    watch.list(CM_KEY, [{ metadata: { name: 'cfg' }, data: {} }]);
    assert.equal((await again).found, true);
  });

  it('a watch that does not list within syncTimeoutMs is Unavailable', async () => {
    const { clock, manager } = setup();
    const refused = assert.rejects(manager.get(CM), (err: unknown) => err instanceof ApiObjectError && err.code === 'Unavailable' && err.message === 'failed to sync configmap cache: no list of it within 5000 ms');
    await settle();
    await clock.step(5000);
    await refused;
  });

  it('once listed, the last view is served while the apiserver is away', async () => {
    const { watch, manager } = setup();
    const first = manager.get(CM);
    await settle();
    watch.list(CM_KEY, [{ metadata: { name: 'cfg' }, data: { a: '1' } }]);
    await first;
    watch.fail(CM_KEY, 'WATCH: connection refused');
    assert.deepEqual((await manager.get(CM)).data, { a: '1' });
  });

  it('an immutable object is not watched once seen, and is still served', async () => {
    const { watch, manager } = setup();
    const first = manager.get(CM);
    await settle();
    watch.list(CM_KEY, [{ metadata: { name: 'cfg' }, data: { a: '1' }, immutable: true }]);
    await first;
    assert.equal(watch.running(CM_KEY), 0, 'the watch was stopped');
    assert.deepEqual((await manager.get(CM)).data, { a: '1' });
    assert.deepEqual(watch.started, [CM_KEY]);
  });

  it('a node that has not joined a cluster says so', async () => {
    const manager = new WatchBasedObjectManager(null, new FakeClock(0), silentLogger(), OPTIONS);
    await assert.rejects(manager.get(CM), (err: unknown) => err instanceof ApiObjectError && err.code === 'NotJoined' && err.message === 'this node has not joined a cluster (config-source has no KUBECONFIG): configmap "cfg" cannot be read from an apiserver');
  });

  it('a watch nobody asked for in idleMs is stopped; one asked for stays', async () => {
    const { clock, watch, manager } = setup();
    manager.start();
    const a = manager.get(CM);
    const b = manager.get({ kind: 'Secret', namespace: 'ns', name: 's' });
    await settle();
    watch.list(CM_KEY, [{ metadata: { name: 'cfg' } }]);
    watch.list('Secret/ns/s', []);
    await Promise.all([a, b]);
    for (let t = 0; t < 4; t++) {
      await clock.step(60_000);
      await manager.get(CM); // the pod referencing cfg syncs every minute
    }
    await clock.step(120_000);
    assert.deepEqual(manager.watched, [CM_KEY]);
    assert.equal(watch.running('Secret/ns/s'), 0);
    assert.equal(watch.running(CM_KEY), 1);
    manager.stop();
    assert.equal(watch.running(CM_KEY), 0);
  });
});

describe('no secret is ever logged', () => {
  it('the object and token managers log names only, whatever happens (debug level)', async () => {
    const lines: string[] = [];
    const logger = createLogger({ service: 'config-source', node: 'n', instance: '0' }, 'debug', { write: (line: string) => void lines.push(line) });
    const clock = new FakeClock(1_000_000);
    const watch = new FakeObjectWatch();
    const manager = new WatchBasedObjectManager(watch, clock, logger, OPTIONS);
    manager.start();
    const SECRET = Buffer.from('hunter2-very-secret').toString('base64');
    const reply = manager.get({ kind: 'Secret', namespace: 'ns', name: 'creds' });
    await settle();
    watch.list('Secret/ns/creds', [{ metadata: { name: 'creds' }, data: { password: SECRET } }]);
    assert.equal((await reply).data?.['password'], SECRET);
    watch.fail('Secret/ns/creds', 'watch ended');
    await clock.step(600_000);

    const requester = new (class extends TokenRequester {
      n = 0;
      request(): Promise<IssuedToken> {
        return ++this.n === 1 ? Promise.resolve({ token: 'eyJhbGciOi.jwt-secret-token.sig', expiresAt: clock.now() + 3_600_000 }) : Promise.reject(new Error('apiserver down'));
      }
    })();
    const tokens = new ServiceAccountTokenManager(requester, clock, logger);
    const req = { type: MessageTypes.serviceAccountTokenRequest, namespace: 'ns', serviceAccountName: 'default', podName: 'p', podUid: 'u', expirationSeconds: 3600 } as const;
    await tokens.get(req);
    await clock.step(3_000_000);
    assert.equal((await tokens.get(req)).token, 'eyJhbGciOi.jwt-secret-token.sig', 'a failed refresh keeps the valid token (and logs it failed)');
    assert.ok(lines.length >= 3, `something was logged: ${lines.length} lines`);
    for (const l of lines) {
      assert.ok(!l.includes(SECRET) && !l.includes('hunter2') && !l.includes('jwt-secret-token'), `a secret in a log line: ${l}`);
    }
  });
});
