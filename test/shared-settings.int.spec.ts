/**
 * POD_WORKER_SHARDS must be the same on the sync loop (which sends a pod's
 * work to shard shardOf(uid, N)) and on every pod worker (which own shards
 * 0..N-1): the first service to start records it in the `leases` bucket, and
 * a service started with another value exits 1 naming both values and the
 * fix, against a real nats-server.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { connect, type NatsConnection } from '@nats-io/transport-node';
import { Kvm } from '@nats-io/kv';
import type { ServiceName } from '@app/service';
import { freePort, runServiceToExit, startNats, startService, type NatsServer, type ServiceProcess } from '../deploy/local/stack.js';

const NODE = 'settings-node';

describe('POD_WORKER_SHARDS is agreed on by every service of a node', { timeout: 120_000 }, () => {
  let nats: NatsServer;
  let nc: NatsConnection;
  const running: ServiceProcess[] = [];
  const env = (shards: string) => ({ NODE_NAME: NODE, NATS_URL: nats.url, LOG_LEVEL: 'warn', SHUTDOWN_GRACE_PERIOD: '5s', POD_WORKER_SHARDS: shards });

  /** Runs a service that should refuse to start; its exit code and stderr. */
  async function refused(service: ServiceName, shards: string): Promise<{ code: number | null; stderr: string }> {
    return runServiceToExit(service, { ...env(shards), ...nats.credentials.env(service), PORT: String(await freePort()), INSTANCE_ID: 'refused' });
  }

  before(async () => {
    nats = await startNats();
    nc = await connect({ servers: nats.url, name: 'settings-test', ...nats.auth() });
  });

  after(async () => {
    await Promise.all(running.map((s) => s.stop(5000)));
    await nc?.close();
    await nats?.stop();
  });

  it('the first service records its value in the leases bucket', async () => {
    running.push(await startService('pod-worker', env('4'), { port: await freePort(), instance: 'pw0', timeoutMs: 60_000 }));
    const leases = await new Kvm(nc).open('leases');
    const record = (await leases.get(`${NODE}.setting.POD_WORKER_SHARDS`))?.json<{ value: string; recordedBy: string }>();
    assert.equal(record?.value, '4');
    assert.equal(record?.recordedBy, `pod-worker@${NODE}#pw0`);
  });

  it('a sync loop with the same value starts', async () => {
    const sp = await startService('sync-loop', env('4'), { port: await freePort(), instance: 'sl0', timeoutMs: 60_000 });
    running.push(sp);
    // Ready at start as a standby, it then wins the lease and is not ready while it restores from KV
    // (a moment): it started once it is ready as the leader.
    let last = '';
    for (const until = Date.now() + 30_000; Date.now() < until; await new Promise((r) => setTimeout(r, 100))) {
      const res = await fetch(sp.readyUrl);
      last = `${res.status} ${await res.text()}`;
      if (res.status === 200 && last.includes('"detail":"leader (')) break;
    }
    assert.match(last, /^200 .*"detail":"leader \(/, last);
  });

  const cases: { name: string; service: ServiceName }[] = [
    { name: 'a sync loop', service: 'sync-loop' },
    { name: 'another pod-worker replica', service: 'pod-worker' },
  ];
  for (const tc of cases) {
    it(`${tc.name} with another value exits 1 naming both values and the fix`, async () => {
      const { code, stderr } = await refused(tc.service, '8');
      assert.equal(code, 1, stderr);
      assert.match(stderr, new RegExp(`^${tc.service}: POD_WORKER_SHARDS is 8 here, but POD_WORKER_SHARDS=4 is recorded for node "${NODE}"`, 'm'));
      assert.match(stderr, /Start this service with POD_WORKER_SHARDS=4/);
      assert.match(stderr, new RegExp(`nats kv del leases ${NODE}\\.setting\\.POD_WORKER_SHARDS`));
    });
  }

  it('the services that agreed keep running', async () => {
    for (const sp of running) assert.equal((await fetch(sp.readyUrl)).status, 200, sp.service);
  });
});
