import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { FakeClock } from '@app/clock/testing';
import { MessageTypes, type ApiObjectReplyMessage } from '@app/contracts';
import { silentLogger } from '@app/observability';
import { ApiObjectError, WatchBasedObjectManager } from './object-manager.js';
import { FakeObjectWatch } from './testing.js';

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
