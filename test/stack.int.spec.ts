/**
 * The seven services as real processes against a real nats-server: each one
 * becomes ready, labels its metrics, shows its connection name in NATS
 * monitoring, answers over NATS, survives bad input, refuses bad config with
 * the variable named, and exits cleanly on SIGTERM.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { jetstreamManager } from '@nats-io/jetstream';
import { connect, type NatsConnection } from '@nats-io/transport-node';
import { sampleMonitoring } from '@app/nats';
import { SERVICE_NAMES, type ServiceName } from '@app/service';
import { Subjects } from '@app/contracts';
import { exited, freePort, runServiceToExit, startNats, startService, type NatsServer, type ServiceProcess } from '../deploy/local/stack.js';
import { runtimeAddress } from './support/runtime.js';

const NODE = 'int-node';
const enc = new TextEncoder();
const dec = new TextDecoder();

describe('the seven services on a real nats-server', { timeout: 120_000 }, () => {
  let nats: NatsServer;
  let nc: NatsConnection;
  const services = new Map<ServiceName, ServiceProcess>();

  before(async () => {
    nats = await startNats();
    nc = await connect({ servers: nats.url, name: 'int-test', ...nats.auth() });
    // cri-gateway on the tests' containerd (KS_RUNTIME_ADDRESS), whichever that is.
    const runtime = { CONTAINER_RUNTIME_ENDPOINT: `unix://${runtimeAddress()}` };
    const started = await Promise.allSettled(
      SERVICE_NAMES.map(async (service) =>
        startService(service, { NODE_NAME: NODE, NATS_URL: nats.url, LOG_LEVEL: 'warn', SHUTDOWN_GRACE_PERIOD: '5s', ...(service === 'cri-gateway' ? runtime : {}) }, { port: await freePort(), instance: 'i0', timeoutMs: 60_000 }),
      ),
    );
    // Every one that started is stopped by after(), even when another did not start.
    for (const r of started) if (r.status === 'fulfilled') services.set(r.value.service, r.value);
    const failed = started.find((r) => r.status === 'rejected');
    if (failed) throw failed.reason;
  });

  after(async () => {
    await Promise.all([...services.values()].map((s) => s.stop(5000)));
    await nc?.close();
    await nats?.stop();
  });

  it('every /readyz is 200 with NATS connected and subscriptions bound', async () => {
    for (const [service, sp] of services) {
      const res = await fetch(sp.readyUrl);
      assert.equal(res.status, 200, service);
      const body = (await res.json()) as { ok: boolean; checks: Record<string, { ok: boolean }> };
      assert.equal(body.ok, true, service);
      assert.equal(body.checks['nats']?.ok, true, `${service} nats`);
      assert.equal(body.checks['subscriptions']?.ok, true, `${service} subscriptions`);
      assert.equal((await fetch(`http://127.0.0.1:${sp.port}/healthz`)).status, 200, `${service} healthz`);
    }
  });

  it('every /metrics carries its service and node labels', async () => {
    for (const [service, sp] of services) {
      const text = await (await fetch(`http://127.0.0.1:${sp.port}/metrics`)).text();
      assert.match(text, new RegExp(`process_cpu_seconds_total\\{service="${service}",node="${NODE}"\\} `), service);
    }
  });

  it('NATS monitoring (connz, asked over NATS) lists each connection by name, with its subscriptions', async () => {
    const { connz } = await sampleMonitoring(nc);
    for (const service of SERVICE_NAMES) {
      const conn = connz.connections.find((c) => c.name === `${service}@${NODE}#i0`);
      assert.ok(conn, `no connection named ${service}@${NODE}#i0 in ${connz.connections.map((c) => c.name).join(', ')}`);
      const subjects = (conn.subscriptions_list_detail ?? []).map((s) => s.subject);
      assert.ok(subjects.includes(Subjects.serviceInfo.build(NODE, service)), `${service} subscribes to ${subjects.join(', ')}`);
    }
  });

  it('the KV buckets of the design exist', async () => {
    const streams: string[] = [];
    for await (const name of (await jetstreamManager(nc)).streams.names()) streams.push(name);
    for (const bucket of ['pods', 'pod-cache', 'pod-status', 'workers', 'probe-results', 'leases']) assert.ok(streams.includes(`KV_${bucket}`), `KV_${bucket} in ${streams.join(', ')}`);
  });

  it('each service answers who it is over NATS', async () => {
    for (const [service, sp] of services) {
      const reply = await nc.request(Subjects.serviceInfo.build(NODE, service), enc.encode('{}'), { timeout: 5000 });
      const info = JSON.parse(dec.decode(reply.data)) as { type: string; connectionName: string; pid: number; httpPort: number };
      assert.equal(info.type, 'kubelet.v1.service_info');
      assert.equal(info.connectionName, `${service}@${NODE}#i0`);
      assert.equal(info.pid, sp.process.pid);
      assert.equal(info.httpPort, sp.port);
    }
  });

  it('a request that is not JSON gets an InvalidArgument error reply, and the service keeps serving', async () => {
    const subject = Subjects.serviceInfo.build(NODE, 'prober');
    const reply = await nc.request(subject, enc.encode('{not json'), { timeout: 5000 });
    const body = JSON.parse(dec.decode(reply.data)) as { error?: { code: string; description: string } };
    assert.equal(body.error?.code, 'InvalidArgument');
    assert.match(body.error?.description ?? '', /not JSON/);
    const again = await nc.request(subject, enc.encode('{}'), { timeout: 5000 });
    assert.equal((JSON.parse(dec.decode(again.data)) as { service: string }).service, 'prober');
  });

  it('bad configuration: exit 1 with the variable named and why', async () => {
    const { code, stderr } = await runServiceToExit('pleg', { NODE_NAME: NODE, NATS_URL: nats.url, PORT: 'not-a-port', LOG_LEVEL: 'loud' });
    assert.equal(code, 1);
    assert.match(stderr, /PORT must be a TCP port between 1 and 65535, got "not-a-port"/);
    assert.match(stderr, /LOG_LEVEL must be one of debug, info, warn, error, got "loud"/);
  });

  it('SIGTERM: stops taking work, leaves NATS and exits 0 within the grace period', async () => {
    const sp = await startService('prober', { NODE_NAME: NODE, NATS_URL: nats.url, LOG_LEVEL: 'warn', SHUTDOWN_GRACE_PERIOD: '5s' }, { port: await freePort(), instance: 'term' });
    const t0 = performance.now();
    sp.process.kill('SIGTERM');
    await exited(sp.process);
    const ms = performance.now() - t0;
    assert.equal(sp.process.exitCode, 0);
    assert.ok(ms < 5000, `took ${ms}ms`);
    const { connz } = await sampleMonitoring(nc);
    assert.ok(!connz.connections.some((c) => c.name === `prober@${NODE}#term`), 'connection still open after exit');
  });
});
