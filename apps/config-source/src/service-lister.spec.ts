import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { FakeClock } from '@app/clock/testing';
import type { Service } from '@app/contracts';
import { silentLogger } from '@app/observability';
import { ApiObjectError } from './object-manager.js';
import { ServiceLister } from './service-lister.js';
import { FakeServiceWatch } from './testing.js';

const svc = (namespace: string, name: string, clusterIP: string): Service => ({
  metadata: { namespace, name, uid: `${name}-uid`, resourceVersion: '7', labels: { a: 'b' } },
  spec: { clusterIP, clusterIPs: [clusterIP], selector: { app: name }, ports: [{ name: 'http', port: 80, targetPort: 8080, protocol: 'TCP' }] },
});
const settle = () => new Promise((r) => setImmediate(r));

function setup() {
  const clock = new FakeClock(1_000_000);
  const watch = new FakeServiceWatch();
  const lister = new ServiceLister(watch, clock, silentLogger(), 5000);
  lister.start();
  return { clock, watch, lister };
}

describe('ServiceLister (the kubelet\'s serviceLister)', () => {
  it('one watch of every service from the start; a pod\'s namespace gets its services and default\'s, trimmed to what the variables need', async () => {
    const { watch, lister } = setup();
    assert.equal(watch.started, 1);
    watch.list([svc('default', 'kubernetes', '10.96.0.1'), svc('ns', 'fooservice', '10.96.0.11'), svc('other', 'bar', '10.96.0.12')]);
    const reply = await lister.list('ns');
    assert.deepEqual(reply.services, [
      { metadata: { name: 'kubernetes', namespace: 'default' }, spec: { clusterIP: '10.96.0.1', ports: [{ port: 80, name: 'http', protocol: 'TCP' }] } },
      { metadata: { name: 'fooservice', namespace: 'ns' }, spec: { clusterIP: '10.96.0.11', ports: [{ port: 80, name: 'http', protocol: 'TCP' }] } },
    ]);
  });

  it('a request before the first list waits for it', async () => {
    const { watch, lister } = setup();
    const reply = lister.list('ns');
    await settle();
    watch.list([svc('ns', 'fooservice', '10.96.0.11')]);
    assert.equal((await reply).services.length, 1);
  });

  it('never listed within the sync timeout: Unavailable, saying what failed', async () => {
    const { clock, watch, lister } = setup();
    const reply = lister.list('ns');
    await settle();
    watch.fail('services is forbidden: User "system:node:n1" cannot list resource "services"');
    await assert.rejects(reply, (err: unknown) => err instanceof ApiObjectError && err.code === 'Unavailable' && /failed to sync service cache: services is forbidden/.test(err.message));
    const late = assert.rejects(lister.list('ns'), /failed to sync service cache/);
    await settle();
    await clock.step(5000);
    await late;
  });

  it('once listed, the last view stands while the apiserver is away', async () => {
    const { watch, lister } = setup();
    watch.list([svc('ns', 'fooservice', '10.96.0.11')]);
    watch.fail('connection refused');
    assert.equal((await lister.list('ns')).services.length, 1);
  });

  it('a node that has not joined a cluster: NotJoined', async () => {
    const lister = new ServiceLister(null, new FakeClock(0), silentLogger());
    lister.start();
    await assert.rejects(lister.list('ns'), (err: unknown) => err instanceof ApiObjectError && err.code === 'NotJoined');
  });
});
