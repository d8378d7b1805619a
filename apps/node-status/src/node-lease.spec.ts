import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { ApiError } from '@app/apiserver';
import { FakeClock } from '@app/clock/testing';
import { silentLogger } from '@app/observability';
import { NodeLeaseController, microTime } from './node-lease.js';
import { FakeKubeApi } from './testing.js';

function setup() {
  const clock = new FakeClock();
  const api = new FakeKubeApi();
  const lease = new NodeLeaseController(api.leaseApi, api.nodeApi, clock, silentLogger(), { nodeName: 'n1' });
  const stored = () => api.leases.get('kube-node-lease/n1');
  const addNode = () => api.nodes.set('n1', { metadata: { name: 'n1', uid: 'node-uid' } });
  return { clock, api, lease, stored, addNode };
}

describe('NodeLeaseController (component-helpers apimachinery/lease controller, as the kubelet runs it)', () => {
  it('creates kube-node-lease/<node> held by the node for 40 s, owned by the Node, and renews it every 10 s', async () => {
    const { clock, lease, stored, addNode } = setup();
    addNode();
    lease.start();
    await clock.step(0);
    assert.deepEqual(stored()?.spec, { holderIdentity: 'n1', leaseDurationSeconds: 40, renewTime: microTime(clock.now()) });
    assert.deepEqual(stored()?.metadata?.ownerReferences, [{ apiVersion: 'v1', kind: 'Node', name: 'n1', uid: 'node-uid' }]);
    const t0 = clock.now();
    await clock.step(9_999);
    assert.equal(stored()?.spec?.renewTime, microTime(t0));
    await clock.step(1);
    assert.equal(stored()?.spec?.renewTime, microTime(t0 + 10_000));
    await clock.step(10_000);
    assert.equal(stored()?.spec?.renewTime, microTime(t0 + 20_000));
    lease.stop();
  });

  it('renewTime is RFC 3339 with microseconds (metav1.MicroTime)', () => {
    assert.equal(microTime(Date.UTC(2026, 0, 2, 3, 4, 5, 678)), '2026-01-02T03:04:05.678000Z');
  });

  it('waits for the Node before creating the Lease (no lease without its owner)', async () => {
    const { clock, api, lease, stored, addNode } = setup();
    lease.start();
    await clock.step(0);
    assert.equal(stored(), undefined);
    assert.ok(!api.calls.includes('createLease'));
    addNode();
    await clock.step(10_000);
    assert.equal(stored()?.metadata?.ownerReferences?.[0]?.uid, 'node-uid');
    lease.stop();
  });

  it('the Node registered after a sync that found none: the Lease is made at once, not at the next interval', async () => {
    const { clock, lease, stored, addNode } = setup();
    lease.start();
    await clock.step(100);
    assert.equal(stored(), undefined);
    addNode();
    lease.nodeRegistered();
    await clock.step(0);
    assert.equal(stored()?.spec?.renewTime, microTime(clock.now()));
    const t = clock.now();
    lease.nodeRegistered(); // a Lease held: nothing to hurry
    await clock.step(9_999);
    assert.equal(stored()?.spec?.renewTime, microTime(t));
    await clock.step(1);
    assert.equal(stored()?.spec?.renewTime, microTime(t + 10_000), 'then every 10 s from there');
    lease.stop();
  });

  it('an existing Lease without an owner gets one at its next renewal', async () => {
    const { clock, api, lease, stored, addNode } = setup();
    api.leases.set('kube-node-lease/n1', { metadata: { name: 'n1', namespace: 'kube-node-lease', resourceVersion: '7' }, spec: { holderIdentity: 'n1' } });
    addNode();
    lease.start();
    await clock.step(0);
    assert.equal(stored()?.metadata?.ownerReferences?.[0]?.kind, 'Node');
    assert.equal(stored()?.spec?.renewTime, microTime(clock.now()));
    lease.stop();
  });

  it('a conflict: the lease is read again and updated', async () => {
    const { clock, api, lease, stored, addNode } = setup();
    addNode();
    lease.start();
    await clock.step(0);
    api.touchLease('kube-node-lease', 'n1');
    await clock.step(10_000);
    assert.equal(stored()?.spec?.renewTime, microTime(clock.now()));
    assert.deepEqual(api.calls.slice(-3), ['updateLease', 'getLease', 'updateLease']);
    lease.stop();
  });

  it('the apiserver away: backs off 200 ms, 400 ms, ... up to 7 s, and renews once it answers', async () => {
    const { clock, api, lease, stored, addNode } = setup();
    addNode();
    lease.start();
    await clock.step(0);
    const down = () => new ApiError(0, 'ConnectionFailed', 'connection refused');
    api.fail['updateLease'] = Array.from({ length: 5 }, down);
    api.fail['getLease'] = Array.from({ length: 7 }, down);
    await clock.step(10_000);
    const gets = () => api.calls.filter((c) => c === 'getLease').length;
    const base = gets();
    // The 7 failed gets are 200, 400, 800, 1600, 3200, 6400 and 7000 ms apart.
    for (const wait of [200, 400, 800, 1600, 3200, 6400]) await clock.step(wait);
    assert.equal(gets(), base + 6);
    await clock.step(6999);
    assert.equal(gets(), base + 6, 'the back-off is capped at 7 s');
    await clock.step(1);
    assert.equal(stored()?.spec?.renewTime, microTime(clock.now()), 'renewed once the apiserver answers');
    lease.stop();
  });

  it('stop(): no more calls', async () => {
    const { clock, api, lease, addNode } = setup();
    addNode();
    lease.start();
    await clock.step(0);
    lease.stop();
    const n = api.calls.length;
    await clock.step(60_000);
    assert.equal(api.calls.length, n);
  });
});
